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
