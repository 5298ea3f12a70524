//! The emulator crate's examples, run end to end, and each one listed in the crate's README.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // test code: a panic is a failed test

use std::fs;
use std::path::Path;

use sms_sdk::Category;

#[path = "../../examples/failover.rs"]
#[allow(dead_code, unreachable_pub)]
mod failover;

#[tokio::test]
async fn the_failover_example_tries_twilio_then_telnyx_which_accepts_and_reports_delivery_at_its_own_url() {
    let report = failover::run().await.expect("the example runs");
    assert_eq!(report.tried, ["twilio", "telnyx"]);
    assert_eq!(report.refused, [("twilio".to_owned(), Category::Sender)]);
    assert!(Category::Sender.allows_failover());
    assert_eq!(report.accepted_by, "telnyx");
    assert!(uuid::Uuid::parse_str(&report.provider_id).is_ok(), "{}", report.provider_id);
    // Telnyx's status steps, verified, at Telnyx's URL; none at Twilio's.
    let events: Vec<&str> = report.webhooks.iter().map(|(_, event)| event.as_str()).collect();
    assert_eq!(events, ["message.sent", "message.delivered"], "{report:?}");
    assert!(report.webhooks.iter().all(|(url, _)| url.ends_with("/hooks/telnyx")), "{report:?}");
}

#[test]
fn every_example_is_listed_in_the_readme_and_run_by_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let tests = fs::read_to_string(root.join("tests/emulator/examples.rs")).unwrap();
    let mut names = Vec::new();
    for entry in fs::read_dir(root.join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            names.push(path.file_stem().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(!names.is_empty());
    for name in names {
        assert!(readme.contains(&format!("| `{name}` |")), "{name} is not in the emulator's README");
        assert!(tests.contains(&format!("examples/{name}.rs\"")), "no test runs the example {name}");
    }
}
