//! The crate's top-level modules form no cycle: reads `src/`, follows the module tree from
//! `lib.rs`, and collects which top-level modules each one names through `crate::` or a `super::`
//! chain that climbs to the crate root. Test-only code may reach anywhere, so `#[cfg(test)]` items
//! (and the files of `#[cfg(test)] mod x;`) are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn top_level_modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = crate_graph(&src);
    for expected in ["message", "tokens", "convert", "formats", "napi"] {
        assert!(graph.contains_key(expected), "module {expected} not found in {graph:?}");
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("top-level modules form a cycle: {}", cycle.join(" → "));
    }
}

/// The graph of the crate whose root is `src/lib.rs`: each top-level module and the ones it uses.
fn crate_graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    let root = read(&src.join("lib.rs"));
    let tokens = tokens(&strip(&root));
    for (name, file) in declared_files(&tokens, src) {
        let mut uses = BTreeSet::new();
        walk(&file, std::slice::from_ref(&name), &mut uses);
        uses.remove(&name);
        graph.insert(name, uses);
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for uses in graph.values_mut() {
        uses.retain(|u| modules.contains(u));
    }
    graph
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The file of module `path` (its segments below the crate root) and of its non-test submodules:
/// adds to `uses` the top-level modules they name.
fn walk(file: &Path, path: &[String], uses: &mut BTreeSet<String>) {
    let tokens = tokens(&strip(&read(file)));
    if tokens.starts_with(&["#", "!", "[", "cfg", "(", "test", ")", "]"].map(String::from)) {
        return;
    }
    scan(&tokens, path, uses);
    let dir = if file.file_name().is_some_and(|n| n == "mod.rs") {
        file.parent().unwrap().to_path_buf()
    } else {
        file.with_extension("")
    };
    for (name, child) in declared_files(&tokens, &dir) {
        let mut child_path = path.to_vec();
        child_path.push(name);
        walk(&child, &child_path, uses);
    }
}

/// `mod x;` declarations outside test-only code, with the file each names under `dir`.
fn declared_files(tokens: &[String], dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if let Some(end) = test_item_end(tokens, i) {
            i = end;
            continue;
        }
        if tokens[i] == "mod" && tokens.get(i + 2).is_some_and(|t| t == ";") {
            let name = tokens[i + 1].clone();
            let flat = dir.join(format!("{name}.rs"));
            let file = if flat.exists() { flat } else { dir.join(&name).join("mod.rs") };
            out.push((name, file));
        }
        i += 1;
    }
    out
}

/// Adds to `uses` the top-level modules named in `tokens`, the code of module `path`: paths that
/// start with `crate::` (also in a `use crate::{a, b}` group) and `super::` chains that reach the
/// crate root. Inline modules deepen the path; test-only items are skipped.
fn scan(tokens: &[String], path: &[String], uses: &mut BTreeSet<String>) {
    // Inline modules open at a brace depth; `path` grows while inside them.
    let mut path = path.to_vec();
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        if let Some(end) = test_item_end(tokens, i) {
            i = end;
            continue;
        }
        let t = tokens[i].as_str();
        match t {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if inline.last() == Some(&depth) {
                    inline.pop();
                    path.pop();
                }
            }
            "mod" if tokens.get(i + 2).is_some_and(|t| t == "{") => {
                path.push(tokens[i + 1].clone());
                inline.push(depth);
            }
            "crate" | "$crate" if tokens.get(i + 1).is_some_and(|t| t == "::") => {
                roots_after(tokens, i + 2, uses);
            }
            "super" if i == 0 || tokens[i - 1] != "::" => {
                let mut j = i;
                let mut up = 0;
                while tokens.get(j).is_some_and(|t| t == "super") && tokens.get(j + 1).is_some_and(|t| t == "::") {
                    up += 1;
                    j += 2;
                }
                // Fewer steps stay inside the top-level module this code belongs to.
                if up == path.len() {
                    roots_after(tokens, j, uses);
                }
                i = j.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The first segments of the path(s) starting at `tokens[at]`: one name, or each name of a group.
fn roots_after(tokens: &[String], at: usize, uses: &mut BTreeSet<String>) {
    match tokens.get(at).map(String::as_str) {
        Some("{") => {
            let mut depth = 0;
            let mut expect_name = true;
            for t in &tokens[at..] {
                match t.as_str() {
                    "{" => {
                        depth += 1;
                        expect_name = depth == 1;
                    }
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    "," if depth == 1 => expect_name = true,
                    name if expect_name && depth == 1 => {
                        uses.insert(name.to_string());
                        expect_name = false;
                    }
                    _ => {}
                }
            }
        }
        Some(name) if is_ident(name) => {
            uses.insert(name.to_string());
        }
        _ => {}
    }
}

/// When `tokens[i]` starts a `#[cfg(test)]` item: the index just past it (past its `;` or its
/// braced body, whichever ends it first).
fn test_item_end(tokens: &[String], i: usize) -> Option<usize> {
    let attr = ["#", "[", "cfg", "(", "test", ")", "]"];
    if tokens.len() < i + attr.len() || !tokens[i..i + attr.len()].iter().zip(attr).all(|(t, a)| t == a) {
        return None;
    }
    let mut depth = 0;
    for (j, t) in tokens.iter().enumerate().skip(i + attr.len()) {
        match t.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            ";" if depth == 0 => return Some(j + 1),
            _ => {}
        }
    }
    Some(tokens.len())
}

fn is_ident(t: &str) -> bool {
    t.starts_with(|c: char| c.is_alphabetic() || c == '_') && t.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Rust source with comments, strings and character literals blanked out (lines kept).
fn strip(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !prev_is_ident(&chars, i) && raw_start(&chars, i + 1) {
            let mut j = i + 1;
            let mut hashes = 0;
            while chars[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            while j < chars.len() && !(chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#'))) {
                blank(&mut out, chars[j]);
                j += 1;
            }
            out.push(' ');
            i = j + 1 + hashes;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if let Some(&c) = chars.get(i) {
                    blank(&mut out, c);
                }
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal (a lifetime has no closing quote two characters on).
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_is_ident(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// Whether `chars[at..]` is `#*"`: the rest of a raw string's opening.
fn raw_start(chars: &[char], at: usize) -> bool {
    let mut j = at;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    chars.get(j) == Some(&'"')
}

/// Identifiers (with `$crate`), `::`, and single punctuation characters.
fn tokens(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' || (c == '$' && chars.get(i + 1).is_some_and(|n| n.is_alphabetic())) {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

/// A cycle of `graph`, as the modules along it with the first repeated at the end.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit<'g>(
        graph: &'g Graph,
        node: &'g str,
        marks: &mut BTreeMap<&'g str, Mark>,
        stack: &mut Vec<&'g str>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = stack.iter().position(|&n| n == node).unwrap();
                let mut cycle: Vec<String> = stack[from..].iter().map(|n| n.to_string()).collect();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node, Mark::Open);
        stack.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(graph, next, marks, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        marks.insert(node, Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    graph.keys().find_map(|node| visit(graph, node, &mut marks, &mut Vec::new()))
}

#[cfg(test)]
mod checker {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> Graph {
        edges.iter().map(|(from, to)| (from.to_string(), to.iter().map(|t| t.to_string()).collect())).collect()
    }

    #[test]
    fn names_the_cycle_of_a_graph_that_has_one() {
        let g = graph(&[("a", &["b"]), ("b", &["c"]), ("c", &["a", "d"]), ("d", &[])]);
        assert_eq!(find_cycle(&g), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    }

    #[test]
    fn a_layered_graph_has_none() {
        let g = graph(&[("a", &["b", "c"]), ("b", &["c"]), ("c", &[]), ("d", &["a", "c"])]);
        assert_eq!(find_cycle(&g), None);
    }

    #[test]
    fn reads_uses_from_code_but_not_from_tests_comments_or_strings() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path();
        let write = |path: &str, text: &str| {
            let file = src.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        };
        write("lib.rs", "pub mod a;\npub mod b;\nmod c;\n#[cfg(test)]\nmod d;\n");
        write(
            "a/mod.rs",
            "mod inner;\nmod x { fn f() { super::super::c::g(); } }\n#[cfg(test)]\nmod tests { use crate::b; }\n",
        );
        write("a/inner.rs", "use crate::{b::X, c};\n// crate::d\nconst S: &str = \"crate::d\";\nfn f<'a>(c: char) -> bool { c == '{' }\n");
        write("b.rs", "#[cfg(test)]\nmod tests;\npub struct X;\nfn f() { super::a::y(); }\n");
        write("b/tests.rs", "use crate::c;\n");
        write("c.rs", "#![cfg(test)]\nuse crate::a;\n");
        write("d.rs", "use crate::a;\n");
        let g = crate_graph(src);
        assert_eq!(g, graph(&[("a", &["b", "c"]), ("b", &["a"]), ("c", &[])]));
        assert_eq!(find_cycle(&g), Some(vec!["a".into(), "b".into(), "a".into()]));
    }
}
