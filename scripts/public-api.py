#!/usr/bin/env python3
"""The library's public API, one line per item, from rustdoc's JSON output (issue 25 item 6):
every change to the surface shows in review as a change of snapshots/public-api.txt.

One doc build of the library with its default features: the stable toolchain's rustdoc with
RUSTC_BOOTSTRAP=1 and `-Z unstable-options --output-format json`, in target/public-api/ (the
first run checks the dependencies there, a few minutes; later runs about 25 s). The crate's own test-only features
(`internals`, `failpoints`) are off, as for any user of the crate.

Each public item is listed once, at its canonical path (where it is defined, when that is
public; else the shortest public path); every other public path to it is a `pub use` line.
A struct lists its public fields, an enum its variants with their fields, a type its inherent
methods and associated constants and the traits it implements (derived ones included; auto
traits and blanket impls are left out). Types are printed with their public path; a local
type that appears in a public signature but has no public path is printed as
`<unnameable crate::path>` and fails --check.

Usage: scripts/public-api.py [--check | --print | --counts] [--json FILE]
  (none)    write snapshots/public-api.txt
  --check   compare with snapshots/public-api.txt: print the diff and exit 1 when the surface
            changed, or when a public signature names an unnameable type
  --print   print the listing
  --counts  print the figures: items by kind, types without #[non_exhaustive], unnameable types
  --json F  read rustdoc's JSON from F instead of building it
Exits 0 with a message ("skipped") when rustdoc's JSON cannot be built here, or its format
is not one this script reads. Standard library only.
"""
import difflib
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "snapshots" / "public-api.txt"
CRATE = "apply_patch"
# rustdoc JSON format versions whose shape this script reads (rustdoc-types' FORMAT_VERSION).
KNOWN_FORMATS = {57}
# Standard prelude types are printed by their short names.
SHORT = {
    "core::option::Option": "Option",
    "core::result::Result": "Result",
    "alloc::vec::Vec": "Vec",
    "alloc::string::String": "String",
    "alloc::boxed::Box": "Box",
}


class Skip(Exception):
    pass


def build_json(root=ROOT, crate=CRATE):
    # A folder of its own: RUSTC_BOOTSTRAP is part of what cargo fingerprints, so building the
    # JSON in target/ would make the next `cargo build` or `cargo test` rebuild part of the
    # tree (and the other way round). Here only the first run builds the dependencies.
    target = root / "target" / "public-api"
    env = dict(os.environ, RUSTC_BOOTSTRAP="1", CARGO_TARGET_DIR=str(target))
    cmd = ["cargo", "rustdoc", "--lib", "--quiet", "--", "-Z", "unstable-options",
           "--output-format", "json", "-A", "rustdoc::all"]
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise Skip("rustdoc JSON could not be built (`%s`):\n%s" % (" ".join(cmd), done.stderr[-2000:]))
    return target / "doc" / (crate + ".json")


class Api:
    def __init__(self, doc):
        if doc.get("format_version") not in KNOWN_FORMATS:
            raise Skip("rustdoc JSON format %s; this script reads %s (update it for the new format)"
                       % (doc.get("format_version"), sorted(KNOWN_FORMATS)))
        self.index = doc["index"]
        self.summaries = doc["paths"]
        self.root = str(doc["root"])
        self.reach = {}  # item id -> public paths (tuples)
        self.reexports = []  # (path, source) of re-exported foreign items
        self.unnameable = {}  # definition path -> the items whose signatures name it
        self.lines = []
        self.context = None
        self._walk(self.root, (self.index[self.root]["name"],), set())
        self.canonical = {i: self._choose(i, ps) for i, ps in self.reach.items()}

    # ---- which paths reach which item -------------------------------------------------------
    def _walk(self, module_id, prefix, seen):
        if module_id in seen:
            return
        seen = seen | {module_id}
        module = self.index[module_id]["inner"]["module"]
        for child in module["items"]:
            item = self.index.get(str(child))
            if item is None or item["visibility"] != "public":
                continue
            inner = item["inner"]
            if "use" in inner:
                use = inner["use"]
                target = None if use["id"] is None else str(use["id"])
                if use["is_glob"]:
                    if target in self.index and "module" in self.index[target]["inner"]:
                        self._walk(target, prefix, seen)
                    else:
                        self.reexports.append((prefix + ("*",), use["source"]))
                elif target in self.index:
                    self._add(target, prefix + (use["name"],), seen)
                else:
                    self.reexports.append((prefix + (use["name"],), use["source"]))
            else:
                self._add(str(child), prefix + (item["name"],), seen)

    def _add(self, item_id, path, seen):
        self.reach.setdefault(item_id, set()).add(path)
        if "module" in self.index[item_id]["inner"]:
            self._walk(item_id, path, seen)

    def _choose(self, item_id, paths):
        return min(paths, key=lambda p: (len(p), p))

    # ---- printing types ---------------------------------------------------------------------
    def name_of(self, item_id, written):
        item_id = str(item_id)
        if item_id in self.canonical:
            return "::".join(self.canonical[item_id])
        summary = self.summaries.get(item_id)
        if summary is None or summary["crate_id"] == 0:
            where = "::".join(summary["path"]) if summary else written
            self.unnameable.setdefault(where, set()).add(self.context)
            return "<unnameable %s>" % where
        full = "::".join(summary["path"])
        return SHORT.get(full, full)

    def path(self, p):
        return self.name_of(p["id"], p["path"]) + self.args(p.get("args"))

    def args(self, a):
        if not a:
            return ""
        if "parenthesized" in a:
            par = a["parenthesized"]
            out = "(" + ", ".join(self.ty(t) for t in par["inputs"]) + ")"
            return out + (" -> " + self.ty(par["output"]) if par.get("output") else "")
        if "return_type_notation" in a or a == "return_type_notation":
            return "(..)"
        ang = a["angle_bracketed"]
        parts = [self.arg(x) for x in ang["args"]]
        for c in ang["constraints"]:
            binding = c["binding"]
            name = c["name"] + self.args(c.get("args"))
            if "equality" in binding:
                eq = binding["equality"]
                parts.append(name + " = " + (self.ty(eq["type"]) if "type" in eq else eq["constant"]["expr"]))
            else:
                parts.append(name + ": " + self.bounds(binding["constraint"]))
        return "<" + ", ".join(parts) + ">" if parts else ""

    def arg(self, x):
        if x == "infer":
            return "_"
        if "lifetime" in x:
            return x["lifetime"]
        if "type" in x:
            return self.ty(x["type"])
        return x["const"]["expr"]

    def ty(self, t):
        if t is None:
            return "()"
        (kind, v), = t.items()
        if kind == "resolved_path":
            return self.path(v)
        if kind in ("primitive", "generic"):
            return v
        if kind == "borrowed_ref":
            life = v["lifetime"] + " " if v["lifetime"] else ""
            return "&" + life + ("mut " if v["is_mutable"] else "") + self.ty(v["type"])
        if kind == "raw_pointer":
            return ("*mut " if v["is_mutable"] else "*const ") + self.ty(v["type"])
        if kind == "tuple":
            inner = ", ".join(self.ty(x) for x in v)
            return "(" + inner + ("," if len(v) == 1 else "") + ")"
        if kind == "slice":
            return "[" + self.ty(v) + "]"
        if kind == "array":
            return "[%s; %s]" % (self.ty(v["type"]), v["len"])
        if kind == "impl_trait":
            return "impl " + self.bounds(v)
        if kind == "dyn_trait":
            traits = [self.poly(p) for p in v["traits"]]
            if v.get("lifetime"):
                traits.append(v["lifetime"])
            return "dyn " + " + ".join(traits)
        if kind == "qualified_path":
            base = self.ty(v["self_type"])
            if v.get("trait"):
                base = "<%s as %s>" % (base, self.path(v["trait"]))
            return base + "::" + v["name"] + self.args(v.get("args"))
        if kind == "function_pointer":
            return self.fn_sig("fn", v["sig"], None, v.get("header"))
        if kind == "infer":
            return "_"
        if kind == "pat":
            return self.ty(v["type"]) + " is " + v["__pat_unstable_do_not_use"]
        raise ValueError("unknown type shape %r" % kind)

    def poly(self, p):
        hrtb = self.params(p.get("generic_params") or [], "for")
        return hrtb + self.path(p["trait"])

    def bounds(self, bs):
        out = []
        for b in bs:
            if "trait_bound" in b:
                tb = b["trait_bound"]
                mod = {"none": "", "maybe": "?", "maybe_const": "~const "}[tb["modifier"]]
                out.append(mod + self.poly(tb))
            elif "outlives" in b:
                out.append(b["outlives"])
            else:
                out.append("use<" + ", ".join(str(x) for x in b["use"]) + ">")
        return " + ".join(out)

    def params(self, ps, lead=""):
        shown = []
        for p in ps:
            kind = p["kind"]
            if "lifetime" in kind:
                o = kind["lifetime"]["outlives"]
                shown.append(p["name"] + (": " + " + ".join(o) if o else ""))
            elif "type" in kind:
                k = kind["type"]
                if k["is_synthetic"]:
                    continue
                s = p["name"] + (": " + self.bounds(k["bounds"]) if k["bounds"] else "")
                shown.append(s + (" = " + self.ty(k["default"]) if k.get("default") else ""))
            else:
                k = kind["const"]
                shown.append("const %s: %s" % (p["name"], self.ty(k["type"])))
        if not shown:
            return ""
        return lead + "<" + ", ".join(shown) + ">" + (" " if lead else "")

    def where(self, g):
        preds = []
        for w in g["where_predicates"]:
            if "bound_predicate" in w:
                b = w["bound_predicate"]
                hrtb = self.params(b.get("generic_params") or [], "for")
                preds.append(hrtb + self.ty(b["type"]) + ": " + self.bounds(b["bounds"]))
            elif "lifetime_predicate" in w:
                lp = w["lifetime_predicate"]
                preds.append(lp["lifetime"] + ": " + " + ".join(lp["outlives"]))
            else:
                eq = w["eq_predicate"]
                preds.append(self.ty(eq["lhs"]) + " = " + self.ty(eq["rhs"]["type"]))
        return " where " + ", ".join(preds) if preds else ""

    def fn_sig(self, name, sig, generics, header):
        quals = ""
        if header:
            quals = "".join(q for q, on in (("const ", header["is_const"]), ("async ", header["is_async"]),
                                            ("unsafe ", header["is_unsafe"])) if on)
            if header["abi"] != "Rust":
                quals += 'extern "%s" ' % (header["abi"] if isinstance(header["abi"], str) else list(header["abi"])[0])
        args = []
        for arg_name, t in sig["inputs"]:
            if arg_name == "self":
                args.append(self.self_arg(t))
            else:
                args.append(arg_name + ": " + self.ty(t))
        out = quals + name + (self.params(generics["params"]) if generics else "")
        out += "(" + ", ".join(args) + ")"
        if sig.get("output") is not None:
            out += " -> " + self.ty(sig["output"])
        return out + (self.where(generics) if generics else "")

    def self_arg(self, t):
        if t == {"generic": "Self"}:
            return "self"
        br = t.get("borrowed_ref")
        if br and br["type"] == {"generic": "Self"}:
            life = br["lifetime"] + " " if br["lifetime"] else ""
            return "&" + life + ("mut " if br["is_mutable"] else "") + "self"
        return "self: " + self.ty(t)

    # ---- the listing --------------------------------------------------------------------------
    def flags(self, item):
        out = []
        for a in item["attrs"]:
            if a == "non_exhaustive":
                out.append("#[non_exhaustive] ")
            elif isinstance(a, dict) and "must_use" in a:
                out.append("#[must_use] ")
            elif isinstance(a, dict) and "repr" in a:
                out.append("#[repr] ")
        if item.get("deprecation"):
            out.append("#[deprecated] ")
        return "".join(out)

    def emit(self, text, group=0):
        # Sorted by the item's path, then the group: the item itself, its fields and variants,
        # its methods and constants, its trait impls; so a type's lines stay together.
        self.lines.append(((self.owner, group), text))

    def listing(self):
        self.lines = []
        for item_id, path in self.canonical.items():
            self.owner = "::".join(path)
            self.item(item_id, self.owner)
            for other in self.reach[item_id] - {path}:
                self.owner = "::".join(other)
                self.emit("pub use %s = %s" % (self.owner, "::".join(path)))
        for path, source in self.reexports:
            self.owner = "::".join(path)
            self.emit("pub use %s = %s" % (self.owner, source))
        return [text for _, text in sorted(set(self.lines))]

    def item(self, item_id, path):
        item = self.index[item_id]
        self.context = path
        (kind, v), = item["inner"].items()
        f = self.flags(item)
        if kind == "module":
            self.emit("pub mod " + path)
        elif kind == "struct":
            self.struct(path, item, v, f)
        elif kind == "enum":
            self.enum(path, item, v, f)
        elif kind == "union":
            self.emit("%spub union %s%s" % (f, path, self.params(v["generics"]["params"])))
            self.fields(path, v["fields"])
            self.impls(path, v["impls"])
        elif kind == "function":
            self.emit(f + "pub " + self.fn_sig("fn " + path, v["sig"], v["generics"], v["header"]))
        elif kind == "trait":
            self.trait(path, item, v, f)
        elif kind == "constant":
            self.emit("%spub const %s: %s = %s" % (f, path, self.ty(v["type"]), v["const"]["expr"]))
        elif kind == "static":
            self.emit("%spub static %s%s: %s" % (f, "mut " if v["is_mutable"] else "", path, self.ty(v["type"])))
        elif kind == "type_alias":
            g = v["generics"]
            self.emit("%spub type %s%s = %s%s" % (f, path, self.params(g["params"]), self.ty(v["type"]), self.where(g)))
        elif kind in ("macro", "proc_macro"):
            self.emit("%spub macro %s!" % (f, path))
        else:
            self.emit("%spub %s %s" % (f, kind, path))

    def struct(self, path, item, v, f):
        g = v["generics"]
        head = "%spub struct %s%s" % (f, path, self.params(g["params"]))
        k = v["kind"]
        if k == "unit":
            self.emit(head + ";" + self.where(g))
        elif "tuple" in k:
            fields = []
            for fid in k["tuple"]:
                fields.append("_" if fid is None else "pub " + self.ty(self.index[str(fid)]["inner"]["struct_field"]))
            self.emit(head + "(" + ", ".join(fields) + ")" + self.where(g))
        else:
            plain = k["plain"]
            more = " (and private fields)" if plain["has_stripped_fields"] else ""
            self.emit(head + self.where(g) + more)
            self.fields(path, plain["fields"])
        self.impls(path, v["impls"])

    def fields(self, path, ids):
        for fid in ids:
            field = self.index[str(fid)]
            self.context = path
            self.emit("pub field %s::%s: %s" % (path, field["name"], self.ty(field["inner"]["struct_field"])), 1)

    def enum(self, path, item, v, f):
        g = v["generics"]
        more = " (and hidden variants)" if v["has_stripped_variants"] else ""
        self.emit("%spub enum %s%s%s%s" % (f, path, self.params(g["params"]), self.where(g), more))
        for vid in v["variants"]:
            var = self.index[str(vid)]
            self.context = path
            k = var["inner"]["variant"]["kind"]
            shown = self.flags(var) + "pub variant %s::%s" % (path, var["name"])
            if "tuple" in k:
                shown += "(" + ", ".join("_" if x is None else self.ty(self.index[str(x)]["inner"]["struct_field"])
                                         for x in k["tuple"]) + ")"
            elif "struct" in k:
                fs = [self.index[str(x)] for x in k["struct"]["fields"]]
                shown += " { " + ", ".join("%s: %s" % (x["name"], self.ty(x["inner"]["struct_field"])) for x in fs)
                shown += ", .." if k["struct"]["has_stripped_fields"] else ""
                shown += " }"
            disc = var["inner"]["variant"].get("discriminant")
            if disc:
                shown += " = " + disc["expr"]
            self.emit(shown, 1)
        self.impls(path, v["impls"])

    def trait(self, path, item, v, f):
        g = v["generics"]
        sup = ": " + self.bounds(v["bounds"]) if v["bounds"] else ""
        unsafe = "unsafe " if v["is_unsafe"] else ""
        self.emit("%spub %strait %s%s%s%s" % (f, unsafe, path, self.params(g["params"]), sup, self.where(g)))
        self.members(path, v["items"], "trait ")

    def members(self, path, ids, lead):
        for mid in ids:
            m = self.index.get(str(mid))
            if m is None or m["visibility"] not in ("public", "default"):
                continue
            self.context = "%s::%s" % (path, m["name"])
            (kind, v), = m["inner"].items()
            f = self.flags(m)
            if kind == "function":
                self.emit(f + "pub " + lead + self.fn_sig("fn %s::%s" % (path, m["name"]), v["sig"], v["generics"], v["header"]), 2)
            elif kind == "assoc_const":
                value = " = " + v["value"] if v.get("value") else ""
                self.emit("%spub %sconst %s::%s: %s%s" % (f, lead, path, m["name"], self.ty(v["type"]), value), 2)
            elif kind == "assoc_type":
                b = ": " + self.bounds(v["bounds"]) if v["bounds"] else ""
                t = " = " + self.ty(v["type"]) if v.get("type") else ""
                self.emit("%spub %stype %s::%s%s%s" % (f, lead, path, m["name"], b, t), 2)

    def impls(self, path, ids):
        for iid in ids:
            imp = self.index[str(iid)]["inner"]["impl"]
            if imp["is_synthetic"] or imp["blanket_impl"] is not None:
                continue
            self.context = path
            if imp["trait"] is None:
                self.members(path, imp["items"], "")
            else:
                g = imp["generics"]
                neg = "!" if imp["is_negative"] else ""
                self.emit("impl%s %s%s for %s%s" % (self.params(g["params"]), neg, self.path(imp["trait"]),
                                                   self.ty(imp["for"]), self.where(g)), 3)

    # ---- the figures --------------------------------------------------------------------------
    def counts(self):
        kinds = {}
        for item_id in self.canonical:
            k = next(iter(self.index[item_id]["inner"]))
            kinds[k] = kinds.get(k, 0) + 1
        lines = self.listing()
        types = [i for i in self.canonical if next(iter(self.index[i]["inner"])) in ("struct", "enum", "union")]
        open_types = [i for i in types if "non_exhaustive" not in self.index[i]["attrs"]]
        # A type outside code can build or match exhaustively: an enum, a unit or tuple struct
        # without hidden fields, or a struct whose fields are all public.
        buildable = [i for i in open_types if self._buildable(self.index[i]["inner"])]
        out = ["public items (canonical, members not counted): %d" % len(self.canonical)]
        out += ["  %s: %d" % (k, n) for k, n in sorted(kinds.items())]
        out.append("listing lines: %d" % len(lines))
        for word in ("pub fn ", "pub trait fn ", "pub field ", "pub variant ", "impl", "pub use "):
            out.append("  %s…: %d" % (word, sum(1 for x in lines if x.split("#[")[-1].split("] ")[-1].startswith(word))))
        out.append("public types: %d; without #[non_exhaustive]: %d (of those, open to literals or "
                   "exhaustive matches: %d)" % (len(types), len(open_types), len(buildable)))
        for i in sorted("::".join(self.canonical[i]) for i in buildable):
            out.append("  open: " + i)
        out.append("unnameable types in public signatures: %d" % len(self.unnameable))
        for name, users in sorted(self.unnameable.items()):
            out.append("  %s (in %s)" % (name, ", ".join(sorted(users))))
        return out

    def _buildable(self, inner):
        if "enum" in inner:
            return not inner["enum"]["has_stripped_variants"]
        if "union" in inner:
            return False
        k = inner["struct"]["kind"]
        if k == "unit":
            return True
        if "tuple" in k:
            return None not in k["tuple"]
        return not k["plain"]["has_stripped_fields"]


def main(argv):
    mode = "write"
    json_path = None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("--check", "--print", "--counts"):
            mode = a[2:]
        elif a == "--json" and args:
            json_path = pathlib.Path(args.pop(0))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    try:
        if json_path is None:
            json_path = build_json()
        api = Api(json.loads(json_path.read_text()))
    except Skip as why:
        print("public-api: skipped: %s" % why)
        return 0
    lines = api.listing()
    text = "".join(line + "\n" for line in lines)
    if mode == "print":
        sys.stdout.write(text)
        return 0
    if mode == "counts":
        print("\n".join(api.counts()))
        return 0
    if mode == "write":
        SNAPSHOT.write_text(text)
        print("public-api: %d lines written to %s" % (len(lines), SNAPSHOT.relative_to(ROOT)))
        return 0
    failed = False
    old = SNAPSHOT.read_text() if SNAPSHOT.exists() else ""
    if old != text:
        diff = difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                    "snapshots/public-api.txt", "the library's public API now")
        sys.stdout.writelines(diff)
        print("public-api: the public API changed; review the diff above and run "
              "scripts/public-api.py to accept it")
        failed = True
    if api.unnameable:
        print("public-api: types in public signatures that outside code cannot name "
              "(re-export them, or make the item that shows them crate-private):")
        for name, users in sorted(api.unnameable.items()):
            print("  %s (in %s)" % (name, ", ".join(sorted(users))))
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
