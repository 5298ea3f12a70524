//! Checks that every package the workspace resolves (all features, every platform, dev and
//! build dependencies included) declares a `rust-version` no newer than the workspace's own, or
//! none. Run by `scripts/msrv.sh`:
//!
//! ```text
//! cargo run -p msrv-check [-- path/to/Cargo.toml]
//! ```
//!
//! It reads `cargo metadata --format-version 1 --all-features --locked`, so the lock file is what
//! is checked. A package that declares no `rust-version` passes: only a full build with the MSRV
//! toolchain can check it.

use std::cmp::Ordering;
use std::process::{Command, ExitCode};

use serde_json::Value;

fn main() -> ExitCode {
    let manifest = std::env::args().nth(1);
    match check(manifest.as_deref()) {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `cargo metadata` and checks its packages; the summary, or what failed.
fn check(manifest: Option<&str>) -> Result<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["metadata", "--format-version", "1", "--all-features", "--locked"]);
    if let Some(manifest) = manifest {
        command.args(["--manifest-path", manifest]);
    }
    let output = command.output().map_err(|e| format!("could not run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!("cargo metadata failed:\n{}", String::from_utf8_lossy(&output.stderr)));
    }
    let metadata: Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let packages = metadata.get("packages").and_then(Value::as_array).ok_or("cargo metadata printed no packages")?;
    let members =
        metadata.get("workspace_members").and_then(Value::as_array).ok_or("cargo metadata printed no members")?;
    let is_member = |package: &Value| package.get("id").is_some_and(|id| members.contains(id));

    // The MSRV: the lowest `rust-version` a workspace member declares.
    let msrv = packages
        .iter()
        .filter(|p| is_member(p))
        .filter_map(|p| text(p, "rust_version"))
        .min_by(|a, b| compare(a, b))
        .ok_or("no workspace member declares a rust-version")?;

    let mut too_new = Vec::new();
    let mut undeclared = 0;
    let dependencies: Vec<&Value> = packages.iter().filter(|p| !is_member(p)).collect();
    for package in &dependencies {
        match text(package, "rust_version") {
            None => undeclared += 1,
            Some(declared) if compare(declared, msrv) == Ordering::Greater => {
                too_new.push(format!(
                    "  {} {} needs Rust {declared}",
                    text(package, "name").unwrap_or("?"),
                    text(package, "version").unwrap_or("?")
                ));
            }
            Some(_) => {}
        }
    }
    if too_new.is_empty() {
        Ok(format!(
            "{} dependencies in the lock file: every one declares rust-version <= {msrv} or none ({undeclared} \
             declare none)",
            dependencies.len()
        ))
    } else {
        too_new.sort();
        Err(format!(
            "{} dependencies declare a rust-version newer than the workspace's {msrv}:\n{}\n\
             pick an older version (`cargo update -p NAME --precise VERSION`) or raise rust-version",
            too_new.len(),
            too_new.join("\n")
        ))
    }
}

/// The text of the string field `key` of a JSON object.
fn text<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

/// Compares two Rust versions (`1.89`, `1.88.0`) by their numbers; a missing patch is 0.
fn compare(a: &str, b: &str) -> Ordering {
    numbers(a).cmp(&numbers(b))
}

/// The numeric parts of a version, `[major, minor, patch]` (a part that is not a number is 0).
fn numbers(version: &str) -> [u64; 3] {
    let mut parts = version.split('.').map(|part| part.parse().unwrap_or(0));
    [parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_number_with_a_missing_patch_as_zero() {
        assert_eq!(compare("1.89", "1.89.0"), Ordering::Equal);
        assert_eq!(compare("1.88.1", "1.89"), Ordering::Less);
        assert_eq!(compare("1.100", "1.89"), Ordering::Greater);
        assert_eq!(compare("1.89.1", "1.89"), Ordering::Greater);
        assert_eq!(compare("2", "1.89"), Ordering::Greater);
    }
}
