//! What the command's test binaries share: running it in-process, and a mock Twilio.

#![allow(dead_code, unreachable_pub)] // each test binary uses a part

use std::ffi::OsString;

use serde_json::json;
use sms_sdk_cli::{Env, run};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The Twilio account of the tests.
pub const SID: &str = "AC0123456789abcdef0123456789abcdef";
/// The message id the mock gives.
pub const MESSAGE_SID: &str = "SM0123456789abcdef0123456789abcdef";

/// What a run printed, and its exit code.
pub struct Output {
    pub code: u8,
    pub out: String,
    pub err: String,
}

/// Runs the command in-process.
pub fn command<A: Into<OsString> + Clone>(args: &[A], env: &Env) -> Output {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(args.iter().cloned(), env, &mut out, &mut err);
    Output { code, out: String::from_utf8(out).unwrap(), err: String::from_utf8(err).unwrap() }
}

/// A mock Twilio on its own runtime.
pub struct Twilio {
    runtime: tokio::runtime::Runtime,
    pub server: MockServer,
}

impl Twilio {
    /// A mock that answers every request with `reply`.
    pub fn answering(reply: ResponseTemplate) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let server = runtime.block_on(async {
            let server = MockServer::start().await;
            Mock::given(any()).respond_with(reply).mount(&server).await;
            server
        });
        Self { runtime, server }
    }

    /// A mock that accepts every message as [`MESSAGE_SID`].
    pub fn accepting() -> Self {
        Self::answering(ResponseTemplate::new(201).set_body_json(json!({"sid": MESSAGE_SID, "status": "queued"})))
    }

    /// How many requests it received.
    pub fn calls(&self) -> usize {
        self.runtime.block_on(self.server.received_requests()).unwrap_or_default().len()
    }

    /// A complete Twilio environment pointed at the mock, plus `extra` variables.
    pub fn env(&self, extra: &[(&str, &str)]) -> Env {
        let uri = self.server.uri();
        // Every send checks its store's suppression list: a memory store unless `extra` names one.
        let base = [
            ("SMS_SDK_STORE", "memory"),
            ("TWILIO_ACCOUNT_SID", SID),
            ("TWILIO_AUTH_TOKEN", "test-token"),
            ("TWILIO_FROM", "+15005550006"),
            ("SMS_SDK_TWILIO_BASE_URL", uri.as_str()),
        ];
        base.iter().chain(extra).map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }
}
