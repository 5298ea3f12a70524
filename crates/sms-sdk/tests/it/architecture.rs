//! The module boundaries of the workspace's crates, checked on their source: no import cycle
//! among the top-level modules of the library, the command or the emulator; and, in the
//! library, the model (messages, outcomes, issues, receipts) at the bottom, errors beside it,
//! validation and adapters above, and stores knowing only the record contract.
//!
//! A module's dependencies are the `crate::…` paths its files name outside comments and
//! `#[cfg(test)]` blocks; a path through a root re-export (`crate::Error`) counts as the module
//! that defines the item, and an item the crate root defines itself (the command's
//! `crate::Env`) is a node of its own, which imports nothing. The library's `testing` (the
//! shipped test kit) may use everything and is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The library's modules that only support tests: they sit on top of everything.
const TEST_KIT: &[&str] = &["testing"];

/// The crate roots: they declare the modules and import them, and are not modules themselves.
const ROOTS: &[&str] = &["lib", "main"];

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

/// Root re-exports (`pub use client::{Client, …}` or `pub use crate::cli::Cli` in `lib.rs`):
/// item name → defining module.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let code = code(lib).replace('\n', " ");
    for statement in code.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else { continue };
        let path = path.trim_start_matches("crate::");
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

/// The `src/` directory of the workspace crate `name`.
fn src_of(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
}

/// The module graph of the crate whose sources are in `src`, without the modules `left_out`
/// (as nodes and as edges).
fn graph_of(src: &Path, left_out: &[&str]) -> Graph {
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let reexports = root_reexports(&lib);
    let mut files = Vec::new();
    source_files(src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let module = module_of(src, &file);
        if ROOTS.contains(&module.as_str()) || left_out.contains(&module.as_str()) {
            continue;
        }
        let edges = graph.entry(module.clone()).or_default();
        for name in crate_paths(&code(&fs::read_to_string(&file).unwrap())) {
            let target = reexports.get(&name).cloned().unwrap_or(name);
            if target != module && !left_out.contains(&target.as_str()) {
                edges.insert(target);
            }
        }
    }
    graph
}

/// The library's module graph.
fn graph() -> Graph {
    graph_of(&src_of("sms-sdk"), TEST_KIT)
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

/// The modules `node` reaches through its imports, itself excluded unless on a cycle.
fn reachable(graph: &Graph, node: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<&str> = graph.get(node).into_iter().flatten().map(String::as_str).collect();
    while let Some(next) = stack.pop() {
        if seen.insert(next.to_owned()) {
            stack.extend(graph.get(next).into_iter().flatten().map(String::as_str));
        }
    }
    seen
}

/// The sets of modules that import each other (through any path), each with more than one
/// module: empty when the graph has no cycle.
fn tangles(graph: &Graph) -> Vec<BTreeSet<String>> {
    let reach: BTreeMap<&str, BTreeSet<String>> = graph.keys().map(|n| (n.as_str(), reachable(graph, n))).collect();
    let mut tangles: Vec<BTreeSet<String>> = Vec::new();
    for (node, reached) in &reach {
        if tangles.iter().any(|t| t.contains(*node)) {
            continue;
        }
        let tangle: BTreeSet<String> = reached
            .iter()
            .filter(|other| reach.get(other.as_str()).is_some_and(|back| back.contains(*node)))
            .cloned()
            .chain(std::iter::once((*node).to_owned()))
            .collect();
        if tangle.len() > 1 {
            tangles.push(tangle);
        }
    }
    tangles
}

/// Fails when two modules of the crate in `src` import each other, naming every tangle and one
/// cycle through it.
fn assert_acyclic(src: &Path, left_out: &[&str], at_least: usize) {
    let graph = graph_of(src, left_out);
    assert!(graph.len() >= at_least, "the source walk of {} found too few modules: {graph:?}", src.display());
    let tangles = tangles(&graph);
    if let Some(cycle) = find_cycle(&graph) {
        let sets: Vec<String> =
            tangles.iter().map(|t| format!("{{{}}}", t.iter().cloned().collect::<Vec<_>>().join(", "))).collect();
        panic!(
            "import cycle in {}: {}\nmodules that import each other: {}\nthe module graph: {graph:#?}",
            src.display(),
            cycle.join(" → "),
            sets.join(", ")
        );
    }
    assert!(tangles.is_empty(), "{tangles:?}");
}

#[test]
fn the_library_modules_import_each_other_without_a_cycle() {
    assert_acyclic(&src_of("sms-sdk"), TEST_KIT, 11);
}

#[test]
fn the_command_modules_import_each_other_without_a_cycle() {
    assert_acyclic(&src_of("sms-sdk-cli"), &[], 10);
}

#[test]
fn the_emulator_modules_import_each_other_without_a_cycle() {
    assert_acyclic(&src_of("sms-sdk-emulator"), &[], 10);
}

#[test]
fn stores_know_only_the_record_contract() {
    let graph = graph();
    let store = &graph["store"];
    for above in ["client", "hooks", "retry", "validate", "adapter", "provider", "webhook", "limit"] {
        assert!(!store.contains(above), "the store area imports `{above}`: {store:?}");
    }
}

#[test]
fn the_model_sits_at_the_bottom() {
    let graph = graph();
    for (model, allowed) in [
        ("outcome", &["redact", "BoxError"][..]),
        ("issue", &[][..]),
        ("attempt", &["outcome"][..]),
        ("error", &["attempt", "outcome", "issue", "redact", "BoxError"][..]),
    ] {
        let edges: Vec<_> = graph[model].iter().filter(|m| !allowed.contains(&m.as_str())).collect();
        assert!(edges.is_empty(), "`{model}` imports {edges:?}, above the model");
    }
}

#[test]
fn the_checker_sees_cycles_groups_and_reexports() {
    let graph: Graph = [("a", &["b"][..]), ("b", &["c"][..]), ("c", &["a"][..]), ("d", &["a"][..]), ("e", &["f"][..])]
        .into_iter()
        .map(|(n, e)| (n.to_owned(), e.iter().map(|s| (*s).to_owned()).collect()))
        .collect();
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    let abc: BTreeSet<String> = ["a", "b", "c"].into_iter().map(str::to_owned).collect();
    assert_eq!(tangles(&graph), [abc]);
    let paths = crate_paths("use crate::{a::B, c};\nlet x = crate::d::e(); // crate::f\n$crate::g");
    assert_eq!(paths, ["a", "c", "d", "f"]); // comments are stripped by `code`, not here
    assert_eq!(crate_paths(&code("x // crate::f")), Vec::<String>::new());
    let map = root_reexports("pub use client::{Client, ClientBuilder};\npub use retry::RetryPolicy;");
    assert_eq!(map["ClientBuilder"], "client");
    assert_eq!(map["RetryPolicy"], "retry");
    assert_eq!(root_reexports("pub use crate::cli::Cli;")["Cli"], "cli");
}
