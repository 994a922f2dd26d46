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
const ALLOWED: [(&str, &[&str]); 8] = [
    ("jaus", &[]),
    ("model", &[]),
    ("net", &["jaus", "model"]),
    ("sim", &["jaus", "model", "net"]),
    ("record", &["jaus", "model", "net"]),
    ("conform", &["jaus", "model", "net", "record"]),
    ("ui", &["model", "net", "sim", "record"]),
    (
        "cli",
        &["jaus", "model", "net", "sim", "record", "conform", "ui"],
    ),
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

// The import direction inside `src/ui/` (ARCHITECTURE.md, "ui/ map"): files import each other
// through `super::`, `self::` and `crate::ui::` paths; the circles of that graph (its strongly
// connected components) hold at most two files, so imports run one way: `app/` on top, then
// `panels/`, then the vocabulary (`action.rs`, `settings.rs`, `words.rs`, `sources.rs`, ...).

/// The largest import circle allowed inside `src/ui/`: two files that name each other (a
/// type and the job that fills it, such as `export.rs` and `files.rs`).
const MAX_UI_CIRCLE: usize = 2;

/// A module path under `src/` (`["ui", "panels", "plots"]`) for a file path relative to it
/// (`ui/panels/plots.rs`; `ui/app/mod.rs` is `["ui", "app"]`).
fn module_of(relative: &str) -> Vec<String> {
    let trimmed = relative.trim_end_matches(".rs");
    let mut path: Vec<String> = trimmed.split('/').map(str::to_string).collect();
    if path.last().is_some_and(|l| l == "mod") {
        path.pop();
    }
    path
}

/// The paths a `use` tree (or an inline path) starting at `text` names, each split into its
/// segments: `a::B` gives `[a, B]`, `{a, b::{C, D}}` gives `[a]`, `[b, C]`, `[b, D]`.
fn use_tree(text: &str) -> Vec<Vec<String>> {
    let text = text.trim_start();
    if let Some(inner) = text.strip_prefix('{') {
        // The group up to its closing brace, split at its top-level commas.
        let mut depth = 0;
        let mut items = vec![String::new()];
        for c in inner.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(String::new());
                    continue;
                }
                _ => {}
            }
            items.last_mut().unwrap().push(c);
        }
        return items
            .iter()
            .filter(|i| !i.trim().is_empty())
            .flat_map(|i| use_tree(i))
            .collect();
    }
    let mut segments = Vec::new();
    let mut rest = text;
    loop {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            break;
        }
        segments.push(name.clone());
        rest = &rest[name.len()..];
        match rest.strip_prefix("::") {
            Some(more) if more.starts_with('{') => {
                return use_tree(more)
                    .into_iter()
                    .map(|tail| segments.iter().cloned().chain(tail).collect())
                    .collect();
            }
            Some(more) => rest = more,
            None => break,
        }
    }
    vec![segments]
}

/// The file-level import graph of `files` (module path, source text): for each file, the
/// other files its `super::`, `self::` and `crate::ui::` paths name (outside `//` comments).
/// A path names the longest module it starts with; the `ui` root (the module tree) is no node.
fn ui_imports(files: &[(Vec<String>, String)]) -> Vec<Vec<usize>> {
    let index_of = |path: &[String]| files.iter().position(|(m, _)| m.as_slice() == path);
    let mut edges = vec![Vec::new(); files.len()];
    for (from, (module, text)) in files.iter().enumerate() {
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let mut at = 0;
        while at < code.len() {
            let rest = &code[at..];
            let starts = [("crate::ui::", 0), ("super::", 1), ("self::", 2)];
            let Some((offset, (token, kind))) = starts
                .iter()
                .filter_map(|s| rest.find(s.0).map(|i| (i, *s)))
                .min_by_key(|(i, _)| *i)
            else {
                break;
            };
            // A whole path only: not the `self::` of `super::self::`, not `x_super::`.
            let before = rest[..offset].chars().next_back();
            at += offset + token.len();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut base: Vec<String> = match kind {
                0 => vec!["ui".to_string()],
                1 => module[..module.len() - 1].to_vec(),
                _ => module.clone(),
            };
            while code[at..].starts_with("super::") {
                base.pop();
                at += "super::".len();
            }
            for tail in use_tree(&code[at..]) {
                let mut path: Vec<String> = base.iter().cloned().chain(tail).collect();
                while !path.is_empty() && index_of(&path).is_none() {
                    path.pop();
                }
                if let Some(to) = index_of(&path)
                    && to != from
                    && path != ["ui"]
                    && !edges[from].contains(&to)
                {
                    edges[from].push(to);
                }
            }
        }
    }
    edges
}

/// The strongly connected components of `edges` (Tarjan), each a list of node indices.
fn circles(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.edges[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                self.found.push(component);
            }
        }
    }
    let n = edges.len();
    let mut t = Tarjan {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.found
}

/// The import circles of `files` larger than [`MAX_UI_CIRCLE`], each as its files' module
/// paths (`ui::app`, `ui::panels::plots`), sorted.
fn ui_circles_too_large(files: &[(Vec<String>, String)]) -> Vec<Vec<String>> {
    let mut large: Vec<Vec<String>> = circles(&ui_imports(files))
        .into_iter()
        .filter(|c| c.len() > MAX_UI_CIRCLE)
        .map(|c| {
            let mut names: Vec<String> = c.iter().map(|&i| files[i].0.join("::")).collect();
            names.sort();
            names
        })
        .collect();
    large.sort();
    large
}

#[test]
fn ui_imports_run_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src.join("ui"), &mut paths);
    let files: Vec<(Vec<String>, String)> = paths
        .iter()
        .map(|p| {
            let relative = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (module_of(&relative), std::fs::read_to_string(p).unwrap())
        })
        .collect();
    assert!(files.len() > 30, "src/ui read: {} files", files.len());
    let large = ui_circles_too_large(&files);
    assert!(
        large.is_empty(),
        "import circles in src/ui larger than {MAX_UI_CIRCLE} files (move the shared types \
         into a leaf file; ARCHITECTURE.md, \"ui/ map\"):\n{}",
        large
            .iter()
            .map(|c| format!("  {} files: {}", c.len(), c.join(", ")))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_ui_import_check_sees_a_planted_circle() {
    let file = |path: &str, text: &str| (module_of(path), text.to_string());
    // a -> b -> c -> a through a group, a nested group, `self::` and a comment that must not
    // count; d <-> e is a circle of two, allowed.
    let files = vec![
        file(
            "ui/mod.rs",
            "pub mod a; pub mod b; pub mod c; pub mod d; pub mod e;",
        ),
        file(
            "ui/a.rs",
            "use super::{theme, b::{B, Bee}};\n// use super::e;",
        ),
        file("ui/b.rs", "use crate::ui::c;\nfn f() { self::g(); }"),
        file("ui/c/mod.rs", "mod inner;\nuse self::inner::X;"),
        file("ui/c/inner.rs", "pub fn x() { super::super::a::run(); }"),
        file("ui/d.rs", "use super::e::E;"),
        file("ui/e.rs", "use crate::ui::d::D;"),
        file("ui/theme.rs", ""),
    ];
    assert_eq!(
        ui_circles_too_large(&files),
        vec![vec![
            "ui::a".to_string(),
            "ui::b".to_string(),
            "ui::c".to_string(),
            "ui::c::inner".to_string()
        ]]
    );
    // Without the edge back to `a`, no circle is too large.
    let mut fixed = files.clone();
    fixed[4].1 = "pub fn x() {}".to_string();
    assert!(ui_circles_too_large(&fixed).is_empty());
}
