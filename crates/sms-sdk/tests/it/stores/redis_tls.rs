//! The Redis store over TLS against real servers of the test's own that take TLS connections
//! only (`--port 0 --tls-port`), one of which also asks for a client certificate. The
//! certificates are made with `openssl` (see [`Certificates`]).

use std::sync::Arc;
use std::time::Duration;

use sms_sdk::store::redis::{RedisStore, RedisTls};
use sms_sdk::store::{Store, StoreError};

use super::servers::{Certificates, RedisServer, with_ca_as_platform_store};

async fn connect(url: &str) -> Result<RedisStore, StoreError> {
    RedisStore::builder(url).connect_timeout(Duration::from_secs(3)).connect().await
}

/// `url`'s error when connecting, which must name `reason`.
async fn refused(url: &str, reason: &str) -> String {
    let error = connect(url).await.err().unwrap_or_else(|| panic!("{url} connected")).to_string();
    assert!(error.to_lowercase().contains(&reason.to_lowercase()), "{url}: {error}");
    error
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_redis_contracts_pass_over_rediss() {
    let certificates = Certificates::make();
    let server = RedisServer::start_tls(&certificates, false);
    let store = connect(&server.url).await.unwrap();
    assert!(format!("{store:?}").contains("(TLS)"), "{store:?}");
    super::assert_redis_contracts("redis (TLS)", store).await;
    crate::rate::shared::admits_and_denies_at_given_times(&server.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_redis_refuses_what_does_not_verify() {
    let certificates = Certificates::make();
    let server = RedisServer::start_tls(&certificates, false);
    let port = server.port;
    let (ca, other_ca) = (certificates.path("ca.crt"), certificates.path("other-ca.crt"));
    // By name and by IP address (an IP SAN), with the CA given as a file or as bytes.
    connect(&format!("rediss://localhost:{port}/0?sslrootcert={ca}")).await.unwrap();
    connect(&format!("rediss://127.0.0.1:{port}/0?sslrootcert={ca}")).await.unwrap();
    let tls = RedisTls::new().root_certificates(certificates.read("ca.crt"));
    RedisStore::builder(format!("rediss://localhost:{port}/0")).tls(tls).connect().await.unwrap();

    // A CA that signed nothing the server sends; the platform's store, which does not know the
    // test's CA; a name the certificate does not hold (127.0.0.2: the same server).
    refused(&format!("rediss://localhost:{port}/0?sslrootcert={other_ca}"), "certificate").await;
    if std::env::var_os("SSL_CERT_FILE").is_none() {
        refused(&format!("rediss://localhost:{port}/0"), "certificate").await;
    }
    let wrong = refused(&format!("rediss://127.0.0.2:{port}/0?sslrootcert={ca}"), "certificate").await;
    assert!(wrong.contains("(TLS)"), "{wrong}");
    // A plain-text client against the TLS-only port.
    let plain = RedisStore::builder(format!("redis://127.0.0.1:{port}/0"))
        .connect_timeout(Duration::from_secs(2))
        .connect()
        .await
        .err()
        .unwrap();
    assert!(
        plain
            .to_string()
            .ends_with("(a TLS-only server drops plain-text connections: if this port takes TLS, use rediss://)"),
        "{plain}"
    );
    // A TLS client against a plain-text port waits for a handshake that never comes.
    let plain_server = RedisServer::start();
    let waited = RedisStore::builder(format!("rediss://127.0.0.1:{}/0?sslrootcert={ca}", plain_server.port))
        .connect_timeout(Duration::from_millis(500))
        .connect()
        .await
        .err()
        .unwrap();
    assert!(waited.to_string().ends_with("if this port is not TLS, use redis://)"), "{waited}");

    // #insecure only when written: it connects to the wrong name, and says so.
    let insecure = connect(&format!("rediss://127.0.0.2:{port}/0#insecure")).await.unwrap();
    assert!(format!("{insecure:?}").contains("certificate NOT verified: #insecure"), "{insecure:?}");

    // Files that cannot be used are errors that name them.
    let missing = certificates.path("missing.pem");
    refused(&format!("rediss://localhost:{port}/0?sslrootcert={missing}"), &missing).await;
    let garbage = certificates.path("garbage.pem");
    refused(
        &format!("rediss://localhost:{port}/0?sslrootcert={garbage}"),
        &format!("sslrootcert {garbage} holds no PEM certificate"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_redis_client_certificates() {
    let certificates = Certificates::make();
    let server = RedisServer::start_tls(&certificates, true);
    let (crt, key) = (certificates.path("client.crt"), certificates.path("client.key"));
    // Without a client certificate the server hangs up during the handshake.
    refused(&server.url, "").await;
    let store = connect(&format!("{}&sslcert={crt}&sslkey={key}", server.url)).await.unwrap();
    super::assert_contract("redis (mutual TLS)", Arc::new(store) as Arc<dyn Store>).await;
    let tls = RedisTls::new()
        .root_certificates(certificates.read("ca.crt"))
        .client_certificate(certificates.read("client.crt"), certificates.read("client.key"));
    let url = format!("rediss://localhost:{}/0", server.port);
    RedisStore::builder(url).tls(tls).connect().await.unwrap();
    refused(&format!("{}&sslcert={crt}", server.url), "go together").await;
}

/// A store that does not verify is a typed store error from `store::open` (what the command
/// and a program call before any send), never a connection in plain text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_redis_verification_failure_is_a_store_error() {
    let certificates = Certificates::make();
    let server = RedisServer::start_tls(&certificates, false);
    let url = format!("rediss://localhost:{}/0?sslrootcert={}", server.port, certificates.path("other-ca.crt"));
    let error = sms_sdk::store::open(&url).await.err().unwrap();
    assert!(error.to_string().contains("certificate"), "{error}");
    assert!(!error.is_timeout(), "a refusal, not a wait: {error}");
}

/// `rediss://` without `sslrootcert` verifies against the platform's trust store, which honours
/// `SSL_CERT_FILE`: a child process of this test gets the test's CA there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_redis_platform_trust_store_honours_ssl_cert_file() {
    if let Ok(url) = std::env::var("SMS_SDK_TLS_REDIS_URL") {
        connect(&url).await.unwrap();
        connect(&format!("{url}?sslrootcert=system")).await.unwrap();
        println!("TLS-SYSTEM-OK");
        return;
    }
    let certificates = Certificates::make();
    let server = RedisServer::start_tls(&certificates, false);
    let test = "stores::redis_tls::tls_redis_platform_trust_store_honours_ssl_cert_file";
    let url = format!("rediss://localhost:{}/0", server.port);
    with_ca_as_platform_store(test, &certificates, &[("SMS_SDK_TLS_REDIS_URL", &url)], "TLS-SYSTEM-OK").await;
}
