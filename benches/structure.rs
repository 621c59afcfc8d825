//! Speed of the structure signals on large texts: `check_balance` must stay linear (10 MB
//! in well under a second), `edit_balance` around an apply, and `range` on a large file.
//!
//! Run: `cargo bench --bench structure`.

use apply_patch::structure::{check_balance, edit_balance, range, Kind, Lang};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const TEN_MB: usize = 10 * 1000 * 1000;

/// `chunk` repeated until the text is at least `size` bytes.
fn grow(chunk: &str, size: usize) -> String {
    let mut text = String::with_capacity(size + chunk.len());
    while text.len() < size {
        text.push_str(chunk);
    }
    text
}

const RUST: &str = include_str!("../src/structure/c_like/mod.rs");

const JS: &str = r#"// A module with templates, regexes and JSX-free code.
export function render(items, opts = {}) {
  const re = /[(]"\/{/g;
  const html = items.map((it) => `<li class="${it.cls}">${it.name.replace(re, '')} (${it.n / 2})</li>`);
  if (opts.wrap) { return `<ul>${html.join('')}</ul>`; }
  return html; /* done { */
}
"#;

const PYTHON: &str = r#"class Parser:
    """Parse things: def not_code( and quotes ' "."""

    def parse(self, text, *, strict=False):
        # a comment with ( and '
        out = [t for t in text.split() if t]
        return f"{len(out)!r:>8} {{items}} {self.name}"
"#;

const HTML: &str = r#"<div class="card">
  <!-- a comment with <b> -->
  <img src="a.png" alt="a > b"><br>
  <p>Text with ( and ' and a <a href="/x?a=1&b=2">link</a>.</p>
  <script>if (a < b) { x = "</p>"; }</script>
</div>
"#;

fn balance(c: &mut Criterion) {
    let mut group = c.benchmark_group("check_balance_10MB");
    group.sample_size(10);
    for (name, chunk, lang) in [
        ("rust", RUST, Lang::Rust),
        ("javascript", JS, Lang::JavaScript),
        ("python", PYTHON, Lang::Python),
        ("html", HTML, Lang::Html),
    ] {
        let text = grow(chunk, TEN_MB);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), &text, |b, text| {
            b.iter(|| check_balance(text, lang));
        });
    }
    group.finish();
}

fn around_an_apply(c: &mut Criterion) {
    let before = grow(RUST, 200_000);
    let after = before.replacen("fn punct(&mut self) {", "fn punct(&mut self) {\n", 1);
    c.bench_function("edit_balance_200KB", |b| {
        b.iter(|| edit_balance("src/big.rs", before.as_bytes(), after.as_bytes()));
    });
    let big = grow(RUST, TEN_MB);
    let line = big.lines().count() / 2;
    let mut group = c.benchmark_group("range_10MB");
    group.sample_size(10);
    group.bench_function("rust_function", |b| {
        b.iter(|| range(&big, line, Some(Kind::Function), Lang::Rust));
    });
    group.finish();
}

criterion_group!(benches, balance, around_an_apply);
criterion_main!(benches);
