//! The library's module boundaries, checked on the library's source: the model
//! (messages, outcomes, issues, receipts) at the bottom, errors beside it, validation and
//! adapters above, stores knowing only the record contract, and no import cycle among the
//! library's modules.
//!
//! A module's dependencies are the `crate::…` paths its files name outside comments and
//! `#[cfg(test)]` blocks; a path through a root re-export (`crate::Error`) counts as the module
//! that defines the item. `testing` (the shipped test kit) may use everything and is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Modules that only support tests: they sit on top of everything.
const TEST_KIT: &[&str] = &["testing"];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn source_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The top-level module a file belongs to (`src/store/redis/list.rs` → `store`).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// The code of a file without comments and without its `#[cfg(test)]` items (tests come last).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines().map(|line| line.split_once("//").map_or(line, |(code, _)| code)).collect::<Vec<_>>().join("\n")
}

/// Every name after `crate::` in `code`, with groups expanded: `crate::{a::B, c}` gives `a`, `c`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let preceded_by_ident =
            rest[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        rest = &rest[at + "crate::".len()..];
        if preceded_by_ident {
            continue; // `$crate::` in a macro, or `some_crate::`
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                names.push(leading_ident(item.trim()));
            }
        } else {
            names.push(leading_ident(rest));
        }
    }
    names.retain(|n| !n.is_empty() && n != "self");
    names
}

fn leading_ident(text: &str) -> String {
    text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// Root re-exports (`pub use client::{Client, …}` in `lib.rs`): item name → defining module.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let code = code(lib).replace('\n', " ");
    for statement in code.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else { continue };
        let module = leading_ident(path);
        let items = path.split_once('{').map_or_else(
            || vec![path.rsplit("::").next().unwrap_or_default().to_owned()],
            |(_, group)| group.trim_end_matches('}').split(',').map(|i| leading_ident(i.trim())).collect(),
        );
        for item in items {
            map.insert(item, module.clone());
        }
    }
    map
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let reexports = root_reexports(&lib);
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let module = module_of(&src, &file);
        if module == "lib" || TEST_KIT.contains(&module.as_str()) {
            continue;
        }
        let edges = graph.entry(module.clone()).or_default();
        for name in crate_paths(&code(&fs::read_to_string(&file).unwrap())) {
            let target = reexports.get(&name).cloned().unwrap_or(name);
            if target != module && !TEST_KIT.contains(&target.as_str()) {
                edges.insert(target);
            }
        }
    }
    graph
}

/// One cycle in `graph`, if there is any.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(node: &str, graph: &Graph, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_library_modules_import_each_other_without_a_cycle() {
    let graph = graph();
    assert!(graph.len() > 10, "the source walk found too few modules: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle: {}\nthe module graph: {graph:#?}", cycle.join(" → "));
    }
}

#[test]
fn stores_know_only_the_record_contract() {
    let graph = graph();
    let store = &graph["store"];
    for above in ["client", "failover", "coalesce", "hooks", "retry", "validate", "adapter", "provider", "webhook"] {
        assert!(!store.contains(above), "the store area imports `{above}`: {store:?}");
    }
}

#[test]
fn the_model_sits_at_the_bottom() {
    let graph = graph();
    for (model, allowed) in [
        ("outcome", &["boxed", "redact"][..]),
        ("issue", &[][..]),
        ("error", &["boxed", "outcome", "issue", "redact"][..]),
    ] {
        let edges: Vec<_> = graph[model].iter().filter(|m| !allowed.contains(&m.as_str())).collect();
        assert!(edges.is_empty(), "`{model}` imports {edges:?}, above the model");
    }
}

#[test]
fn the_checker_sees_cycles_groups_and_reexports() {
    let graph: Graph = [("a", &["b"][..]), ("b", &["c"][..]), ("c", &["a"][..]), ("d", &[][..])]
        .into_iter()
        .map(|(n, e)| (n.to_owned(), e.iter().map(|s| (*s).to_owned()).collect()))
        .collect();
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    let paths = crate_paths("use crate::{a::B, c};\nlet x = crate::d::e(); // crate::f\n$crate::g");
    assert_eq!(paths, ["a", "c", "d", "f"]); // comments are stripped by `code`, not here
    assert_eq!(crate_paths(&code("x // crate::f")), Vec::<String>::new());
    let map = root_reexports("pub use client::{Client, ClientBuilder};\npub use retry::RetryPolicy;");
    assert_eq!(map["ClientBuilder"], "client");
    assert_eq!(map["RetryPolicy"], "retry");
}
