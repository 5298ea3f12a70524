//! The transport over real sockets: resets, timeouts, and what reaches logs and errors.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::{Client, ErrorKind, Failover, Message, Twilio, UnknownReason};
use tokio::io::AsyncReadExt;
use wiremock::ResponseTemplate;

use super::twilio::SID;
use super::{json_reply, requests, serve};

/// A server that reads each request, then resets the connection without answering.
async fn resetting_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buffer = vec![0; 4096];
            let _ = stream.read(&mut buffer).await;
            let socket = socket2::SockRef::from(&stream);
            let _ = socket.set_linger(Some(Duration::ZERO));
            drop(stream);
        }
    });
    format!("http://{address}")
}

fn twilio(base_url: &str, token: &str) -> Twilio {
    Twilio::builder(SID, token).from("+15005550006").base_url(base_url).build().unwrap()
}

fn with_backup(primary: Twilio, backup: &MemoryAdapter) -> Client {
    Client::builder()
        .adapter(primary)
        .adapter(backup.clone())
        .failover(Failover::OnEligibleRejection)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_reset_connection_is_unknown_network_and_never_fails_over() {
    let backup = MemoryAdapter::builder().name("backup").build();
    let client = with_backup(twilio(&resetting_server().await, "test-token"), &backup);
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Network));
    assert!(!err.is_retry_safe());
    assert!(backup.sent().is_empty());
}

#[tokio::test]
async fn a_held_request_times_out_as_unknown_and_never_fails_over() {
    let server = serve(ResponseTemplate::new(201).set_delay(Duration::from_secs(30))).await;
    let backup = MemoryAdapter::builder().name("backup").build();
    let client = with_backup(twilio(&server.uri(), "test-token"), &backup);
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Timeout));
    assert_eq!(requests(&server).await.len(), 1);
    assert!(backup.sent().is_empty());
}

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn failing_requests_never_log_or_report_secrets_bodies_or_numbers() {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let token = "super-secret-auth-token";
    let body = "Your verification code is 48213957";
    let to = "+14155550123";
    let message = Message::new(to, body);
    let rejecting = serve(json_reply(
        400,
        &json!({"code": 21211, "message": format!("The 'To' number {to} is not a valid phone number.")}),
    ))
    .await;
    let held = serve(ResponseTemplate::new(201).set_delay(Duration::from_secs(30))).await;
    let mut rendered = String::new();
    for base in [rejecting.uri(), held.uri(), resetting_server().await, "http://127.0.0.1:9".to_owned()] {
        let adapter = twilio(&base, token);
        rendered.push_str(&format!("{adapter:?}"));
        let client = Client::builder().adapter(adapter).timeout(Duration::from_millis(300)).build().unwrap();
        rendered.push_str(&format!("{client:?}"));
        let err = client.send(&message).await.unwrap_err();
        rendered.push_str(&format!("{err} {err:?} {}", serde_json::to_string(&err).unwrap()));
    }
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("provider"), "the failing requests were logged: {logs}");
    for text in [&logs, &rendered] {
        assert!(!text.contains(token), "{text}");
        assert!(!text.contains("48213957"), "{text}");
        assert!(!text.contains("4155550123"), "{text}");
    }
}
