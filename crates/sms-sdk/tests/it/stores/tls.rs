//! The PostgreSQL store's TLS against real servers of the test's own: one that takes TLS
//! connections only (`hostssl` lines; the database `template1` also needs a client certificate, the
//! user `scram` a password), and
//! one that offers no TLS. The certificates are made with the `openssl` command in a temporary
//! folder: a CA, a server certificate for `localhost` and 127.0.0.1, a client certificate, and
//! another CA that signed nothing the server sends.

use std::sync::Arc;

use sms_sdk::store::postgres::PostgresStore;
use sms_sdk::store::{Store, StoreError};
use sms_sdk::testing::{dedupe_contract, suppression_contract};

use super::servers::{Certificates, PgBouncer, PgServer, with_ca_as_platform_store};

/// A server that takes TLS connections only, to `template1` with a client certificate signed by
/// the test's CA only.
fn tls_server(certificates: &Certificates) -> PgServer {
    let (crt, key, ca) =
        (certificates.read("server.crt"), certificates.read("server.key"), certificates.read("ca.crt"));
    let files: [(&str, &[u8]); 3] = [("server.crt", &crt), ("server.key", &key), ("root.crt", &ca)];
    let conf = "\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\nssl_ca_file = 'root.crt'\n";
    let hba = "local all postgres trust\n\
               hostssl all scram 127.0.0.1/32 scram-sha-256\n\
               hostssl template1 all 127.0.0.1/32 trust clientcert=verify-ca\n\
               hostssl all all 127.0.0.1/32 trust\n\
               hostssl all all ::1/128 trust\n";
    PgServer::start_with(&files, conf, Some(hba))
}

async fn connect(url: &str) -> Result<PostgresStore, StoreError> {
    PostgresStore::builder(url).connect_timeout(std::time::Duration::from_secs(5)).connect().await
}

/// `url`'s error when connecting, which must name `reason`.
async fn refused(url: &str, reason: &str) -> String {
    let error = connect(url).await.err().unwrap_or_else(|| panic!("{url} connected")).to_string();
    assert!(error.contains(reason), "{url}: {error}");
    error
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_postgres_modes_against_a_tls_only_server() {
    let certificates = Certificates::make();
    let server = tls_server(&certificates);
    let port = server.port;
    let (ca, other_ca) = (certificates.path("ca.crt"), certificates.path("other-ca.crt"));
    let at = |host: &str, query: &str| format!("postgres://postgres@{host}:{port}/postgres?{query}");

    // verify-full with the CA, by name and by IP address (an IP SAN).
    for host in ["localhost", "127.0.0.1"] {
        let store = connect(&at(host, &format!("sslmode=verify-full&sslrootcert={ca}"))).await.unwrap();
        assert!(format!("{store:?}").contains("sslmode=verify-full"), "{store:?}");
    }
    // The same in a key=value connection string.
    let conninfo =
        format!("host=localhost port={port} user=postgres dbname=postgres sslmode=verify-full sslrootcert='{ca}'");
    connect(&conninfo).await.unwrap();

    // verify-full to a name the certificate does not hold (hostaddr: the same server).
    let wrong = at("db.example", &format!("hostaddr=127.0.0.1&sslmode=verify-full&sslrootcert={ca}"));
    let error = refused(&wrong, "certificate").await;
    assert!(error.contains("sslmode=verify-full"), "{error}");
    assert!(error.to_lowercase().contains("name"), "{error}");
    // verify-ca ignores the name, but not the chain.
    connect(&at("db.example", &format!("hostaddr=127.0.0.1&sslmode=verify-ca&sslrootcert={ca}"))).await.unwrap();
    refused(&at("localhost", &format!("sslmode=verify-ca&sslrootcert={other_ca}")), "certificate").await;
    refused(&at("localhost", &format!("sslmode=verify-full&sslrootcert={other_ca}")), "certificate").await;
    // require without a CA: encrypted, not verified; with one, the chain is (as libpq).
    connect(&at("db.example", "hostaddr=127.0.0.1&sslmode=require")).await.unwrap();
    connect(&at("db.example", &format!("hostaddr=127.0.0.1&sslmode=require&sslrootcert={ca}"))).await.unwrap();
    refused(&at("localhost", &format!("sslmode=require&sslrootcert={other_ca}")), "certificate").await;
    // prefer (the default) and allow get TLS from a server that insists.
    connect(&at("localhost", "application_name=prefer")).await.unwrap();
    connect(&at("localhost", "sslmode=allow")).await.unwrap();
    // disable: the server has no line for plain text.
    refused(&at("localhost", "sslmode=disable"), "no encryption").await;

    // A client certificate for a user whose line asks for one.
    let cert_url = |query: &str| {
        format!("postgres://postgres@localhost:{port}/template1?sslmode=verify-full&sslrootcert={ca}{query}")
    };
    let (client_crt, client_key) = (certificates.path("client.crt"), certificates.path("client.key"));
    refused(&cert_url(""), "certificate").await;
    connect(&cert_url(&format!("&sslcert={client_crt}&sslkey={client_key}"))).await.unwrap();

    // A password (SCRAM-SHA-256) over TLS; a wrong one is refused without being shown.
    server.psql("CREATE ROLE scram LOGIN SUPERUSER PASSWORD 's3cr3t-pw'");
    let scram = |password: &str| {
        format!("postgres://scram:{password}@localhost:{port}/postgres?sslmode=verify-full&sslrootcert={ca}")
    };
    let store = connect(&scram("s3cr3t-pw")).await.unwrap();
    // Bound to the TLS connection (SCRAM-SHA-256-PLUS, tls-server-end-point of an ECDSA P-256
    // SHA-256 certificate), which the driver can be told to insist on.
    connect(&format!("{}&channel_binding=require", scram("s3cr3t-pw"))).await.unwrap();
    assert!(!format!("{store:?}").contains("s3cr3t"), "{store:?}");
    let wrong = refused(&scram("wr0ng-pw"), "password authentication failed").await;
    assert!(!wrong.contains("wr0ng-pw"), "{wrong}");

    // Files that cannot be used are configuration errors that name them.
    let missing = certificates.path("missing.pem");
    let error = refused(&at("localhost", &format!("sslmode=verify-full&sslrootcert={missing}")), &missing).await;
    assert!(error.contains("sslrootcert"), "{error}");
    let garbage = certificates.path("garbage.pem");
    refused(&at("localhost", &format!("sslmode=verify-full&sslrootcert={garbage}")), "no PEM certificate").await;
    let key_error =
        refused(&cert_url(&format!("&sslcert={client_crt}&sslkey={garbage}")), "holds no PEM private key").await;
    assert!(!key_error.contains("not a certificate"), "{key_error}");
    // An sslkey that is a certificate: its content is never shown.
    let shown = refused(&cert_url(&format!("&sslcert={client_crt}&sslkey={client_crt}")), "sslkey").await;
    assert!(!shown.contains("BEGIN"), "{shown}");
    refused(&at("localhost", "sslmode=verify"), "sslmode `verify` is not one of").await;
    refused(&at("localhost", "sslmode=verify-full"), "needs sslrootcert").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_postgres_modes_against_a_plain_server() {
    let server = PgServer::start();
    let at = |query: &str| format!("postgres://postgres@127.0.0.1:{}/postgres?{query}", server.port);
    let store = connect(&at("application_name=default")).await.unwrap();
    assert!(format!("{store:?}").contains("sslmode=prefer"), "{store:?}");
    connect(&at("sslmode=prefer")).await.unwrap();
    connect(&at("sslmode=allow")).await.unwrap();
    connect(&at("sslmode=disable")).await.unwrap();
    refused(&at("sslmode=require"), "server does not support TLS").await;
    let certificates = Certificates::make();
    let ca = certificates.path("ca.crt");
    refused(&at(&format!("sslmode=verify-full&sslrootcert={ca}")), "server does not support TLS").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_postgres_contracts_pass_over_verify_full() {
    let certificates = Certificates::make();
    let server = tls_server(&certificates);
    let url = format!(
        "postgres://postgres@localhost:{}/postgres?sslmode=verify-full&sslrootcert={}",
        server.port,
        certificates.path("ca.crt")
    );
    let store = PostgresStore::connect(&url).await.unwrap();
    super::assert_contract("postgres (verify-full)", Arc::new(store.clone()) as Arc<dyn Store>).await;
    let report = dedupe_contract::run("postgres (verify-full)", Arc::new(store.clone())).await;
    assert!(report.passed, "{}", report.failures());
    let suppression = sms_sdk::store::suppression::PostgresSuppressionStore::open(store).await.unwrap();
    let report = suppression_contract::run("postgres (verify-full)", Arc::new(suppression)).await;
    assert!(report.passed, "{}", report.failures());
}

/// Through PgBouncer in transaction pooling mode, TLS on both of its sides: `verify-full` to
/// PgBouncer, with the statement cache off (PgBouncer without `max_prepared_statements`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_postgres_contracts_pass_through_pgbouncer() {
    let certificates = Certificates::make();
    let server = tls_server(&certificates);
    let pooler = PgBouncer::start_tls(&certificates, server.port);
    let ca = certificates.path("ca.crt");
    let url = format!(
        "postgres://postgres@localhost:{}/postgres?sslmode=verify-full&sslrootcert={ca}&statement_cache=off",
        pooler.port
    );
    let store = PostgresStore::connect(&url).await.unwrap();
    super::assert_contract("postgres (verify-full, PgBouncer)", Arc::new(store.clone()) as Arc<dyn Store>).await;
    let report = dedupe_contract::run("postgres (verify-full, PgBouncer)", Arc::new(store)).await;
    assert!(report.passed, "{}", report.failures());
    // PgBouncer takes TLS only: plain text is refused, and so is a CA that did not sign it.
    let plain = format!("postgres://postgres@localhost:{}/postgres?sslmode=disable&statement_cache=off", pooler.port);
    assert!(connect(&plain).await.is_err());
    let other = certificates.path("other-ca.crt");
    let wrong =
        format!("postgres://postgres@localhost:{}/postgres?sslmode=verify-full&sslrootcert={other}", pooler.port);
    refused(&wrong, "certificate").await;
}

/// `sslrootcert=system` verifies against the platform's trust store, which on Linux honours
/// `SSL_CERT_FILE`: a child process of this test gets the test's CA there (the variable is the
/// whole process's, so it is not set in this one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_postgres_sslrootcert_system_uses_the_platform_trust_store() {
    if let Ok(url) = std::env::var("SMS_SDK_TLS_SYSTEM_URL") {
        for query in ["sslrootcert=system", "sslmode=verify-full&sslrootcert=system"] {
            let store = connect(&format!("{url}?{query}")).await.unwrap();
            assert!(format!("{store:?}").contains("sslmode=verify-full"), "{store:?}");
        }
        refused(&format!("{url}?sslmode=require&sslrootcert=system"), "needs sslmode=verify-full").await;
        println!("TLS-SYSTEM-OK");
        return;
    }
    let certificates = Certificates::make();
    let server = tls_server(&certificates);
    let url = format!("postgres://postgres@localhost:{}/postgres", server.port);
    // The real platform store does not know the test's CA.
    if std::env::var_os("SSL_CERT_FILE").is_none() {
        refused(&format!("{url}?sslrootcert=system"), "certificate").await;
    }
    let test = "stores::tls::tls_postgres_sslrootcert_system_uses_the_platform_trust_store";
    with_ca_as_platform_store(test, &certificates, &[("SMS_SDK_TLS_SYSTEM_URL", &url)], "TLS-SYSTEM-OK").await;
}

/// A server that says yes to TLS and then never answers the handshake: the connect timeout ends
/// the wait, with a timeout error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_postgres_stalled_handshake_ends_within_the_connect_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        loop {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            let mut request = [0u8; 8];
            if socket.read_exact(&mut request).await.is_ok() {
                let _ = socket.write_all(b"S").await;
            }
            held.push(socket);
        }
    });
    let bound = std::time::Duration::from_millis(800);
    let started = std::time::Instant::now();
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres?sslmode=require");
    let error = PostgresStore::builder(&url).connect_timeout(bound).connect().await.err().unwrap();
    assert!(error.is_timeout(), "{error}");
    assert!(error.to_string().contains("(sslmode=require)"), "{error}");
    assert!(started.elapsed() < bound * 4, "took {:?}", started.elapsed());
    server.abort();
}
