//! Which language a file is written in, from its extension (or a name given by the user),
//! and which lexer family reads it.
//!
//! Stage: structure signals. Pure; never reads a file — the path is only looked at.

use std::fmt;
use std::path::Path;

/// A language the structure signals know. `Unknown` is a real value: `range` falls back to
/// braces for it (and says so), `check_balance` does not check it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Lang {
    Rust,
    C,
    Cpp,
    Java,
    CSharp,
    Go,
    JavaScript,
    TypeScript,
    Jsx,
    Tsx,
    Css,
    Scss,
    Json,
    Python,
    Shell,
    Html,
    Xml,
    Vue,
    Yaml,
    Unknown,
}

/// The lexer that reads a language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// Braces, `//` and `/* */` comments, C-style strings (with per-language extras).
    CLike,
    Python,
    Shell,
    Markup,
    Yaml,
    None,
}

/// Every known language with its name and extensions, in `--lang` listing order.
const TABLE: &[(Lang, &str, &[&str])] = &[
    (Lang::Rust, "rust", &["rs"]),
    (Lang::C, "c", &["c", "h"]),
    (
        Lang::Cpp,
        "cpp",
        &[
            "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp", "inl",
        ],
    ),
    (Lang::Java, "java", &["java"]),
    (Lang::CSharp, "csharp", &["cs"]),
    (Lang::Go, "go", &["go"]),
    (Lang::JavaScript, "javascript", &["js", "mjs", "cjs"]),
    (Lang::TypeScript, "typescript", &["ts", "mts", "cts"]),
    (Lang::Jsx, "jsx", &["jsx"]),
    (Lang::Tsx, "tsx", &["tsx"]),
    (Lang::Css, "css", &["css"]),
    (Lang::Scss, "scss", &["scss", "less"]),
    (Lang::Json, "json", &["json", "jsonc", "json5"]),
    (Lang::Python, "python", &["py", "pyi", "pyw"]),
    (Lang::Shell, "shell", &["sh", "bash", "zsh", "ksh"]),
    (Lang::Html, "html", &["html", "htm", "xhtml"]),
    (
        Lang::Xml,
        "xml",
        &[
            "xml", "svg", "xsd", "xsl", "xslt", "plist", "csproj", "props",
        ],
    ),
    (Lang::Vue, "vue", &["vue"]),
    (Lang::Yaml, "yaml", &["yaml", "yml"]),
];

/// Aliases accepted by [`Lang::from_name`] besides the canonical names.
const ALIASES: &[(&str, Lang)] = &[
    ("rs", Lang::Rust),
    ("c++", Lang::Cpp),
    ("cs", Lang::CSharp),
    ("c#", Lang::CSharp),
    ("js", Lang::JavaScript),
    ("ts", Lang::TypeScript),
    ("py", Lang::Python),
    ("sh", Lang::Shell),
    ("bash", Lang::Shell),
    ("yml", Lang::Yaml),
    ("less", Lang::Scss),
];

impl Lang {
    /// The language of `path`, from its extension (case-insensitive); `Unknown` when the
    /// extension is not known. A few extension-less names are known too (`Makefile` is not:
    /// tabs and `$(…)` are not braces).
    ///
    /// ```
    /// use apply_patch::structure::Lang;
    /// assert_eq!(Lang::from_path("src/lib.rs"), Lang::Rust);
    /// assert_eq!(Lang::from_path("web/App.TSX"), Lang::Tsx);
    /// assert_eq!(Lang::from_path("notes.txt"), Lang::Unknown);
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Lang {
        let path = path.as_ref();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if matches!(name, ".bashrc" | ".profile" | ".zshrc" | ".bash_profile") {
            return Lang::Shell;
        }
        let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
            return Lang::Unknown;
        };
        let ext = ext.to_ascii_lowercase();
        TABLE
            .iter()
            .find(|(_, _, exts)| exts.contains(&ext.as_str()))
            .map_or(Lang::Unknown, |(lang, _, _)| *lang)
    }

    /// The language called `name` (`--lang`): a canonical name (see [`Lang::names`]), a
    /// common alias, or an extension. `None` for anything else.
    pub fn from_name(name: &str) -> Option<Lang> {
        let name = name.trim().to_ascii_lowercase();
        if let Some((lang, _, _)) = TABLE.iter().find(|(_, n, _)| *n == name) {
            return Some(*lang);
        }
        if let Some((_, lang)) = ALIASES.iter().find(|(a, _)| *a == name) {
            return Some(*lang);
        }
        TABLE
            .iter()
            .find(|(_, _, exts)| exts.contains(&name.as_str()))
            .map(|(lang, _, _)| *lang)
    }

    /// The canonical names of every known language, for help texts and errors.
    pub fn names() -> Vec<&'static str> {
        TABLE.iter().map(|(_, n, _)| *n).collect()
    }

    /// The canonical name (`"rust"`, `"unknown"`).
    pub fn name(self) -> &'static str {
        TABLE
            .iter()
            .find(|(l, _, _)| *l == self)
            .map_or("unknown", |(_, n, _)| n)
    }

    pub(crate) fn family(self) -> Family {
        match self {
            Lang::Rust
            | Lang::C
            | Lang::Cpp
            | Lang::Java
            | Lang::CSharp
            | Lang::Go
            | Lang::JavaScript
            | Lang::TypeScript
            | Lang::Jsx
            | Lang::Tsx
            | Lang::Css
            | Lang::Scss
            | Lang::Json => Family::CLike,
            Lang::Python => Family::Python,
            Lang::Shell => Family::Shell,
            Lang::Html | Lang::Xml | Lang::Vue => Family::Markup,
            Lang::Yaml => Family::Yaml,
            Lang::Unknown => Family::None,
        }
    }

    /// True where JSX may appear: `.jsx`, `.tsx`, and plain JavaScript (where `<` cannot
    /// start an expression otherwise; TypeScript's `<T>x` casts rule `.ts` out).
    pub(crate) fn has_jsx(self) -> bool {
        matches!(self, Lang::JavaScript | Lang::Jsx | Lang::Tsx)
    }

    /// True for the JavaScript family (regular expressions, template literals).
    pub(crate) fn is_js(self) -> bool {
        matches!(
            self,
            Lang::JavaScript | Lang::TypeScript | Lang::Jsx | Lang::Tsx
        )
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_and_names_agree() {
        for (lang, name, exts) in TABLE {
            assert_eq!(Lang::from_name(name), Some(*lang));
            for ext in *exts {
                assert_eq!(Lang::from_path(format!("a/b.{ext}")), *lang, "{ext}");
            }
        }
        assert_eq!(Lang::from_name("C#"), Some(Lang::CSharp));
        assert_eq!(Lang::from_name("klingon"), None);
        assert_eq!(Lang::from_path("Makefile"), Lang::Unknown);
        assert_eq!(Lang::from_path(".bashrc"), Lang::Shell);
        assert_eq!(Lang::Unknown.name(), "unknown");
    }
}
