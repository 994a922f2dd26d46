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

// The import direction inside every folder of `src/` (ARCHITECTURE.md, "ui/ map", how the
// direction is checked): each file is a node; a file names another through `crate::`,
// `super::`, `self::` and child-module paths, in `use` trees and inline. A path that lands on
// a name a module file re-exports (`pub use x::{Y, Z}`) or imports is followed to the file
// that defines it. A module's file naming its own submodules is the module tree, no edge. The
// circles of that graph (its strongly connected components) hold at most two files, so
// imports run one way: the composite on top, the parts it is made of in leaf files below it.

/// The largest import circle allowed in `src/`: two files that name each other (a type and
/// the job that fills it, such as `ui/export.rs` and `ui/files.rs`).
const MAX_CIRCLE: usize = 2;

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

/// The items a `use` tree (or an inline path) starting at `text` names, each as its segments
/// and the name it is known by: `a::B as C` gives `([a, B], C)`, `{a, b::{self, D}}` gives
/// `([a], a)`, `([b], b)`, `([b, D], D)`.
fn use_items(text: &str) -> Vec<(Vec<String>, String)> {
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
            .flat_map(|i| use_items(i))
            .collect();
    }
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut segments: Vec<String> = Vec::new();
    let mut rest = text;
    loop {
        let name = ident(rest);
        if name.is_empty() {
            break;
        }
        rest = &rest[name.len()..];
        if name == "self" && !segments.is_empty() {
            // `b::{self, D}`: `self` is `b` itself.
            break;
        }
        segments.push(name);
        match rest.strip_prefix("::") {
            Some(more) if more.trim_start().starts_with('{') => {
                return use_items(more)
                    .into_iter()
                    .map(|(tail, known)| (segments.iter().cloned().chain(tail).collect(), known))
                    .collect();
            }
            Some(more) => rest = more,
            None => break,
        }
    }
    let alias = rest
        .trim_start()
        .strip_prefix("as ")
        .map(|a| ident(a.trim_start()));
    let known = alias.unwrap_or_else(|| segments.last().cloned().unwrap_or_default());
    vec![(segments, known)]
}

/// The paths a `use` tree (or an inline path) starting at `text` names, each split into its
/// segments: `a::B` gives `[a, B]`, `{a, b::{C, D}}` gives `[a]`, `[b, C]`, `[b, D]`.
fn use_tree(text: &str) -> Vec<Vec<String>> {
    use_items(text).into_iter().map(|(path, _)| path).collect()
}

/// One source file read for the import graph: its module path, its lines outside `//`
/// comments, and the module each line sits in (its own, or an inline `mod x { .. }` in it).
/// The lines of a `#[cfg(test)]` inline module are left out: unit tests are not part of the
/// library's module graph (they may name the composite they test).
struct Source {
    module: Vec<String>,
    lines: Vec<(Vec<String>, String)>,
}

impl Source {
    fn read(module: Vec<String>, text: &str) -> Self {
        // The inline modules the line is in: indentation, name, and whether it is for tests.
        let mut inline: Vec<(usize, String, bool)> = Vec::new();
        let mut lines: Vec<(Vec<String>, String)> = Vec::new();
        for line in text.lines() {
            let mut code = line.split("//").next().unwrap_or("").to_string();
            let indent = code.len() - code.trim_start().len();
            if inline
                .last()
                .is_some_and(|(i, ..)| *i == indent && code.trim() == "}")
            {
                inline.pop();
            }
            let here: Vec<String> = module
                .iter()
                .cloned()
                .chain(inline.iter().map(|(_, n, _)| n.clone()))
                .collect();
            let for_tests = lines
                .last()
                .is_some_and(|(_, previous)| previous.trim() == "#[cfg(test)]");
            if inline.iter().any(|(.., test)| *test) {
                code.clear();
            }
            lines.push((here, code.clone()));
            let words: Vec<&str> = code.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "mod");
            if let Some(at) = at
                && words.get(at + 2) == Some(&"{")
                && words[..at]
                    .iter()
                    .all(|w| w.starts_with("pub") || w.starts_with("#["))
            {
                inline.push((indent, words[at + 1].to_string(), for_tests));
            }
        }
        Self { module, lines }
    }
}

/// Where a path written in module `here` starts: `crate::a` at the root, `super::a` in the
/// parent, `self::a` in `here`, `a::b` in `here` when `a` is a child module of it (one of
/// `modules`); `None` for a path into another crate (`std::`, `glam::`).
fn absolute(here: &[String], path: &[String], modules: &[Vec<String>]) -> Option<Vec<String>> {
    let mut base: Vec<String> = here.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let child: Vec<String> = here.iter().cloned().chain([first.to_string()]).collect();
            if !modules.contains(&child) {
                return None;
            }
        }
        None => return None,
    }
    Some(base.into_iter().chain(rest.iter().cloned()).collect())
}

/// One `use` statement of a [`Source`].
struct Use {
    /// The module it is written in.
    here: Vec<String>,
    /// Whether it is `pub` (any visibility): a re-export.
    public: bool,
    /// Its items and the names they are known by.
    items: Vec<(Vec<String>, String)>,
    /// The lines it spans, first and last.
    lines: (usize, usize),
}

/// The `use` statements of `source`.
fn use_statements(source: &Source) -> Vec<Use> {
    let mut found = Vec::new();
    let mut n = 0;
    while n < source.lines.len() {
        let (here, code) = &source.lines[n];
        let trimmed = code.trim_start();
        let (public, rest) = if let Some(after) = trimmed.strip_prefix("pub") {
            let after = if after.starts_with('(') {
                after.split_once(')').map_or("", |(_, r)| r)
            } else {
                after
            };
            (true, after.trim_start())
        } else {
            (false, trimmed)
        };
        let Some(tree) = rest.strip_prefix("use ") else {
            n += 1;
            continue;
        };
        let mut text = tree.to_string();
        let mut end = n;
        while !text.contains(';') && end + 1 < source.lines.len() {
            end += 1;
            text.push(' ');
            text.push_str(&source.lines[end].1);
        }
        let text = text.split(';').next().unwrap_or("");
        found.push(Use {
            here: here.clone(),
            public,
            items: use_items(text),
            lines: (n, end),
        });
        n = end + 1;
    }
    found
}

/// The file-level import graph of `files` (module path, source text), resolving re-exports:
/// for each file, the other files its paths name. A path names the longest module it starts
/// with, or, when the name after that module is one the module's file imports or re-exports,
/// the file that name leads to. The crate root (`lib.rs`, the module tree) is no node. A
/// module re-exporting its own children (`pub use x::Y` in `x`'s parent) is the module tree
/// too, not an edge: the files that name `Y` through it get the edge to `x`.
fn imports(files: &[(Vec<String>, String)]) -> Vec<Vec<usize>> {
    let modules: Vec<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
    let index_of = |path: &[String]| modules.iter().position(|m| m.as_slice() == path);
    let sources: Vec<Source> = files
        .iter()
        .map(|(m, t)| Source::read(m.clone(), t))
        .collect();
    let statements: Vec<_> = sources.iter().map(use_statements).collect();
    // The names each file brings into its module's scope, and where they lead.
    let names: Vec<Vec<(String, Vec<String>)>> = sources
        .iter()
        .zip(&statements)
        .map(|(source, uses)| {
            uses.iter()
                .filter(|u| u.here == source.module)
                .flat_map(|u| {
                    u.items.iter().filter_map(|(path, known)| {
                        absolute(&u.here, path, &modules).map(|to| (known.clone(), to))
                    })
                })
                .collect()
        })
        .collect();
    let resolve = |path: Vec<String>| -> Option<usize> {
        let mut path = path;
        for _ in 0..16 {
            let mut k = path.len();
            while k > 0 && index_of(&path[..k]).is_none() {
                k -= 1;
            }
            let file = index_of(&path[..k])?;
            let Some(name) = path.get(k) else {
                return Some(file);
            };
            let Some((_, to)) = names[file].iter().find(|(known, _)| known == name) else {
                return Some(file);
            };
            path = to
                .iter()
                .cloned()
                .chain(path[k + 1..].iter().cloned())
                .collect();
        }
        None
    };
    let mut edges = vec![Vec::new(); files.len()];
    let add = |from: usize, to: Option<usize>, edges: &mut Vec<Vec<usize>>| {
        if let Some(to) = to
            && to != from
            && !modules[to].is_empty()
            && !modules[to].starts_with(&modules[from])
            && !edges[from].contains(&to)
        {
            edges[from].push(to);
        }
    };
    for (from, source) in sources.iter().enumerate() {
        let mut in_use = vec![false; source.lines.len()];
        for u in &statements[from] {
            in_use[u.lines.0..=u.lines.1]
                .iter_mut()
                .for_each(|seen| *seen = true);
            for (path, _) in &u.items {
                let Some(to) = absolute(&u.here, path, &modules) else {
                    continue;
                };
                let own_child = to.len() > u.here.len() && to.starts_with(&u.here);
                if u.public && own_child && u.here == source.module {
                    continue;
                }
                add(from, resolve(to), &mut edges);
            }
        }
        for (n, (here, code)) in source.lines.iter().enumerate() {
            if in_use[n] {
                continue;
            }
            for (at, _) in code.match_indices("::") {
                // The path that ends here: its first segment starts after a non-path character.
                let start = code[..at]
                    .char_indices()
                    .rev()
                    .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == ':'))
                    .map_or(0, |(i, c)| i + c.len_utf8());
                let head = &code[start..at];
                if head.contains("::") || head.is_empty() {
                    continue;
                }
                for path in use_tree(&code[start..]) {
                    // `cli::gui::GuiArgs` after `use crate::cli;`: the name the file imported.
                    let imported = names[from].iter().find(|(known, _)| *known == path[0]);
                    let path = match imported {
                        Some((_, to)) if *here == source.module => {
                            let root = ["crate".to_string()];
                            root.iter().chain(to).chain(&path[1..]).cloned().collect()
                        }
                        _ => path,
                    };
                    if let Some(to) = absolute(here, &path, &modules) {
                        add(from, resolve(to), &mut edges);
                    }
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

/// The import circles of `files` larger than [`MAX_CIRCLE`], each as its files' module paths
/// (`net::client::arm`, `ui::panels::plots`), sorted.
fn circles_too_large(files: &[(Vec<String>, String)]) -> Vec<Vec<String>> {
    let mut large: Vec<Vec<String>> = circles(&imports(files))
        .into_iter()
        .filter(|c| c.len() > MAX_CIRCLE)
        .map(|c| {
            let mut names: Vec<String> = c.iter().map(|&i| files[i].0.join("::")).collect();
            names.sort();
            names
        })
        .collect();
    large.sort();
    large
}

/// Every library file under `src/` (not `main.rs`, the binary; `lib.rs` is the root, no node),
/// as (module path, source text).
fn library_files() -> Vec<(Vec<String>, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    paths
        .iter()
        .filter_map(|p| {
            let relative = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if relative == "main.rs" {
                return None;
            }
            let module = if relative == "lib.rs" {
                Vec::new()
            } else {
                module_of(&relative)
            };
            Some((module, std::fs::read_to_string(p).unwrap()))
        })
        .collect()
}

#[test]
fn imports_run_one_way_in_every_folder() {
    let files = library_files();
    assert!(files.len() > 150, "src read: {} files", files.len());
    for layer in ["ui", "net", "jaus", "model", "cli"] {
        assert!(
            files
                .iter()
                .filter(|(m, _)| m[..].first().is_some_and(|l| l == layer))
                .count()
                > 3,
            "src/{layer} read"
        );
    }
    let large = circles_too_large(&files);
    assert!(
        large.is_empty(),
        "import circles in src larger than {MAX_CIRCLE} files (move the shared types into a \
         leaf file; ARCHITECTURE.md, \"ui/ map\"):\n{}",
        large
            .iter()
            .map(|c| format!("  {} files: {}", c.len(), c.join(", ")))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// `path` (relative to `src/`) with `text`, as [`library_files`] reads it.
fn file(path: &str, text: &str) -> (Vec<String>, String) {
    (module_of(path), text.to_string())
}

#[test]
fn the_import_check_sees_a_planted_circle_in_ui() {
    // a -> b -> c::inner -> a through a group, a nested group, `super::super::` and a comment
    // that must not count; `c` naming its own child `inner` is the module tree, no edge (it
    // would make `c` part of the circle); d <-> e is a circle of two, allowed.
    let files = vec![
        file(
            "ui/mod.rs",
            "pub mod a; pub mod b; pub mod c; pub mod d; pub mod e;",
        ),
        file(
            "ui/a.rs",
            "use super::{theme, b::{B, Bee}};\n// use super::e;",
        ),
        file("ui/b.rs", "use crate::ui::c::inner;\nfn f() { self::g(); }"),
        file("ui/c/mod.rs", "mod inner;\nuse self::inner::X;"),
        file("ui/c/inner.rs", "pub fn x() { super::super::a::run(); }"),
        file("ui/d.rs", "use super::e::E;"),
        file("ui/e.rs", "use crate::ui::d::D;"),
        file("ui/theme.rs", ""),
    ];
    assert_eq!(
        circles_too_large(&files),
        vec![vec![
            "ui::a".to_string(),
            "ui::b".to_string(),
            "ui::c::inner".to_string()
        ]]
    );
    // Without the edge back to `a`, no circle is too large.
    let mut fixed = files.clone();
    fixed[4].1 = "pub fn x() {}".to_string();
    assert!(circles_too_large(&fixed).is_empty());
}

#[test]
fn the_import_check_sees_a_planted_circle_of_three_files_in_net() {
    // net/client/{arm, commands, jog}, the circle issue 47 found there: `arm` names
    // `super::commands` in an expression, `commands` names `crate::net::client::jog::Jog` in a
    // `use` (its test module's `use super::*` is no edge), `jog` names
    // `super::arm::FollowedArm` in a `use` inside a function. `arm` also names the composite
    // (`super::Client`) and the composite calls into `arm`: a file naming its own submodules
    // is the module tree, no edge, so that is no circle.
    let files = vec![
        file("lib.rs", "pub mod net;"),
        file("net/mod.rs", "pub mod client;"),
        file(
            "net/client/mod.rs",
            "mod arm;\nmod commands;\nmod jog;\npub struct Client;\nfn tick() { arm::f(); }",
        ),
        file(
            "net/client/arm.rs",
            "fn f(c: &super::Client) { super::commands::send(c); }",
        ),
        file(
            "net/client/commands.rs",
            "use crate::net::client::jog::Jog;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}",
        ),
        file(
            "net/client/jog.rs",
            "fn g() {\n    use super::arm::FollowedArm;\n}",
        ),
    ];
    assert_eq!(
        circles_too_large(&files),
        vec![vec![
            "net::client::arm".to_string(),
            "net::client::commands".to_string(),
            "net::client::jog".to_string()
        ]]
    );
    // `jog` naming the composite (`super::Client`) instead is a pair with it, allowed.
    let mut fixed = files.clone();
    fixed[5].1 = "fn g(_: super::Client) {}".to_string();
    assert!(circles_too_large(&fixed).is_empty());
}

#[test]
fn the_import_check_follows_pub_use_re_exports() {
    // model/jog/mod.rs re-exports its parts; `request` and `gate` name them through it
    // (`super::Gates`, `crate::model::jog::JogRequest`), and `state` (outside the folder) is
    // named by `gate` and names `request` through the re-export too: a circle of three files
    // that only exists once the re-exports are followed to the files that define the names.
    let files = vec![
        file("lib.rs", "pub mod model;"),
        file("model/mod.rs", "pub mod jog;\npub mod state;"),
        file(
            "model/jog/mod.rs",
            "mod gate;\nmod request;\npub use gate::{Gate, Gates};\npub use request::JogRequest as Request;",
        ),
        file(
            "model/jog/request.rs",
            "use super::Gates;\npub struct JogRequest;",
        ),
        file(
            "model/jog/gate.rs",
            "use crate::model::state::ArmState;\npub struct Gates;",
        ),
        file(
            "model/state.rs",
            "pub struct ArmState(crate::model::jog::Request);",
        ),
    ];
    assert_eq!(
        circles_too_large(&files),
        vec![vec![
            "model::jog::gate".to_string(),
            "model::jog::request".to_string(),
            "model::state".to_string()
        ]]
    );
    // Without following the re-exports, each file names only `model/jog/mod.rs` and the
    // circle cannot be seen: the re-export is what the check must follow.
    let mut unfollowed = files.clone();
    unfollowed[2].1 = "mod gate;\nmod request;\npub struct Gates;\npub struct Request;".to_string();
    assert!(circles_too_large(&unfollowed).is_empty());
}
