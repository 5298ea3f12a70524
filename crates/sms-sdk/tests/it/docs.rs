//! The repository explains itself: every behavior test (`t057_…`) has its line in
//! `docs/behavior.md`, every example is indexed and run by a test, and no file points to a
//! document outside the repository.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The numbered behaviors `docs/behavior.md` describes: T1 to T307.
const BEHAVIORS: std::ops::RangeInclusive<u32> = 1..=307;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` with one of `extensions`, skipping build output and VCS data.
fn files(dir: &Path, extensions: &[&str], found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "node_modules") {
                files(&path, extensions, found);
            }
        } else if path.extension().is_some_and(|e| extensions.iter().any(|x| e == *x)) {
            found.push(path);
        }
    }
}

/// The behavior numbers a piece of source names in test names: `t034_and_t035_bodies` gives 34
/// and 35. A number counts when `t` + three digits + `_` starts a word or follows `_`.
fn test_numbers(text: &str) -> BTreeSet<u32> {
    let bytes = text.as_bytes();
    let mut numbers = BTreeSet::new();
    for (at, _) in text.match_indices('t') {
        let starts_word = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        let digits = bytes.get(at + 1..at + 4);
        if starts_word && digits.is_some_and(|d| d.iter().all(u8::is_ascii_digit)) && bytes.get(at + 4) == Some(&b'_') {
            numbers.insert(text[at + 1..at + 4].parse().unwrap());
        }
    }
    numbers
}

/// The behavior numbers `docs/behavior.md` describes, each `**T57**` at the start of an item.
fn documented() -> Vec<u32> {
    let text = fs::read_to_string(root().join("docs/behavior.md")).unwrap();
    text.lines()
        .filter_map(|line| line.strip_prefix("- **T"))
        .map(|rest| rest.split_once("**").unwrap().0.parse().unwrap())
        .collect()
}

#[test]
fn every_behavior_is_described_once_in_order() {
    let numbers = documented();
    assert_eq!(numbers, BEHAVIORS.collect::<Vec<_>>(), "docs/behavior.md lists T1..T307 once each, in order");
}

#[test]
fn every_behavior_test_has_its_line_in_docs_behavior_md() {
    let documented: BTreeSet<u32> = documented().into_iter().collect();
    let mut sources = Vec::new();
    files(&root().join("crates"), &["rs"], &mut sources);
    files(&root().join("tools"), &["rs"], &mut sources);
    let mut missing = Vec::new();
    for file in sources {
        for number in test_numbers(&fs::read_to_string(&file).unwrap()) {
            if !documented.contains(&number) {
                missing.push(format!("t{number:03}_ in {}", file.display()));
            }
        }
    }
    assert!(missing.is_empty(), "tests with no entry in docs/behavior.md: {missing:#?}");
}

#[test]
fn the_checker_reads_combined_test_names() {
    let numbers = test_numbers("fn t034_and_t035_bodies() {}\nfn at123_no() {}\nfn t12_short() {} t999x");
    assert_eq!(numbers.into_iter().collect::<Vec<_>>(), [34, 35]);
}

/// Text that points to documents outside the repository: the specification the port was written
/// from, and the issue tracker.
fn outside_references(text: &str) -> Vec<String> {
    let outside = [
        concat!("../", "shared"),
        concat!("shared", "/spec"),
        concat!("spec", "/"),
        concat!("decisions", ".md"),
        concat!("design", ".md"),
        concat!("beyond", ".md"),
        concat!("cli-and-", "emulator"),
        concat!("reference-", "behaviors"),
        concat!("reference-", "spec"),
        concat!("shared ", "spec"),
    ];
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        for pattern in outside {
            if lower.contains(pattern) {
                found.push(format!("line {}: `{pattern}`", number + 1));
            }
        }
        if lower.split(concat!("issue", " ")).skip(1).any(|rest| rest.starts_with(|c: char| c.is_ascii_digit())) {
            found.push(format!("line {}: an issue number", number + 1));
        }
    }
    found
}

#[test]
fn nothing_in_the_repository_points_outside_it() {
    let mut paths = Vec::new();
    files(&root(), &["rs", "md", "toml", "sh", "yml", "yaml", "txt"], &mut paths);
    let this_file = Path::new(file!()).file_name().unwrap();
    let mut found = Vec::new();
    for path in paths {
        if path.ends_with(Path::new("tests/it").join(this_file)) {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else { continue };
        for place in outside_references(&text) {
            found.push(format!("{}: {place}", path.strip_prefix(root()).unwrap_or(&path).display()));
        }
    }
    assert!(found.is_empty(), "say it here or in docs/ instead: {found:#?}");
}

#[test]
fn the_outside_reference_check_sees_paths_and_issue_numbers() {
    let text = concat!("see ../", "shared/spec/x\nfine\nas issue", " 14 says\nan issue is fine\n");
    assert_eq!(
        outside_references(text),
        ["line 1: `../shared`", "line 1: `shared/spec`", "line 1: `spec/`", "line 3: an issue number"]
    );
}

/// The examples of the library, by name.
fn examples() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(root().join("crates/sms-sdk/examples"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_example_is_indexed_and_run_by_a_test() {
    let index = fs::read_to_string(root().join("crates/sms-sdk/examples/README.md")).unwrap();
    let mut tests = Vec::new();
    files(&root().join("crates/sms-sdk/tests"), &["rs"], &mut tests);
    let tests: String = tests.iter().map(|path| fs::read_to_string(path).unwrap()).collect();
    for name in examples() {
        assert!(index.contains(&format!("`{name}`")), "{name} is not in crates/sms-sdk/examples/README.md");
        assert!(
            index.contains(&format!("--example {name}")),
            "crates/sms-sdk/examples/README.md does not say how to run {name}"
        );
        assert!(tests.contains(&format!("examples/{name}.rs\"")), "no test runs the example {name}");
    }
}

/// The files of the library's public modules: every `pub mod name;` in `src`, resolved to
/// `name.rs` or `name/mod.rs` beside the file that declares it.
fn public_modules() -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut declaring = Vec::new();
    files(&src, &["rs"], &mut declaring);
    let mut modules = Vec::new();
    for file in declaring {
        let dir = if file.ends_with("lib.rs") || file.ends_with("mod.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for line in fs::read_to_string(&file).unwrap().lines() {
            if let Some(name) = line.trim().strip_prefix("pub mod ").and_then(|rest| rest.strip_suffix(';')) {
                let flat = dir.join(format!("{name}.rs"));
                modules.push(if flat.exists() { flat } else { dir.join(name).join("mod.rs") });
            }
        }
    }
    modules.sort();
    modules
}

#[test]
fn every_public_module_opens_with_an_example() {
    let modules = public_modules();
    assert!(modules.len() > 20, "{modules:#?}");
    let without: Vec<_> = modules
        .iter()
        .filter(|file| {
            let text = fs::read_to_string(file).unwrap();
            let opening: Vec<&str> = text.lines().take_while(|line| line.starts_with("//!")).collect();
            !opening.iter().any(|line| line.trim_start_matches("//!").trim_start().starts_with("```"))
        })
        .collect();
    assert!(without.is_empty(), "public modules whose docs open without an example: {without:#?}");
}

/// The repository paths a Markdown text names: relative link targets, and code spans that start
/// with a top-level folder (`docs/…`, `crates/…`); globs and placeholders are left out.
fn named_paths(text: &str) -> Vec<String> {
    const FOLDERS: [&str; 6] = ["docs/", "crates/", "scripts/", "examples/", "fixtures/", "tools/"];
    let mut paths = Vec::new();
    for link in text.split("](").skip(1) {
        let target = link.split(')').next().unwrap_or_default();
        if !target.contains("://") && !target.starts_with('#') && !target.starts_with("mailto:") {
            paths.push(target.split('#').next().unwrap_or_default().to_owned());
        }
    }
    for (at, span) in text.split('`').enumerate() {
        let in_code = at % 2 == 1;
        if in_code
            && FOLDERS.iter().any(|folder| span.starts_with(folder))
            && !span.contains(|c: char| c.is_whitespace() || matches!(c, '*' | '{' | '<' | '…'))
        {
            paths.push(span.to_owned());
        }
    }
    paths
}

#[test]
fn paths_named_in_the_documents_exist() {
    let mut documents = Vec::new();
    files(&root(), &["md"], &mut documents);
    let mut missing = Vec::new();
    for document in documents {
        let text = fs::read_to_string(&document).unwrap();
        for path in named_paths(&text) {
            let from_root = root().join(&path);
            let from_here = document.parent().unwrap().join(&path);
            if !from_root.exists() && !from_here.exists() {
                missing.push(format!("{}: {path}", document.strip_prefix(root()).unwrap_or(&document).display()));
            }
        }
    }
    assert!(missing.is_empty(), "paths that do not exist: {missing:#?}");
}

#[test]
fn the_path_check_reads_links_and_code_spans() {
    let text = "[a](../x/README.md#top) [b](https://example.com) `docs/a.md` `crates/*/src` `cargo run` [c](#anchor)";
    assert_eq!(named_paths(text), ["../x/README.md", "docs/a.md"]);
}

/// `Failover::OnEligibleRejection`'s doc names exactly the categories that fail over.
#[test]
fn the_failover_doc_names_every_category_that_fails_over() {
    use sms_sdk::Category;
    let source = fs::read_to_string(root().join("crates/sms-sdk/src/client/mod.rs")).unwrap();
    let start = source.find("pub enum Failover").unwrap();
    let doc = &source[start..source[start..].find("OnEligibleRejection,").unwrap() + start];
    let categories = [
        (Category::Auth, "`Auth`"),
        (Category::RateLimited, "`RateLimited`"),
        (Category::Sender, "`Sender`"),
        (Category::Account, "`Account`"),
        (Category::Unreachable, "`Unreachable`"),
        (Category::Recipient, "`Recipient`"),
        (Category::Compliance, "`Compliance`"),
        (Category::Request, "`Request`"),
    ];
    for (category, name) in categories {
        assert_eq!(doc.contains(name), category.allows_failover(), "{name} in the Failover doc: {doc}");
    }
}
