//! Stage: locate — putting one file's placements in order and refusing overlaps (SPEC §5):
//! hunks may share context lines but not deleted lines; insertions at one point keep the
//! patch's order.
//!
//! Pure. Shared context is resolved by shortening one placement's run of kept lines, never
//! by changing what is written.

use super::{LocateError, Piece, Placement};

/// Sort placements by start (insertions at a point before a hunk starting there, then patch
/// order), resolve shared context, and refuse real overlaps.
pub(crate) fn arrange(mut ps: Vec<Placement>) -> Result<Vec<Placement>, LocateError> {
    let order = |p: &Placement| (p.start, p.old_len > 0, p.hunk);
    ps.sort_by_key(order);
    let mut last: Option<usize> = None;
    for k in 0..ps.len() {
        if ps[k].already_applied {
            continue;
        }
        if let Some(j) = last {
            let (before, after) = ps.split_at_mut(k);
            let (prev, next) = (&mut before[j], &mut after[0]);
            let prev_end = prev.start + prev.old_len;
            if next.start < prev_end && !trim_tail(prev, next.start) && !trim_head(next, prev_end) {
                return Err(overlap_error(prev, next));
            }
        }
        last = Some(k);
    }
    ps.sort_by_key(order);
    Ok(ps)
}

/// Add `new` to `accepted` (placed, not already-applied placements that [`arrange`] accepts
/// together, untrimmed, sorted by arrangement order) when [`arrange`] would accept them all with `new`; else the refusal
/// `arrange` would give. Only the run of placements chained to `new` by overlaps is arranged
/// again: a placement that starts at or after the end of the placement before it enters the
/// arrangement unchanged, so nothing before it can change what happens from it on.
pub(crate) fn insert_arranged(
    accepted: &mut Vec<Placement>,
    new: Placement,
) -> Result<(), LocateError> {
    // `arrange` neither checks nor changes an already-applied placement: keep none.
    if new.already_applied {
        return Ok(());
    }
    let order = |p: &Placement| (p.start, p.old_len > 0, p.hunk);
    let key = order(&new);
    let pos = accepted.partition_point(|p| order(p) < key);
    accepted.insert(pos, new);
    // Does list[k] enter the arrangement untouched (starting at or after the end of the one
    // before it, `skip` aside)?
    let fresh = |list: &[Placement], k: usize, skip: Option<usize>| {
        let before = match k.checked_sub(1) {
            Some(j) if Some(j) == skip => j.checked_sub(1),
            j => j,
        };
        before.is_none_or(|j| list[k].start >= list[j].start + list[j].old_len)
    };
    let mut lo = pos;
    while lo > 0 && !fresh(accepted, lo, None) {
        lo -= 1;
    }
    // From `hi` on, the arrangement with `new` and the one without it (which was accepted)
    // run the same from the same state.
    let mut hi = pos + 1;
    while hi < accepted.len() && !(fresh(accepted, hi, None) && fresh(accepted, hi, Some(pos))) {
        hi += 1;
    }
    if let Err(e) = arrange(accepted[lo..hi].to_vec()) {
        accepted.remove(pos);
        return Err(e);
    }
    Ok(())
}

/// Drop `p`'s trailing kept lines from `cut` on, if they are all kept lines.
fn trim_tail(p: &mut Placement, cut: usize) -> bool {
    let end = p.start + p.old_len;
    if cut < p.start {
        return false;
    }
    let count = end - cut;
    let Some(from) = p.pieces.len().checked_sub(count) else {
        return false;
    };
    let kept = p.pieces[from..]
        .iter()
        .zip(cut..end)
        .all(|(piece, i)| *piece == Piece::Keep(i));
    if kept {
        p.pieces.truncate(from);
        p.old_len -= count;
    }
    kept
}

/// Drop `p`'s leading kept lines before `cut`, if they are all kept lines.
fn trim_head(p: &mut Placement, cut: usize) -> bool {
    let end = p.start + p.old_len;
    if cut > end {
        return false;
    }
    let count = cut - p.start;
    let kept = p.pieces.len() >= count
        && p.pieces[..count]
            .iter()
            .zip(p.start..cut)
            .all(|(piece, i)| *piece == Piece::Keep(i));
    if kept {
        p.pieces.drain(..count);
        p.start = cut;
        p.old_len -= count;
    }
    kept
}

fn overlap_error(a: &Placement, b: &Placement) -> LocateError {
    let (first, second) = if a.hunk < b.hunk { (a, b) } else { (b, a) };
    let from = b.start.max(a.start) + 1;
    let to = (a.start + a.old_len).min(b.start + b.old_len.max(1));
    let lines = if to <= from {
        format!("line {from}")
    } else {
        format!("lines {from}-{to}")
    };
    LocateError::OverlappingHunks {
        hunk: second.hunk,
        message: format!(
            "overlaps hunk {} at {lines}: hunks may share context lines, but a line one of \
             them deletes or rewrites cannot be part of another",
            first.hunk + 1
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::Level;

    fn p(hunk: usize, start: usize, old_len: usize, pieces: Vec<Piece>) -> Placement {
        Placement {
            hunk,
            start,
            old_len,
            level: Level::Exact,
            offset: None,
            already_applied: false,
            fuzz: crate::locate::Fuzz::default(),
            pieces,
            final_newline: None,
        }
    }

    fn ins() -> Piece {
        Piece::Insert {
            text: b"x".to_vec(),
            replaces: None,
        }
    }

    #[test]
    fn shared_context_is_trimmed() {
        let a = p(0, 0, 3, vec![ins(), Piece::Keep(1), Piece::Keep(2)]);
        let b = p(1, 1, 3, vec![Piece::Keep(1), Piece::Keep(2), ins()]);
        let got = arrange(vec![b, a]).expect("shared context only");
        assert_eq!((got[0].start, got[0].old_len), (0, 1));
        assert_eq!((got[1].start, got[1].old_len), (1, 3));
    }

    #[test]
    fn shared_deleted_line_is_refused() {
        let a = p(0, 0, 2, vec![Piece::Keep(0)]);
        let b = p(1, 1, 2, vec![Piece::Keep(2)]);
        let err = arrange(vec![a, b]).expect_err("line 2 deleted by hunk 1");
        assert!(matches!(err, LocateError::OverlappingHunks { hunk: 1, .. }));
    }

    #[test]
    fn insertions_at_one_point_keep_patch_order() {
        let got = arrange(vec![
            p(2, 1, 1, vec![Piece::Keep(1)]),
            p(1, 1, 0, vec![ins()]),
            p(0, 1, 0, vec![ins()]),
        ])
        .expect("no overlap");
        assert_eq!(got.iter().map(|p| p.hunk).collect::<Vec<_>>(), [0, 1, 2]);
    }
}
