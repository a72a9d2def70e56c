//! `run --report` and `pool --report`: the run report in a real browser.
//!
//! Each report is opened headless from `file://` in Debian's `chromium`
//! (`.ci/run` installs it) with the network unreachable (every host name
//! resolves to nothing, the proxy is a closed port), its scripts run, and
//! the DOM they leave is checked: one table row per record (the count the
//! virtual table reports), one picture per variable, one timeline slice per
//! executed record, no script error and no blocked request (the page writes
//! both into `#errors`), and no `http(s)://` URL in any `src` or `href`.
//! Without chromium the browser half is skipped, except with `CI=true`,
//! where it fails. The worked example of docs/debugging.md is built and
//! checked here too; `UPDATE_DOCS=1` writes its screenshot to docs/report.png.

use crate::common;
use common::{s, stderr, tpb};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser, when there is one (a failure under CI=true when not).
fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join(name))
            .find(|p| p.is_file());
        if found.is_some() {
            return found;
        }
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true and no chromium on PATH (.ci/run installs Debian's chromium)"
    );
    eprintln!("no chromium on PATH: the browser checks are skipped");
    None
}

/// Chromium, headless, with no network; `what` is `--dump-dom` or
/// `--screenshot=FILE`. Returns stdout.
fn browse(browser: &Path, profile: &Path, url: &str, what: &[&str]) -> String {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9",
            "--virtual-time-budget=20000",
            "--window-size=1400,1900",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(what)
        .arg(url)
        .output()
        .expect("chromium starts");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 DOM")
}

/// Every `NAME="VALUE"` attribute value in `html`.
fn attrs<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let key = format!("{name}=\"");
    html.match_indices(&key)
        .filter_map(|(i, _)| {
            let rest = &html[i + key.len()..];
            rest.find('"').map(|j| &rest[..j])
        })
        .collect()
}

/// `html`'s text between `start` and the next `<`.
fn text_after<'a>(html: &'a str, start: &str) -> &'a str {
    let i = html
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in the DOM"));
    let rest = &html[i + start.len()..];
    &rest[..rest.find('<').unwrap_or(rest.len())]
}

/// The provenance chain the page shows for the picked element, as text.
fn picked_chain(dom: &str) -> String {
    let start = "<pre class=\"why-chain\">";
    let i = dom
        .find(start)
        .unwrap_or_else(|| panic!("no precomputed chain in the DOM"));
    let rest = &dom[i + start.len()..];
    rest[..rest.find("</pre>").expect("</pre>")]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// What `tpb-emu why ARGS` prints.
fn why_text(args: &[&str]) -> String {
    let mut all = vec!["why"];
    all.extend_from_slice(args);
    let o = tpb(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// The checks of a file that do not need a browser: self-contained.
fn check_file(html: &str) {
    for attr in ["src", "href"] {
        for v in attrs(html, attr) {
            let v = v.to_ascii_lowercase();
            assert!(
                !v.starts_with("http://") && !v.starts_with("https://") && !v.starts_with("//"),
                "a network URL in {attr}: {v}"
            );
        }
    }
    assert!(!html.contains("<link"), "no linked style sheet");
    assert!(!html.contains("<script src"), "no external script");
}

/// Records per engine and in all, from `run --json`'s summary.
fn records(json: &serde_json::Value) -> (Vec<(String, u64)>, u64) {
    let r = &json["records"];
    let per = ["pe", "act", "pool", "dve", "sp"]
        .iter()
        .map(|e| (e.to_string(), r[e].as_u64().unwrap()))
        .collect();
    (per, json["total_records"].as_u64().unwrap())
}

/// Opens `report` in the browser and checks its DOM against the run:
/// `per_engine` records, `total` executed, `variables` pictures.
fn check_dom(
    browser: &Path,
    dir: &Path,
    report: &Path,
    per_engine: &[(String, u64)],
    total: u64,
    variables: usize,
) -> String {
    let url = format!(
        "file://{}",
        std::fs::canonicalize(report).unwrap().display()
    );
    let dom = browse(browser, &dir.join("profile"), &url, &["--dump-dom"]);
    assert_eq!(
        text_after(&dom, "id=\"status\">"),
        "ready",
        "the script ran to its end"
    );
    assert_eq!(
        text_after(&dom, "<pre id=\"errors\">"),
        "",
        "no script error and no blocked request"
    );
    // One virtual table per engine with records, reporting one row per record.
    let engines = attrs(&dom, "data-engine");
    let rows = attrs(&dom, "data-rows");
    assert_eq!(engines.len(), rows.len());
    for (e, n) in per_engine {
        let shown = engines
            .iter()
            .position(|x| x == e)
            .map_or(0, |i| rows[i].parse::<u64>().unwrap());
        assert_eq!(shown, *n, "rows of {e}'s table");
    }
    // The rows in view are real rows.
    assert!(dom.matches("class=\"vrow").count() > 0);
    // The timeline: one record slice per executed record.
    assert_eq!(dom.matches("class=\"slice rec").count() as u64, total);
    assert_eq!(attrs(&dom, "data-records"), [total.to_string().as_str()]);
    // One picture per variable.
    assert_eq!(dom.matches("<figure class=\"var\"").count(), variables);
    assert_eq!(dom.matches("<img class=\"picture\"").count(), variables);
    check_file(&dom);
    dom
}

#[test]
fn a_manifest_run_and_a_neff_run_report_in_a_browser() {
    manifest_and_neff_reports("cpu");
}

#[test]
fn on_lavapipe_a_manifest_run_and_a_neff_run_report_in_a_browser() {
    // Skipped without an adapter, except with CI=true (common::gpu).
    if common::gpu().is_none() {
        return;
    }
    manifest_and_neff_reports("gpu");
}

/// The example program, then the same program packed as a NEFF, run on
/// `backend` with a report each, and both reports checked in the browser.
fn manifest_and_neff_reports(backend: &str) {
    let d = tempfile::tempdir().unwrap();
    let report = d.path().join("r.html");
    let o = tpb(&[
        "run",
        "examples/program/program.toml",
        "--backend",
        backend,
        "--json",
        "--out",
        s(&d.path().join("out")),
        "--report",
        s(&report),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(
        o.stdout
            .split(|&b| b == b'\n')
            .rfind(|l| !l.is_empty())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(json["report"], s(&report));
    let html = std::fs::read_to_string(&report).unwrap();
    check_file(&html);
    // The summary names the backend and adapter the run used.
    let described = json["backend"].as_str().unwrap();
    assert!(described.starts_with(backend), "{described}");
    assert!(html.contains(&format!("<th>backend</th><td>{described}</td>")));
    let (per, total) = records(&json);
    assert_eq!(total, 5);
    let browser = chromium();
    if let Some(b) = &browser {
        // x, y_avg, y_max.
        check_dom(b, d.path(), &report, &per, total, 3);
        // A link selects a record (its footprint is precomputed) and shows an element.
        let url = format!(
            "file://{}#select=pool:1&pick=y_avg:0,1",
            std::fs::canonicalize(&report).unwrap().display()
        );
        let dom = browse(b, &d.path().join("profile"), &url, &["--dump-dom"]);
        assert!(dom.contains("POOL record 1"), "the detail of the record");
        assert!(dom.contains("class=\"footprint\""), "its footprint");
        let y: Vec<f32> = {
            let npy = std::fs::read(d.path().join("out/y_avg.npy")).unwrap();
            npy[npy.len() - 128 * 4 * 4..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect()
        };
        let value = text_after(&dom, "<code class=\"value\">");
        assert!(
            value.starts_with(&format!("{} (bits 0x{:08x})", y[1], y[1].to_bits())),
            "y_avg[0,1] is {} in the .npy, the page says {value}",
            y[1]
        );
        // A small run: the clicked element's provenance is precomputed, the
        // text `tpb-emu why` prints for it.
        assert_eq!(
            picked_chain(&dom),
            why_text(&[
                "examples/program/program.toml",
                "y_avg[0,1]",
                "--backend",
                backend
            ])
        );
        let url = format!(
            "file://{}#pick=y_max:3,1",
            std::fs::canonicalize(&report).unwrap().display()
        );
        let dom = browse(b, &d.path().join("profile"), &url, &["--dump-dom"]);
        let chain = picked_chain(&dom);
        assert_eq!(
            chain,
            why_text(&[
                "examples/program/program.toml",
                "y_max[3,1]",
                "--backend",
                backend
            ])
        );
        // By hand: y_max[3,1] is the max of lane 3's window of rows 2-3,
        // columns 2-3 of the 4x4 map, the last of which (x[3,7]) wins.
        assert!(chain.starts_with("why y_max[3,1] ("), "{chain}");
        assert!(chain.contains("Pool max"), "{chain}");
        assert!(chain.contains("src: x[3,7] = "), "{chain}");
        assert!(
            chain.ends_with("  input `x`, as the run started\n"),
            "{chain}"
        );
    }

    // The same program as a NEFF.
    let neff = d.path().join("m.neff");
    let o = tpb(&["pack", "examples/program/program.toml", "-o", s(&neff)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = d.path().join("neff.html");
    let o = tpb(&[
        "run",
        s(&neff),
        "--input",
        "x=examples/program/x.npy",
        "--backend",
        backend,
        "--json",
        "--out",
        s(&d.path().join("neff-out")),
        "--report",
        s(&report),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(
        o.stdout
            .split(|&b| b == b'\n')
            .rfind(|l| !l.is_empty())
            .unwrap(),
    )
    .unwrap();
    check_file(&std::fs::read_to_string(&report).unwrap());
    let (per, total) = records(&json);
    if let Some(b) = &browser {
        check_dom(b, d.path(), &report, &per, total, 3);
        // The why command reruns the NEFF with its input.
        let url = format!(
            "file://{}#pick=y_max:127,3",
            std::fs::canonicalize(&report).unwrap().display()
        );
        let dom = browse(b, &d.path().join("profile"), &url, &["--dump-dom"]);
        // The NEFF's chains are precomputed too.
        assert_eq!(
            picked_chain(&dom),
            why_text(&[
                s(&neff),
                "y_max[127,3]",
                "--input",
                "x=examples/program/x.npy",
                "--backend",
                backend
            ])
        );
        let shot = d.path().join("report.png");
        browse(
            b,
            &d.path().join("profile"),
            &format!(
                "file://{}#select=pool:0&pick=y_avg:0,0",
                std::fs::canonicalize(&report).unwrap().display()
            ),
            &[&format!("--screenshot={}", shot.display())],
        );
        let png = std::fs::read(&shot).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
    }
}

/// Writes an fp32 `.npy` of `shape` whose element `i` (C order) is `value(i)`.
fn write_f32_npy(path: &Path, shape: &[u64], value: impl Fn(u64) -> f32) {
    let n: u64 = shape.iter().product();
    let data: Vec<u8> = (0..n).flat_map(|i| value(i).to_le_bytes()).collect();
    let npy = tpb_emu::npy::npy_bytes(tpb_emu::isa::Dtype::FP32, shape, &data).unwrap();
    std::fs::write(path, npy).unwrap();
}

/// `tpb-emu pool` of `x` into `y`: 2×2 max pooling on the CPU backend, then `more`.
fn pool_max_2x2(x: &Path, y: &Path, more: &[&str]) -> std::process::Output {
    let mut args = vec![
        "pool",
        "--input",
        s(x),
        "--mode",
        "max",
        "--kernel",
        "2",
        "--backend",
        "cpu",
        "--output",
        s(y),
    ];
    args.extend_from_slice(more);
    tpb(&args)
}

#[test]
fn pool_writes_a_report_of_its_program() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("x.npy");
    write_f32_npy(&x, &[2, 3, 8, 8], |i| (i * 7 % 23) as f32);
    let report = d.path().join("pool.html");
    let o = pool_max_2x2(&x, &d.path().join("y.npy"), &["--report", s(&report)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("pool.html"));
    let html = std::fs::read_to_string(&report).unwrap();
    check_file(&html);
    // x and y.
    assert_eq!(html.matches("<figure class=\"var\"").count(), 2);
    if let Some(b) = chromium() {
        let dom = browse(
            &b,
            &d.path().join("profile"),
            &format!("file://{}", report.display()),
            &["--dump-dom"],
        );
        assert_eq!(text_after(&dom, "id=\"status\">"), "ready");
        assert_eq!(text_after(&dom, "<pre id=\"errors\">"), "");
        let rows: u64 = attrs(&dom, "data-rows")
            .iter()
            .map(|r| r.parse::<u64>().unwrap())
            .sum();
        assert_eq!(dom.matches("class=\"slice rec").count() as u64, rows);
    }
}

#[test]
fn a_report_over_an_input_or_a_folder_is_refused_and_a_failed_run_writes_none() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("x.npy");
    std::fs::copy("examples/program/x.npy", &x).unwrap();
    let before = std::fs::read(&x).unwrap();
    let run = |report: &Path, extra: &[&str]| {
        let mut args = vec![
            "run",
            "examples/program/program.toml",
            "--backend",
            "cpu",
            "--input",
        ];
        let input = format!("x={}", s(&x));
        args.push(&input);
        args.extend_from_slice(&["--out", s(d.path()), "--report", s(report)]);
        args.extend_from_slice(extra);
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        tpb(&args)
    };
    // The report over the input: the collision exit code, the input intact.
    let o = run(&x, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--report"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&x).unwrap(), before);
    // Over an output of the same run.
    let o = run(&d.path().join("y_avg.npy"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A folder.
    let folder = d.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let o = run(&folder, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is a folder"), "{}", stderr(&o));
    // A run that fails (its record budget spent) leaves no report.
    let report = d.path().join("failed.html");
    let o = run(&report, &["--max-records", "2"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!report.exists());
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "only x.npy and the folder: {left:?}");
    // pool: a report over its input.
    let o = tpb(&[
        "pool",
        "--input",
        s(&x),
        "--mode",
        "max",
        "--kernel",
        "2",
        "--output",
        s(&d.path().join("y.npy")),
        "--report",
        s(&x),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn the_worked_example_of_docs_debugging() {
    // docs/debugging.md: the example program with a wrong scale in its AVG
    // record (0.5 for a 2x2 window), found from the report.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("program");
    std::fs::create_dir(&p).unwrap();
    for f in ["program.toml", "sp.bin", "act.bin", "x.npy"] {
        std::fs::copy(Path::new("examples/program").join(f), p.join(f)).unwrap();
    }
    let o = tpb(&["disasm", "examples/program/pool.bin"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("scale=0.25"), "{text}");
    std::fs::write(
        p.join("pool.tpbs"),
        text.replacen("scale=0.25", "scale=0.5", 1),
    )
    .unwrap();
    let o = tpb(&["asm", s(&p.join("pool.tpbs")), "-o", s(&p.join("pool.bin"))]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = d.path().join("report.html");
    let out = d.path().join("out");
    let o = tpb(&[
        "run",
        s(&p.join("program.toml")),
        "--backend",
        "cpu",
        "--out",
        s(&out),
        "--report",
        s(&report),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The symptom: y_avg is twice the mean of each 2x2 window.
    let floats = |f: &Path, n: usize| -> Vec<f32> {
        let b = std::fs::read(f).unwrap();
        b[b.len() - n * 4..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let x = floats(Path::new("examples/program/x.npy"), 128 * 16);
    let y = floats(&out.join("y_avg.npy"), 128 * 4);
    let mean = (x[0] + x[1] + x[4] + x[5]) / 4.0;
    assert_eq!(y[0], 2.0 * mean, "x lane 0 = {:?}", &x[..16]);
    if let Some(b) = chromium() {
        let url = format!(
            "file://{}#select=pool:0&pick=y_avg:0,0",
            std::fs::canonicalize(&report).unwrap().display()
        );
        let dom = browse(&b, &d.path().join("profile"), &url, &["--dump-dom"]);
        assert!(
            dom.contains("scale=0.5"),
            "the selected record shows the bug"
        );
        assert!(dom.contains("class=\"footprint\""));
        let shot = d.path().join("report.png");
        browse(
            &b,
            &d.path().join("profile"),
            &url,
            &[&format!("--screenshot={}", shot.display())],
        );
        let png = std::fs::read(&shot).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
        if std::env::var("UPDATE_DOCS").as_deref() == Ok("1") {
            std::fs::write("docs/report.png", &png).unwrap();
        }
    }
}

/// The benchmark's program of docs/debugging.md, at any size.
#[path = "../../examples/report_program.rs"]
#[allow(dead_code)]
mod report_program;

#[test]
fn a_run_over_the_provenance_bounds_gives_the_why_command_instead() {
    let d = tempfile::tempdir().unwrap();
    // Over the record bound: 8 records a row, 1,300 rows = 10,400 records
    // executed (MAX_WHY_RECORDS is 10,000), an output of 256 × 16 = 4,096
    // elements (at MAX_WHY_ELEMENTS, not over it).
    let records = d.path().join("records");
    let mut outs = tpb_emu::files::Outputs::new();
    tpb_emu::frontend::emit::write_program_into(
        &report_program::program(1_300),
        &records,
        "records",
        &mut outs,
    )
    .unwrap();
    outs.commit().unwrap();
    // Over the element bound: 2×2 max pooling of 1 × 8 × 64 × 64 gives
    // 8 × 32 × 32 = 8,192 output elements in a 3-record program.
    let x = d.path().join("x.npy");
    write_f32_npy(&x, &[1, 8, 64, 64], |i| (i % 23) as f32);
    let elements = d.path().join("elements");
    let o = pool_max_2x2(&x, &d.path().join("y.npy"), &["--emit", s(&elements)]);
    assert!(o.status.success(), "{}", stderr(&o));

    let browser = chromium();
    for (name, program, note, pick) in [
        (
            "records",
            records.join("program.toml"),
            "the run executed 10400 records; the report precomputes chains for at most 10000",
            "y:5,3",
        ),
        (
            "elements",
            elements.join("program.toml"),
            "the outputs have 8192 elements; the report precomputes chains for at most 4096",
            "y:0,2,5,3",
        ),
    ] {
        let report = d.path().join(format!("{name}.html"));
        let o = tpb(&[
            "run",
            s(&program),
            "--backend",
            "cpu",
            "--out",
            s(&d.path().join(format!("{name}-out"))),
            "--report",
            s(&report),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let html = std::fs::read_to_string(&report).unwrap();
        check_file(&html);
        assert!(
            html.contains("\"why\":null,"),
            "{name}: no chain is embedded"
        );
        assert!(html.contains(&format!("\"why_note\":\"{note}\"")), "{name}");
        let command = format!("tpb-emu why {} '{{elem}}'", s(&program));
        assert!(
            html.contains(&format!("\"why_command\":\"{command}\"")),
            "{name}"
        );
        if let Some(b) = &browser {
            // A picked element gives the command for that element, and why.
            let url = format!(
                "file://{}#pick={pick}",
                std::fs::canonicalize(&report).unwrap().display()
            );
            let dom = browse(b, &d.path().join("profile"), &url, &["--dump-dom"]);
            assert_eq!(text_after(&dom, "<pre id=\"errors\">"), "", "{name}");
            let (var, index) = pick.split_once(':').unwrap();
            let elem = format!("{var}[{index}]");
            let expected = format!(
                "provenance: not precomputed \u{2014} run <code class=\"why\">tpb-emu why {} '{elem}'</code> ({note})",
                s(&program)
            );
            assert!(dom.contains(&expected), "{name}: {expected}");
        }
    }
}
