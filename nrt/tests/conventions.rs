//! Every NRT-EC-n that nrt/src cites has its entry in docs/conventions.md,
//! and every entry there is cited in nrt/src.

use std::collections::BTreeSet;
use std::path::Path;

fn cited(text: &str) -> BTreeSet<u32> {
    text.match_indices("NRT-EC-")
        .filter_map(|(i, _)| {
            text[i + 7..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .ok()
        })
        .collect()
}

#[test]
fn every_nrt_convention_is_documented_and_cited() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut code = String::new();
    for e in std::fs::read_dir(root.join("src")).unwrap() {
        code.push_str(&std::fs::read_to_string(e.unwrap().path()).unwrap());
    }
    let doc = std::fs::read_to_string(root.join("../docs/conventions.md")).unwrap();
    let documented: BTreeSet<u32> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("**NRT-EC-"))
        .filter_map(|r| {
            r.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .ok()
        })
        .collect();
    assert_eq!(cited(&code), documented);
    // SPEC-NRT numbers them 1 to 20.
    assert_eq!(documented, (1..=20).collect());
}
