//! Lexer for HTML, XML and Vue: records tags (void and self-closing ones as empty), skips
//! comments, CDATA, doctypes and processing instructions, reads quoted attributes, and hands
//! `<script>` and `<style>` bodies to the brace lexer (their brackets are then matched too).
//! Text between tags is blanked: prose may hold any bracket.
//!
//! Stage: structure signals. Pure and linear; it does not match tags (the matcher does) and
//! does not build a tree.

use super::c_like::{self, find};
use super::lang::Lang;
use super::scan::{RawProblem, Scan, Tag, TagKind};

/// HTML elements that never have content or an end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen", "command",
];

/// HTML elements whose end tag may be omitted: the parent's end tag (or the end of the file)
/// closes them.
const OPTIONAL_END: &[&str] = &[
    "li", "dt", "dd", "p", "rt", "rp", "optgroup", "option", "tr", "td", "th", "thead", "tbody",
    "tfoot", "colgroup", "caption", "html", "head", "body",
];

fn html_like(lang: Lang) -> bool {
    matches!(lang, Lang::Html | Lang::Vue)
}

fn in_list(list: &[&str], name: &[u8]) -> bool {
    list.iter().any(|v| v.as_bytes().eq_ignore_ascii_case(name))
}

/// A void element of HTML (and Vue templates): `<br>` needs no end tag.
pub(crate) fn is_void(name: &[u8], lang: Lang) -> bool {
    html_like(lang) && in_list(VOID, name)
}

/// An HTML element whose end tag may be omitted.
pub(crate) fn optional_end(name: &[u8], lang: Lang) -> bool {
    lang == Lang::Html && in_list(OPTIONAL_END, name)
}

/// Does opening `next` end an open `open` whose end tag was omitted (`<li>` after `<li>`,
/// `<td>` after `<th>`)?
pub(crate) fn closes_sibling(open: &[u8], next: &[u8]) -> bool {
    const GROUPS: &[&[&str]] = &[
        &["li"],
        &["p"],
        &["dt", "dd"],
        &["td", "th"],
        &["tr"],
        &["option"],
        &["optgroup"],
        &["rt", "rp"],
        &["thead", "tbody", "tfoot"],
    ];
    GROUPS.iter().any(|g| in_list(g, open) && in_list(g, next))
}

/// Tag names are case-insensitive in HTML and Vue templates, exact in XML and JSX.
pub(crate) fn same_name(a: &[u8], b: &[u8], lang: Lang) -> bool {
    if html_like(lang) {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// Lex a markup text.
pub(crate) fn lex(text: &[u8], lang: Lang) -> Scan {
    let code_lang = if html_like(lang) {
        Lang::JavaScript
    } else {
        lang
    };
    let mut scan = Scan::blank_of(text, code_lang);
    let mut i = 0;
    while !scan.stopped() {
        let Some(p) = text[i..].iter().position(|&b| b == b'<') else {
            break;
        };
        let lt = i + p;
        let rest = &text[lt..];
        i = if rest.starts_with(b"<!--") {
            skip_to(text, lt, 4, b"-->", "<!--", &mut scan)
        } else if rest.starts_with(b"<![CDATA[") {
            skip_to(text, lt, 9, b"]]>", "<![CDATA[", &mut scan)
        } else if rest.starts_with(b"<?") {
            skip_to(text, lt, 2, b"?>", "<?", &mut scan)
        } else if rest.starts_with(b"<!") {
            skip_to(text, lt, 2, b">", "<!", &mut scan)
        } else if rest.starts_with(b"</") {
            close_tag(text, lt, &mut scan)
        } else if rest
            .get(1)
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        {
            open_tag(text, lt, lang, &mut scan)
        } else {
            lt + 1
        };
    }
    scan
}

/// Skip a construct opened by `open` (of `skip` bytes) at `start`, up to and including
/// `close`; an unclosed one is a problem.
fn skip_to(
    text: &[u8],
    start: usize,
    skip: usize,
    close: &[u8],
    open: &str,
    scan: &mut Scan,
) -> usize {
    match find(text, start + skip, close) {
        Some(end) => end + close.len(),
        None => {
            scan.fail(RawProblem::unclosed(open, start, text.len(), "end of file"));
            text.len()
        }
    }
}

fn name_end(text: &[u8], from: usize) -> usize {
    from + text[from..]
        .iter()
        .take_while(|&&b| {
            !b.is_ascii_whitespace() && !matches!(b, b'>' | b'/' | b'=' | b'"' | b'\'')
        })
        .count()
}

fn close_tag(text: &[u8], start: usize, scan: &mut Scan) -> usize {
    let mut from = start + 2;
    while text.get(from).is_some_and(|b| b.is_ascii_whitespace()) {
        from += 1;
    }
    let name = (from, name_end(text, from));
    let end = text[name.1..]
        .iter()
        .position(|&b| b == b'>')
        .map_or(text.len(), |g| name.1 + g + 1);
    scan.tags.push(Tag {
        kind: TagKind::Close,
        start,
        end,
        name,
    });
    end
}

/// The attributes of a `<script>`/`<style>` that decide how its body is read.
#[derive(Default)]
struct BodyAttrs {
    script_type: Option<String>,
    lang: Option<String>,
}

/// An open tag from its `<`; returns where lexing goes on (after the body of a `<script>`
/// or `<style>`).
fn open_tag(text: &[u8], start: usize, lang: Lang, scan: &mut Scan) -> usize {
    let name = (start + 1, name_end(text, start + 1));
    let mut attrs = BodyAttrs::default();
    let Some((end, empty)) = tag_head(text, name.1, &mut attrs, scan) else {
        let open = format!("<{}", String::from_utf8_lossy(&text[name.0..name.1]));
        scan.fail(RawProblem::unclosed(
            &open,
            start,
            text.len(),
            "end of file",
        ));
        return text.len();
    };
    let name_bytes = &text[name.0..name.1];
    let kind = if empty || is_void(name_bytes, lang) {
        TagKind::Empty
    } else {
        TagKind::Open
    };
    scan.tags.push(Tag {
        kind,
        start,
        end,
        name,
    });
    if kind == TagKind::Empty || !html_like(lang) {
        return end;
    }
    let raw = ["script", "style", "textarea", "title"]
        .iter()
        .find(|r| r.as_bytes().eq_ignore_ascii_case(name_bytes));
    let Some(raw) = raw else {
        return end;
    };
    let body_end = find_close(text, end, raw.as_bytes());
    let code = match *raw {
        "script" => script_lang(&attrs),
        "style" => Some(match attrs.lang.as_deref() {
            Some("scss" | "less" | "sass") => Lang::Scss,
            _ => Lang::Css,
        }),
        _ => None,
    };
    if let Some(code) = code {
        c_like::lex_region(text, end, body_end, code, scan);
    }
    body_end
}

/// The language of a `<script>` body, or `None` when it is not JavaScript (a template, JSON
/// data…): such a body is not checked.
fn script_lang(attrs: &BodyAttrs) -> Option<Lang> {
    if let Some(l) = attrs.lang.as_deref() {
        return match l {
            "ts" | "typescript" => Some(Lang::TypeScript),
            "tsx" => Some(Lang::Tsx),
            "jsx" => Some(Lang::Jsx),
            _ => Some(Lang::JavaScript),
        };
    }
    match attrs.script_type.as_deref() {
        None | Some("" | "module" | "text/javascript" | "application/javascript") => {
            Some(Lang::JavaScript)
        }
        _ => None,
    }
}

/// Offset of `</name` (any case) at or after `from`, or the end of the text.
fn find_close(text: &[u8], from: usize, name: &[u8]) -> usize {
    let mut i = from;
    while let Some(p) = find(text, i, b"</") {
        let after = p + 2;
        if text.len() >= after + name.len()
            && text[after..after + name.len()].eq_ignore_ascii_case(name)
        {
            return p;
        }
        i = after;
    }
    text.len()
}

/// Attributes up to `>` or `/>`: `(offset after the tag, self-closing)`, or `None` when the
/// text ends first (or a quoted value never closes, which is then the problem).
fn tag_head(
    text: &[u8],
    mut i: usize,
    attrs: &mut BodyAttrs,
    scan: &mut Scan,
) -> Option<(usize, bool)> {
    loop {
        while text.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        match (text.get(i)?, text.get(i + 1)) {
            (b'>', _) => return Some((i + 1, false)),
            (b'/', Some(b'>')) => return Some((i + 2, true)),
            (b'/', _) => i += 1,
            _ => {
                let attr = (i, name_end(text, i).max(i + 1));
                i = attr.1;
                while text.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
                    i += 1;
                }
                if text.get(i) != Some(&b'=') {
                    continue;
                }
                i += 1;
                while text.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
                    i += 1;
                }
                let (value, next) = attr_value(text, i, scan)?;
                let key = text[attr.0..attr.1].to_ascii_lowercase();
                let value = String::from_utf8_lossy(&text[value.0..value.1]).to_ascii_lowercase();
                match key.as_slice() {
                    b"type" => attrs.script_type = Some(value),
                    b"lang" => attrs.lang = Some(value),
                    _ => {}
                }
                i = next;
            }
        }
    }
}

/// A quoted or unquoted attribute value at `i`: its byte range and where lexing goes on.
fn attr_value(text: &[u8], i: usize, scan: &mut Scan) -> Option<((usize, usize), usize)> {
    match text.get(i)? {
        q @ (b'"' | b'\'') => match text[i + 1..].iter().position(|b| b == q) {
            Some(n) => Some(((i + 1, i + 1 + n), i + n + 2)),
            None => {
                let open = char::from(*q).to_string();
                scan.fail(RawProblem::unclosed(&open, i, text.len(), "end of file"));
                None
            }
        },
        _ => {
            let end = i + text[i..]
                .iter()
                .take_while(|&&b| !b.is_ascii_whitespace() && b != b'>')
                .count();
            Some(((i, end), end))
        }
    }
}
