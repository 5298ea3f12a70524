//! Starting and stopping: loopback only, serving at once, and really stopped afterwards.
//! (How fast it starts is measured by `cargo bench -p sms-sdk-emulator`, not asserted here.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use std::time::{Duration, Instant};

use sms_sdk_emulator::{Emulator, StartErrorKind};

#[tokio::test]
async fn it_serves_as_soon_as_start_returns() {
    let emulator = Emulator::start().await.expect("starts");
    assert!(emulator.base_url().starts_with("http://127.0.0.1:"));
    let connected = tokio::net::TcpStream::connect(emulator.local_addr()).await;
    assert!(connected.is_ok(), "the listener is bound when start returns");
    emulator.shutdown().await;
}

#[tokio::test]
async fn it_refuses_addresses_that_are_not_loopback() {
    for address in ["0.0.0.0:0", "[::]:0", "10.0.0.1:4010"] {
        let err = Emulator::builder().listen(address).start().await.expect_err("refused");
        assert_eq!(err.kind(), StartErrorKind::NotLoopback, "{address}");
    }
    let err = Emulator::builder().listen("example.com:4010").start().await.expect_err("refused");
    assert_eq!(err.kind(), StartErrorKind::InvalidAddress);
    let err = Emulator::builder().webhook_url("not a url").start().await.expect_err("refused");
    assert_eq!(err.kind(), StartErrorKind::InvalidUrl);
}

#[tokio::test]
async fn a_fixed_port_works_once() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let emulator = Emulator::builder().listen(format!("localhost:{port}")).start().await.expect("starts");
    assert_eq!(emulator.base_url(), format!("http://127.0.0.1:{port}"));
    let err = Emulator::builder().listen(format!("127.0.0.1:{port}")).start().await.expect_err("taken");
    assert_eq!(err.kind(), StartErrorKind::Bind);
}

#[tokio::test]
async fn shutdown_and_drop_stop_listening() {
    let emulator = Emulator::start().await.expect("starts");
    let address = emulator.local_addr();
    assert!(tokio::net::TcpStream::connect(address).await.is_ok());
    emulator.shutdown().await;
    assert!(tokio::net::TcpStream::connect(address).await.is_err());

    let dropped = Emulator::start().await.expect("starts");
    let address = dropped.local_addr();
    drop(dropped);
    let deadline = Instant::now() + Duration::from_secs(2);
    while tokio::net::TcpStream::connect(address).await.is_ok() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(tokio::net::TcpStream::connect(address).await.is_err());
}
