//! The two ways of sending one Twilio message: raw `reqwest` (the baseline: the request the
//! adapter sends, by hand) and `sms_sdk::Client::send`.

use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde::Deserialize;
use sms_bench::wire::{ACCOUNT_SID, AUTH_TOKEN, BODY, FROM, TO, messages_path};
use sms_sdk::store::IdempotencyStore;
use sms_sdk::{Client, ClientBuilder, Message, Twilio};

/// The raw baseline: one pooled `reqwest` 0.13 client built as the adapter builds its own (no
/// redirects, no retries, the same user agent, connect and idle timeouts, a 10 s request
/// timeout), the URL and the Basic credentials prepared once.
#[derive(Clone)]
pub(crate) struct Raw {
    client: reqwest::Client,
    url: Arc<str>,
    authorization: HeaderValue,
}

/// The fields a raw client reads from the 201: the message SID and its status (borrowed).
#[derive(Deserialize)]
struct Created<'a> {
    sid: &'a str,
    status: &'a str,
}

/// rustls on ring with no roots: the requests are plain `http` to loopback, but `reqwest` built
/// without a default TLS provider still needs one configured.
fn tls() -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default versions")
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth()
}

impl Raw {
    pub(crate) fn new(base_url: &str) -> Self {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls())
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .user_agent(concat!("sms-sdk/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(20))
            .timeout(Duration::from_secs(10))
            .build()
            .expect("the raw reqwest client builds");
        let credentials =
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, format!("{ACCOUNT_SID}:{AUTH_TOKEN}"));
        let mut authorization = HeaderValue::from_str(&format!("Basic {credentials}")).expect("visible ASCII");
        authorization.set_sensitive(true);
        let url = format!("{}{}", base_url.trim_end_matches('/'), messages_path());
        Self { client, url: url.into(), authorization }
    }

    /// One send: the form body `To`, `From`, `Body` encoded as the adapter encodes it, the POST,
    /// the whole body read, the 201 checked and its JSON parsed.
    pub(crate) async fn send(&self) -> Result<(), String> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("To", TO)
            .append_pair("From", FROM)
            .append_pair("Body", BODY)
            .finish();
        let response = self
            .client
            .post(&*self.url)
            .header(ACCEPT, "application/json")
            .header(AUTHORIZATION, self.authorization.clone())
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| format!("raw send: {e}"))?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.map_err(|e| format!("raw body: {e}"))?;
        if status != 201 {
            return Err(format!("raw send: HTTP {status}"));
        }
        let created: Created<'_> = serde_json::from_slice(&bytes).map_err(|e| format!("raw JSON: {e}"))?;
        if created.sid.len() != 34 || !created.sid.starts_with("SM") || created.status.is_empty() {
            return Err("raw send: not a message resource".to_owned());
        }
        Ok(())
    }
}

/// A client builder with the Twilio adapter pointed at `base_url`, and every other setting at
/// its default.
pub(crate) fn sdk_builder(base_url: &str) -> ClientBuilder {
    let twilio =
        Twilio::builder(ACCOUNT_SID, AUTH_TOKEN).from(FROM).base_url(base_url).build().expect("the adapter builds");
    Client::builder().adapter(twilio)
}

/// A client with the Twilio adapter pointed at `base_url`, and `store` for idempotency.
pub(crate) fn sdk_client<S: IdempotencyStore>(base_url: &str, store: Option<S>) -> Client {
    let builder = sdk_builder(base_url);
    let builder = match store {
        Some(store) => builder.idempotency(store),
        None => builder,
    };
    builder.build().expect("the client builds")
}

/// One `Client::send` of a new message (with an idempotency key when `key` is given).
pub(crate) async fn sdk_send(client: &Client, key: Option<String>) -> Result<(), String> {
    let message = Message::new(TO, BODY);
    let message = match key {
        Some(key) => message.idempotency_key(key),
        None => message,
    };
    match client.send(&message).await {
        Ok(receipt) if !receipt.replayed => Ok(()),
        Ok(_) => Err("the send was replayed, not sent".to_owned()),
        Err(error) => Err(format!("sdk send: {error}")),
    }
}
