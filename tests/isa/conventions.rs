//! Conventions in one place: every EC-n and NEFF-EC-n the code cites (in
//! src/ and shaders/) has its entry in docs/conventions.md, and every entry
//! there is cited somewhere in the code.

use std::collections::BTreeSet;
use std::path::Path;

/// Every `EC-<n>` (with `prefix` "EC-") or `NEFF-EC-<n>` in `text`; a plain
/// "EC-" search skips the ones that belong to "NEFF-EC-".
fn cited(text: &str, prefix: &str) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices(prefix) {
        if prefix == "EC-" && text[..i].ends_with("NEFF-") {
            continue;
        }
        let digits: String = text[i + prefix.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse() {
            out.insert(n);
        }
    }
    out
}

fn sources(dir: &Path, out: &mut String) {
    for e in std::fs::read_dir(dir).expect("read dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs" || x == "wgsl") {
            out.push_str(&std::fs::read_to_string(&p).expect("read source"));
            out.push('\n');
        }
    }
}

/// The numbers that have an entry (`**EC-n — …**`) in docs/conventions.md.
fn documented(doc: &str, prefix: &str) -> BTreeSet<u32> {
    doc.lines()
        .filter_map(|l| l.strip_prefix(&format!("**{prefix}")))
        .filter_map(|rest| {
            rest.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .ok()
        })
        .collect()
}

#[test]
fn every_convention_the_code_cites_is_documented_and_every_entry_is_cited() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut code = String::new();
    sources(&root.join("src"), &mut code);
    sources(&root.join("shaders"), &mut code);
    let doc = std::fs::read_to_string(root.join("docs/conventions.md")).expect("conventions.md");
    for prefix in ["EC-", "NEFF-EC-"] {
        let in_code = cited(&code, prefix);
        let in_doc = documented(&doc, prefix);
        let undocumented: Vec<_> = in_code.difference(&in_doc).collect();
        let uncited: Vec<_> = in_doc.difference(&in_code).collect();
        assert!(
            undocumented.is_empty(),
            "{prefix}n cited in the code without an entry in docs/conventions.md: {undocumented:?}"
        );
        assert!(
            uncited.is_empty(),
            "{prefix}n documented but cited nowhere in src/ or shaders/: {uncited:?}"
        );
    }
}

#[test]
fn the_scan_tells_the_two_families_apart() {
    let text = "// EC-12, EC-19 and NEFF-EC-4; EC-5x";
    assert_eq!(cited(text, "EC-"), BTreeSet::from([12, 19, 5]));
    assert_eq!(cited(text, "NEFF-EC-"), BTreeSet::from([4]));
    let doc = "**EC-3 — x** y\n**NEFF-EC-2 — z**\n**EC-10b — w**";
    assert_eq!(documented(doc, "EC-"), BTreeSet::from([3, 10]));
    assert_eq!(documented(doc, "NEFF-EC-"), BTreeSet::from([2]));
}
