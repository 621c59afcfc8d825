//! Benchmarks of the locator and splicer on a synthetic workload made in-process (a code-like
//! file and a git-style diff with a hunk every ~100 lines, like `gen_synth.py` at 1/10 scale):
//! exact hints, every hint 37 lines off, no hints at all (agent hunks: every search is
//! file-wide), and a file whose lines gained trailing blanks (every hunk at level 2).
//!
//! With `APPLY_PATCH_SYNTH_DIR` pointing at the output of `gen_synth.py`, the full
//! 1,000,000-line workload (`big.txt` + `big.diff` / `big.shift37.diff`) is measured too.
//! Run with `cargo bench --bench locate`.

use std::hint::black_box;

use apply_patch::locate::{locate_hunks, LocateOptions};
use apply_patch::splice::splice;
use apply_patch::text::Text;
use apply_patch::{Format, Hunk, Line, LineKind};
use criterion::{criterion_group, criterion_main, Criterion};

const WORDS: [&str; 12] = [
    "alpha", "beta", "gamma", "delta", "buf", "len", "idx", "ctx", "cfg", "err", "val", "key",
];

/// A deterministic code-like file: blank and `}` lines repeat, windows of 7 lines do not.
fn synth_file(lines: usize) -> Vec<String> {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut word = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        WORDS[(seed % WORDS.len() as u64) as usize]
    };
    (0..lines)
        .map(|i| match i % 10 {
            0 => String::new(),
            9 => "}".to_string(),
            1 => format!("fn item_{i:07}({}: usize) -> Result<(), Error> {{", word()),
            _ => format!(
                "    let {}_{i} = {}.{}({});",
                word(),
                word(),
                word(),
                i % 97
            ),
        })
        .collect()
}

/// Hunks replacing one line every `spacing` lines, 3 lines of context, hints `shift` off.
fn synth_hunks(file: &[String], spacing: usize, shift: usize, hints: bool) -> Vec<Hunk<'static>> {
    let mut hunks = Vec::new();
    let mut at = 55;
    while at + 4 < file.len() {
        let mut lines = Vec::new();
        for (i, text) in file.iter().enumerate().take(at + 4).skip(at - 3) {
            let kind = if i == at {
                LineKind::Delete
            } else {
                LineKind::Context
            };
            lines.push(Line::new(kind, text.as_bytes().to_vec()));
            if i == at {
                let new = format!("{text} // edited");
                lines.push(Line::new(LineKind::Insert, new.into_bytes()));
            }
        }
        hunks.push(Hunk {
            old_start: hints.then_some(at - 3 + 1 + shift),
            old_count: hints.then_some(7),
            lines,
            ..Hunk::default()
        });
        at += spacing;
    }
    hunks
}

fn run(bytes: &[u8], hunks: &[Hunk<'_>], format: Format) -> usize {
    let text = Text::parse(bytes);
    let lines = text.contents();
    let placed =
        locate_hunks(lines, hunks, format, &LocateOptions::default()).expect("the hunks place");
    splice(&text, &placed).len()
}

fn synthetic(c: &mut Criterion) {
    let file = synth_file(100_000);
    let bytes: Vec<u8> = file
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    let padded: Vec<u8> = file
        .iter()
        .flat_map(|l| format!("{l}  \n").into_bytes())
        .collect();
    let exact = synth_hunks(&file, 100, 0, true);
    let shifted = synth_hunks(&file, 100, 37, true);
    let bare = synth_hunks(&file, 100, 0, false);
    let mut group = c.benchmark_group("locate_100k_lines_1k_hunks");
    group.sample_size(20);
    group.bench_function("exact_hints", |b| {
        b.iter(|| run(black_box(&bytes), &exact, Format::Unified))
    });
    group.bench_function("hints_37_off", |b| {
        b.iter(|| run(black_box(&bytes), &shifted, Format::Unified))
    });
    group.bench_function("no_hints", |b| {
        b.iter(|| run(black_box(&bytes), &bare, Format::Agent))
    });
    group.bench_function("trailing_whitespace_level", |b| {
        b.iter(|| run(black_box(&padded), &exact, Format::Unified))
    });
    group.finish();
}

/// A minimal reader of `gen_synth.py`'s one-file git diff (hunk headers and body lines).
fn read_diff(diff: &[u8]) -> Vec<Hunk<'_>> {
    let mut hunks: Vec<Hunk<'_>> = Vec::new();
    for raw in diff.split(|&b| b == b'\n') {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if let Some(header) = line.strip_prefix(b"@@ -") {
            let header = String::from_utf8_lossy(header);
            let old = header.split(' ').next().unwrap_or("1");
            let (start, count) = old.split_once(',').unwrap_or((old, "1"));
            hunks.push(Hunk {
                old_start: start.parse().ok(),
                old_count: count.parse().ok(),
                ..Hunk::default()
            });
            continue;
        }
        let (Some(hunk), Some((&first, text))) = (hunks.last_mut(), line.split_first()) else {
            continue;
        };
        let kind = match first {
            b' ' => LineKind::Context,
            b'-' => LineKind::Delete,
            b'+' => LineKind::Insert,
            _ => continue,
        };
        hunk.lines.push(Line::new(kind, text));
    }
    hunks
}

fn full_scale(c: &mut Criterion) {
    let Some(dir) = std::env::var_os("APPLY_PATCH_SYNTH_DIR") else {
        eprintln!("APPLY_PATCH_SYNTH_DIR not set: skipping the 1,000,000-line workload");
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let read = |name: &str| std::fs::read(dir.join(name)).expect("gen_synth.py output");
    let big = read("big.txt");
    let mut group = c.benchmark_group("locate_1m_lines_10k_hunks");
    group.sample_size(10);
    for name in ["big.diff", "big.shift37.diff"] {
        let diff = read(name);
        let hunks = read_diff(&diff);
        group.bench_function(name, |b| {
            b.iter(|| run(black_box(&big), &hunks, Format::Unified))
        });
    }
    group.finish();
}

criterion_group!(benches, synthetic, full_scale);
criterion_main!(benches);
