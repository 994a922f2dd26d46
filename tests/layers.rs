//! The module graph, read from the source: every `crate::<module>` path in `src/<layer>/` names
//! its own layer or one below it. The layers, lowest first (ARCHITECTURE.md, "Layers"):
//! `jaus` (pure wire formats) < `model` (domain facts) < `net` (the only owner of sockets, the
//! wire/domain boundary) < `sim` < `record` < `ui` < `cli`. `sim` and `record` sit side by
//! side: neither imports the other.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::path::Path;

/// Each layer and the layers it may import (besides itself).
const ALLOWED: [(&str, &[&str]); 7] = [
    ("jaus", &[]),
    ("model", &[]),
    ("net", &["jaus", "model"]),
    ("sim", &["jaus", "model", "net"]),
    ("record", &["jaus", "model", "net"]),
    ("ui", &["model", "net", "sim", "record"]),
    ("cli", &["jaus", "model", "net", "sim", "record", "ui"]),
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The layers named by `crate::<name>` in `text`, outside `//` comments.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            found.push((n + 1, name));
            rest = after;
        }
    }
    found
}

#[test]
fn no_module_imports_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (layer, allowed) in ALLOWED {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "no sources under src/{layer}");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (line, name) in crate_paths(&text) {
                let known = ALLOWED.iter().any(|(l, _)| *l == name);
                if known && name != layer && !allowed.contains(&name.as_str()) {
                    violations.push(format!(
                        "{}:{line}: src/{layer} imports crate::{name}",
                        file.display()
                    ));
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_layer_check_sees_an_upward_import() {
    let found = crate_paths("use crate::ui::theme::Theme; // crate::cli in a comment");
    assert_eq!(found, vec![(1, "ui".to_string())]);
}
