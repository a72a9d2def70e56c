//! The layer rule of ARCHITECTURE.md, enforced: each top-level module of the
//! crate may use only the modules its layer sits on. A `use crate::x` (or
//! `tpb_emu::x` in the binary) that crosses the rule fails this test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module and the modules it may use (besides itself).
/// limits ← isa ← device ← runtime ← frontend/neff ← model/viz ← cli, with
/// the leaf utilities `files` (std only) and `npy` (array files) beside them.
const LAYERS: &[(&str, &[&str])] = &[
    ("limits", &[]),
    ("files", &["limits"]),
    ("isa", &["limits"]),
    ("npy", &["limits", "files", "isa"]),
    ("device", &["limits", "isa"]),
    ("runtime", &["limits", "files", "isa", "npy", "device"]),
    (
        "neff",
        &["limits", "files", "isa", "npy", "device", "runtime"],
    ),
    (
        "frontend",
        &["limits", "files", "isa", "npy", "device", "runtime"],
    ),
    (
        "model",
        &["limits", "files", "isa", "npy", "device", "runtime", "neff"],
    ),
    (
        "viz",
        &[
            "limits", "files", "isa", "npy", "device", "runtime", "frontend",
        ],
    ),
    (
        "cli",
        &[
            "limits", "files", "isa", "npy", "device", "runtime", "neff", "frontend", "model",
            "viz",
        ],
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a source file belongs to (`main.rs` is the CLI).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" => None,
        "main.rs" => Some("cli".into()),
        f => Some(f.trim_end_matches(".rs").to_owned()),
    }
}

/// Every top-level module named after `prefix` (`crate::` or `tpb_emu::`),
/// grouped imports (`crate::{a, b::c}`) included.
fn used_modules(text: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (i, _) in text.match_indices(prefix) {
        // Skip longer paths that merely end in the prefix (`my_crate::`).
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(j, _)| j);
            let mut d = 0;
            let mut start = 0;
            for (j, c) in group[..end].char_indices() {
                match c {
                    '{' => d += 1,
                    '}' => d -= 1,
                    ',' if d == 0 => {
                        out.push(ident(&group[start..j]));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            out.push(ident(&group[start..end]));
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|m| !m.is_empty() && m != "self");
    out
}

/// The source without `//` comments: a doc mention of a module is no use of it.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_module_imports_across_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut crossings = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let Some(allowed) = layers.get(module.as_str()) else {
            crossings.push(format!(
                "{}: top-level module `{module}` has no layer: add it to LAYERS here and to ARCHITECTURE.md",
                file.display()
            ));
            continue;
        };
        let text = code_of(&std::fs::read_to_string(file).expect("read source"));
        let prefix = if module == "cli" && file.ends_with("main.rs") {
            "tpb_emu::"
        } else {
            "crate::"
        };
        for used in used_modules(&text, prefix) {
            if used != module && !allowed.contains(&used.as_str()) {
                crossings.push(format!(
                    "{}: `{module}` uses `{used}`, which its layer may not",
                    file.display()
                ));
            }
        }
    }
    assert!(crossings.is_empty(), "{}", crossings.join("\n"));
}

#[test]
fn the_scanner_sees_plain_and_grouped_imports() {
    let text = "use crate::isa::Record;\nuse crate::{device::Op, runtime::{a, b}};\n\
                let x = my_crate::viz::f(); crate::limits::X // see crate::cli\n\
                /// [`crate::npy`]";
    assert_eq!(
        used_modules(&code_of(text), "crate::"),
        ["isa", "device", "runtime", "limits"]
    );
}

// ---------------------------------------------------------------------------
// No import cycle inside a folder.
//
// For every folder under `src/`, the graph "file A uses an item of its
// sibling B" must be acyclic: in a cycle no file can be read, tested or moved
// without the others, and one change ripples round it. The rule, exactly:
//
// - Nodes: the folder's files (`x.rs`) and subfolders (`d/`: everything
//   under it is one node). `mod.rs` is the folder's root, not a node: it
//   declares the siblings and may use any of them (it is their face), and
//   the items it defines itself are the ground they share.
// - References: every path that starts with `crate::`, `super::` or
//   `self::`, in `use` items (grouped ones expanded: `use super::{a, b::C}`)
//   and in code (`super::pool::dispatch(..)`), resolved from the module it
//   is written in: an inline `mod m { .. }` counts, so `super::` inside a
//   file's `mod tests` is the file itself. Comments and string literals are
//   not code, and `#[cfg(test)]` items are not either: unit tests sit on top
//   of the library and may reach across it; what ships must not cycle.
// - Edges: a path into the folder (`crate::device::gpu::batch::Span`,
//   `super::batch::Span`) names the node after the folder's own path. A
//   file or subfolder is an edge to it. Any other name is an item of the
//   root: when the root imports it from a sibling (`pub use batch::Span`,
//   or a private `use`, which children see too), the edge goes to that
//   sibling, the one that defines it (a re-export hides no dependency);
//   when the root defines it, there is no edge. Any other name comes
//   through the root's glob from a sibling (`pub use kernels::*`, the one
//   glob of src/isa), when it has exactly one.
// - A cycle is a strongly connected component (Tarjan) of more than one
//   node; the message lists its files and the edges inside it, each with
//   the first path that makes it.

use std::collections::{BTreeSet, HashMap};

/// A token of Rust source without comments and literals: enough to read paths.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Id(String),
    /// `::`
    Sep,
    Open,
    Close,
    Comma,
    Star,
    Semi,
    Other(char),
}

/// `text` without comments and string, char and raw string literals (each
/// replaced by a space); lifetimes are kept.
fn strip_literals(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        // Hashes after an `r` that starts a raw string (`r"`, `r#"`, `br"`).
        let raw = (c == 'r'
            && (i == 0 || !ident(b[i - 1]) || (b[i - 1] == 'b' && (i == 1 || !ident(b[i - 2])))))
        .then(|| b[i + 1..].iter().take_while(|&&h| h == '#').count())
        .filter(|&h| b.get(i + 1 + h) == Some(&'"'));
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if let Some(hashes) = raw {
            // Ends at a quote followed by as many hashes.
            i += hashes + 2;
            while i < b.len() {
                if b[i] == '"' && b[i + 1..].iter().take(hashes).all(|&h| h == '#') {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push(' ');
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if c == '\'' && next == Some('\\') {
            // '\n', '\'', '\u{..}'
            i += 3;
            while i < b.len() && b[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else if c == '\'' && b.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push(' ');
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The tokens of `text` (comments and literals already stripped).
fn tokens(text: &str) -> Vec<Tok> {
    let b: Vec<char> = text.chars().collect();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if word(c) {
            let start = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            out.push(if c.is_ascii_digit() {
                Tok::Other('0')
            } else {
                Tok::Id(b[start..i].iter().collect())
            });
        } else {
            i += 1;
            out.push(match c {
                ':' if b.get(i) == Some(&':') => {
                    i += 1;
                    Tok::Sep
                }
                '{' => Tok::Open,
                '}' => Tok::Close,
                ',' => Tok::Comma,
                '*' => Tok::Star,
                ';' => Tok::Semi,
                c => Tok::Other(c),
            });
        }
    }
    out
}

/// One path of a source file, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PathRef {
    /// Its segments (`crate`, `super`, `self` included; a leaf `self` of a
    /// group dropped: `a::{self}` is `a`).
    segments: Vec<String>,
    /// The name it binds, in a `use` item: the last segment or its `as` alias.
    binds: Option<String>,
    /// The module it is written in: the file's, then inline `mod`s.
    module: Vec<String>,
}

/// Reads the use tree or path at `toks[i..]` into `out`, each leaf's path
/// after `prefix` and its `as` alias; returns the index after it.
fn use_tree(
    toks: &[Tok],
    mut i: usize,
    mut path: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let mut alias = None;
    loop {
        match toks.get(i) {
            Some(Tok::Id(s)) => {
                path.push(s.clone());
                i += 1;
                if toks.get(i) == Some(&Tok::Sep) {
                    i += 1;
                    continue;
                }
                if toks.get(i) == Some(&Tok::Id("as".into())) {
                    if let Some(Tok::Id(a)) = toks.get(i + 1) {
                        alias = Some(a.clone());
                    }
                    i += 2;
                }
            }
            Some(Tok::Open) => {
                i += 1;
                while !matches!(toks.get(i), Some(Tok::Close) | None) {
                    let before = i;
                    i = use_tree(toks, i, path.clone(), out);
                    if toks.get(i) == Some(&Tok::Comma) || i == before {
                        i += 1;
                    }
                }
                return i + 1;
            }
            Some(Tok::Star) => {
                path.push("*".into());
                i += 1;
            }
            _ => {}
        }
        if path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        if !path.is_empty() {
            out.push((path, alias));
        }
        return i;
    }
}

/// The index after the item that starts at `toks[i]`: up to its `;`, or
/// through its `{ .. }` block (outer attributes included).
fn item_end(toks: &[Tok], mut i: usize) -> usize {
    let mut nest = 0i32;
    while i < toks.len() {
        match &toks[i] {
            Tok::Other('(' | '[') => nest += 1,
            Tok::Other(')' | ']') => nest -= 1,
            Tok::Semi if nest == 0 => return i + 1,
            Tok::Open if nest == 0 => {
                let mut depth = 0;
                while i < toks.len() {
                    match toks[i] {
                        Tok::Open => depth += 1,
                        Tok::Close => {
                            depth -= 1;
                            if depth == 0 {
                                return i + 1;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// Every path of a file whose module is `module` that starts with
/// `crate`, `super` or `self`, and every path of its `use` items; none of
/// `#[cfg(test)]` items.
fn path_refs(text: &str, module: &[String]) -> Vec<PathRef> {
    let toks = tokens(&strip_literals(text));
    let is = |i: usize, t: &str| matches!(toks.get(i), Some(Tok::Id(s)) if s == t);
    let other = |i: usize, c: char| toks.get(i) == Some(&Tok::Other(c));
    let mut refs = Vec::new();
    // Inline modules: (name, the brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut in_use = false;
    let mut i = 0;
    while i < toks.len() {
        let after_sep = i > 0 && matches!(toks[i - 1], Tok::Sep | Tok::Other('.'));
        match &toks[i] {
            // `#[cfg(test)]`: the item after it is test code.
            Tok::Other('#')
                if other(i + 1, '[')
                    && is(i + 2, "cfg")
                    && other(i + 3, '(')
                    && is(i + 4, "test")
                    && other(i + 5, ')')
                    && other(i + 6, ']') =>
            {
                i = item_end(&toks, i + 7);
                continue;
            }
            Tok::Open => depth += 1,
            Tok::Close => {
                depth -= 1;
                while inline.last().is_some_and(|m| m.1 > depth) {
                    inline.pop();
                }
            }
            Tok::Semi => in_use = false,
            Tok::Id(k) if k == "mod" => {
                // `mod x;` declares; `mod x {` opens an inline module.
                if let (Some(Tok::Id(name)), Some(Tok::Open)) = (toks.get(i + 1), toks.get(i + 2)) {
                    inline.push((name.clone(), depth + 1));
                }
                i += 2;
                continue;
            }
            Tok::Id(k) if k == "use" => in_use = true,
            Tok::Id(first) if !after_sep => {
                let rooted = matches!(first.as_str(), "crate" | "super" | "self");
                if (rooted && toks.get(i + 1) == Some(&Tok::Sep)) || in_use {
                    let mut paths = Vec::new();
                    let next = use_tree(&toks, i, Vec::new(), &mut paths);
                    let mut here = module.to_vec();
                    here.extend(inline.iter().map(|m| m.0.clone()));
                    for (segments, alias) in paths {
                        let binds = in_use.then(|| alias.or_else(|| segments.last().cloned()));
                        refs.push(PathRef {
                            segments,
                            binds: binds.flatten(),
                            module: here.clone(),
                        });
                    }
                    i = next.max(i + 1);
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    refs
}

/// `r` from the crate root, when it starts with `crate`, `self` or `super`.
fn absolute(r: &PathRef) -> Option<Vec<String>> {
    let (first, mut rest) = r.segments.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" | "super" => r.module.clone(),
        _ => return None,
    };
    if first == "super" {
        base.pop()?;
    }
    while let Some((_, tail)) = rest.split_first().filter(|(s, _)| *s == "super") {
        base.pop()?;
        rest = tail;
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// One source file of a folder: its node there (`"mod"`: the root's
/// `mod.rs`), its module path and its text.
struct FolderFile {
    node: String,
    module: Vec<String>,
    text: String,
}

/// The edges `from → to` of the folder whose module path is `folder` and
/// whose nodes are `nodes`, with the first path that makes each.
fn folder_edges(
    folder: &[String],
    nodes: &BTreeSet<String>,
    files: &[FolderFile],
) -> BTreeMap<(String, String), String> {
    let refs: Vec<(&FolderFile, Vec<PathRef>)> = files
        .iter()
        .map(|f| (f, path_refs(&f.text, &f.module)))
        .collect();
    // What the root's `use` items bring in: name → the sibling that defines
    // it (`None`: from outside the folder).
    let mut imported: HashMap<String, Option<String>> = HashMap::new();
    let mut globs: Vec<String> = Vec::new();
    for (_, rs) in refs.iter().filter(|(f, _)| f.node == "mod") {
        for r in rs.iter().filter(|r| r.module == folder) {
            let Some(name) = &r.binds else { continue };
            let abs = absolute(r).unwrap_or_else(|| {
                // A relative path in the root starts at the root (`batch::Span`).
                let mut p = folder.to_vec();
                p.extend(r.segments.iter().cloned());
                p
            });
            let sibling = abs
                .get(folder.len())
                .filter(|s| abs.starts_with(folder) && nodes.contains(*s));
            if name == "*" {
                globs.extend(sibling.cloned());
            } else {
                imported.insert(name.clone(), sibling.cloned());
            }
        }
    }
    // A name the root neither imports by name nor defines comes from its
    // glob (`pub use kernels::*`), when it has exactly one from a sibling.
    let root_text: String = files
        .iter()
        .filter(|f| f.node == "mod" && f.module == folder)
        .map(|f| code_of(&f.text))
        .collect();
    let root_defines = |name: &str| {
        let toks = tokens(&strip_literals(&root_text));
        toks.windows(2).any(|w| {
            matches!((&w[0], &w[1]), (Tok::Id(k), Tok::Id(n)) if n == name && ITEM_KEYWORDS.contains(&k.as_str()))
        })
    };
    let mut edges = BTreeMap::new();
    for (f, rs) in refs.iter().filter(|(f, _)| f.node != "mod") {
        for r in rs {
            let Some(abs) = absolute(r) else { continue };
            if abs.len() <= folder.len() || !abs.starts_with(folder) {
                continue;
            }
            let name = &abs[folder.len()];
            let to = if nodes.contains(name) {
                Some(name.clone())
            } else if let Some(sibling) = imported.get(name) {
                sibling.clone()
            } else if globs.len() == 1 && !root_defines(name) {
                Some(globs[0].clone())
            } else {
                None
            };
            if let Some(to) = to.filter(|t| t != &f.node && t != "mod") {
                edges
                    .entry((f.node.clone(), to))
                    .or_insert_with(|| r.segments.join("::"));
            }
        }
    }
    edges
}

/// The keywords that define an item of the name after them.
const ITEM_KEYWORDS: [&str; 9] = [
    "fn", "struct", "enum", "union", "trait", "type", "const", "static", "mod",
];

/// The strongly connected components of more than one node (Tarjan), each sorted.
fn cycles(edges: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        next: BTreeMap<&'a str, Vec<&'a str>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            let next = self.next.get(v).cloned().unwrap_or_default();
            for w in next {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    scc.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.found.push(scc);
                }
            }
        }
    }
    let mut t = Tarjan {
        next: BTreeMap::new(),
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for (a, b) in edges.keys() {
        t.next.entry(a.as_str()).or_default().push(b.as_str());
    }
    let starts: Vec<&str> = t.next.keys().copied().collect();
    for v in starts {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.found.sort();
    t.found
}

/// The cycles of the folder `dir` under `src`, each as a message naming its
/// files and the edges inside it.
fn folder_cycles(src: &Path, dir: &Path) -> Vec<String> {
    let folder: Vec<String> = dir
        .strip_prefix(src)
        .expect("under src")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let mut nodes = BTreeSet::new();
    let mut subfolders = BTreeSet::new();
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).expect("read folder") {
        let p = e.expect("dir entry").path();
        let name = p.file_name().expect("name").to_string_lossy().into_owned();
        let mut under = Vec::new();
        let node = if p.is_dir() {
            rust_files(&p, &mut under);
            subfolders.insert(name.clone());
            name
        } else if let Some(stem) = name.strip_suffix(".rs") {
            under.push(p.clone());
            stem.to_owned()
        } else {
            continue;
        };
        for file in under {
            let mut module = folder.clone();
            for c in file.strip_prefix(dir).expect("under folder").components() {
                let c = c.as_os_str().to_string_lossy();
                match c.strip_suffix(".rs") {
                    Some("mod") => {}
                    Some(stem) => module.push(stem.to_owned()),
                    None => module.push(c.into_owned()),
                }
            }
            let text = std::fs::read_to_string(&file).expect("read source");
            files.push(FolderFile {
                node: node.clone(),
                module,
                text,
            });
        }
        nodes.insert(node);
    }
    let show = |n: &str| {
        if subfolders.contains(n) {
            format!("{n}/")
        } else {
            format!("{n}.rs")
        }
    };
    let edges = folder_edges(&folder, &nodes, &files);
    cycles(&edges)
        .into_iter()
        .map(|scc| {
            let inside: Vec<String> = edges
                .iter()
                .filter(|((a, b), _)| scc.contains(a) && scc.contains(b))
                .map(|((a, b), via)| format!("    {} → {} ({via})", show(a), show(b)))
                .collect();
            let names: Vec<String> = scc.iter().map(|n| show(n)).collect();
            format!(
                "src/{}: an import cycle of {} files: {}\n{}",
                folder.join("/"),
                scc.len(),
                names.join(", "),
                inside.join("\n")
            )
        })
        .collect()
}

#[test]
fn no_folder_has_an_import_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = Vec::new();
    let mut todo = vec![src.clone()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read src") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                dirs.push(p.clone());
                todo.push(p);
            }
        }
    }
    dirs.sort();
    for must in [
        "device/gpu",
        "runtime",
        "device",
        "isa",
        "neff",
        "frontend",
        "viz",
        "cli",
    ] {
        assert!(dirs.contains(&src.join(must)), "src/{must} is checked");
    }
    let found: Vec<String> = dirs.iter().flat_map(|d| folder_cycles(&src, d)).collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_cycle_check_reads_paths_as_rustc_resolves_them() {
    let folder = vec!["x".to_owned()];
    let nodes: BTreeSet<String> = ["a", "b", "c", "d", "e"].map(String::from).into();
    let file = |node: &str, module: &[&str], text: &str| FolderFile {
        node: node.into(),
        module: module.iter().map(|s| s.to_string()).collect(),
        text: text.into(),
    };
    let files = [
        // The root: its own paths are no edges; its imports resolve others'.
        file(
            "mod",
            &["x"],
            "mod a; mod b; mod c; mod d; mod e;\npub use a::A;\n\
             use c::{C as Cee, self as cc};\npub use std::fmt::Debug;\n\
             pub const K: u32 = 1;\npub fn run() -> A { b::f(); crate::x::e::g() }",
        ),
        // `K` is the root's own; comments and strings are no code.
        file(
            "a",
            &["x", "a"],
            "use super::{K, b::B}; // super::d::X\n\
             /* crate::x::e::Y */ const S: &str = \"crate::x::d::Y\";\npub struct A;",
        ),
        // `Cee` is the root's alias of `c::C`; a test module's paths are no edges.
        file(
            "b",
            &["x", "b"],
            "pub struct B;\npub fn f() { let _ = super::Cee; let _ = super::Debug; }\n\
             #[cfg(test)]\nmod tests { use super::super::A; }",
        ),
        // `super::super` from an inline module of c is the folder.
        file(
            "c",
            &["x", "c"],
            "pub struct C;\npub mod inner { pub fn h() { super::super::d::g(); } }",
        ),
        // In a test module, `super` is the file itself.
        file(
            "d",
            &["x", "d"],
            "pub fn g() {}\n#[cfg(test)]\nmod tests { use super::*; use crate::x::cc::C; }",
        ),
        file(
            "e",
            &["x", "e"],
            "pub fn g() { let _ = r#\"super::a::A\"#; }",
        ),
    ];
    let edges = folder_edges(&folder, &nodes, &files);
    let pairs: Vec<(&str, &str, &str)> = edges
        .iter()
        .map(|((a, b), via)| (a.as_str(), b.as_str(), via.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("a", "b", "super::b::B"),
            ("b", "c", "super::Cee"),
            ("c", "d", "super::super::d::g"),
        ]
    );
    assert!(cycles(&edges).is_empty());
    let edge = |a: &str, b: &str| ((a.to_owned(), b.to_owned()), String::new());
    let looped: BTreeMap<_, _> = [
        edge("a", "b"),
        edge("b", "c"),
        edge("c", "a"),
        edge("c", "d"),
        edge("d", "e"),
        edge("e", "d"),
    ]
    .into();
    assert_eq!(
        cycles(&looped),
        [vec!["a", "b", "c"], vec!["d", "e"]]
            .map(|v| v.into_iter().map(String::from).collect::<Vec<_>>())
    );
}

#[test]
fn a_glob_in_the_root_is_an_edge_to_its_sibling() {
    let folder = vec!["x".to_owned()];
    let nodes: BTreeSet<String> = ["a", "b"].map(String::from).into();
    let file = |node: &str, module: &[&str], text: &str| FolderFile {
        node: node.into(),
        module: module.iter().map(|s| s.to_string()).collect(),
        text: text.into(),
    };
    let files = [
        file("mod", &["x"], "mod a; mod b;\npub use a::*;\npub struct R;"),
        file("a", &["x", "a"], "pub struct A;\npub struct A2;"),
        // `A` comes through the glob; `R` is the root's own.
        file(
            "b",
            &["x", "b"],
            "use crate::x::A;\npub fn f() { let _ = super::R; }",
        ),
    ];
    let edges = folder_edges(&folder, &nodes, &files);
    let pairs: Vec<(&str, &str)> = edges
        .keys()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(pairs, [("b", "a")]);
}
