//! Starting and stopping the emulator.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use sms_sdk::provider::aws::{Aws, AwsBuilder, AwsCredentials};
use sms_sdk::provider::bandwidth::{Bandwidth, BandwidthBuilder};
use sms_sdk::provider::infobip::{Infobip, InfobipBuilder};
use sms_sdk::provider::plivo::{Plivo, PlivoBuilder};
use sms_sdk::provider::sinch::{Sinch, SinchBuilder};
use sms_sdk::provider::telnyx::{Telnyx, TelnyxBuilder};
use sms_sdk::provider::twilio::{Twilio, TwilioBuilder};
use sms_sdk::provider::vonage::{Vonage, VonageBuilder};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::credentials::{
    AWS_ACCESS_KEY_ID, AWS_REGION, AWS_SECRET_ACCESS_KEY, BANDWIDTH_ACCOUNT_ID, BANDWIDTH_API_PASSWORD,
    BANDWIDTH_API_USER, BANDWIDTH_APPLICATION_ID, BANDWIDTH_CLIENT_ID, BANDWIDTH_CLIENT_SECRET, INFOBIP_API_KEY,
    PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN, SINCH_API_TOKEN, SINCH_SERVICE_PLAN_ID, TELNYX_API_KEY, TWILIO_ACCOUNT_SID,
    TWILIO_AUTH_TOKEN, VONAGE_API_KEY, VONAGE_API_SECRET, VONAGE_APPLICATION_ID, VONAGE_PRIVATE_KEY,
};
use crate::delivery::{MAX_PENDING_STATUS, Poster};
use crate::error::{StartError, StartErrorKind};
use crate::latency::Latency;
use crate::model::{Provider, ReceivedMessage};
use crate::observe::{Observer, Served};
use crate::received::Store;
use crate::state::{App, Config, Urls};
use crate::{keys, routes, server};

/// The default listen address: loopback, any free port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:0";
/// The default time between status steps (and before the first): 200 ms.
pub const DEFAULT_STATUS_DELAY: Duration = Duration::from_millis(200);
/// The default time between the attempts of a webhook: 1 s.
pub const DEFAULT_WEBHOOK_RETRY_INTERVAL: Duration = Duration::from_secs(1);
/// The default largest request body: 1 MiB. A larger one is answered with the provider's own
/// error (HTTP 413).
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;
/// The default time a connection has to send a request's headers (and then its body): 30 s.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The default number of received requests kept for inspection (and of rate-limited-once keys):
/// the last 100,000.
pub const DEFAULT_MAX_MESSAGES: usize = 100_000;
/// The longest delay or timeout a builder accepts: one day.
const MAX_DELAY: Duration = Duration::from_hours(24);

/// The local provider emulator: one HTTP server on loopback speaking the Twilio, Telnyx, Plivo,
/// Vonage, Sinch, AWS End User Messaging SMS, Infobip and Bandwidth send APIs. Start one with [`Emulator::builder`]
/// (or [`Emulator::start`] for the defaults).
#[derive(Debug, Clone, Copy)]
pub struct Emulator;

impl Emulator {
    /// A builder: listen on `127.0.0.1:0`, no webhook or inbound URL (for any provider), status
    /// steps every 200 ms.
    pub fn builder() -> EmulatorBuilder {
        EmulatorBuilder::default()
    }

    /// Starts an emulator with the defaults.
    ///
    /// # Errors
    /// As [`EmulatorBuilder::start`].
    pub async fn start() -> Result<RunningEmulator, StartError> {
        Self::builder().start().await
    }
}

/// Configures an emulator; [`EmulatorBuilder::start`] checks the settings and starts it.
#[derive(Debug, Clone)]
#[must_use]
pub struct EmulatorBuilder {
    listen: String,
    webhook_urls: Urls,
    inbound_urls: Urls,
    status_delay: Duration,
    webhook_retry_interval: Duration,
    body_limit: usize,
    header_read_timeout: Duration,
    max_messages: usize,
    latency: Latency,
    observer: Observer,
}

impl Default for EmulatorBuilder {
    fn default() -> Self {
        Self {
            listen: DEFAULT_LISTEN.to_owned(),
            webhook_urls: Urls::default(),
            inbound_urls: Urls::default(),
            status_delay: DEFAULT_STATUS_DELAY,
            webhook_retry_interval: DEFAULT_WEBHOOK_RETRY_INTERVAL,
            body_limit: DEFAULT_BODY_LIMIT,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            max_messages: DEFAULT_MAX_MESSAGES,
            latency: Latency::default(),
            observer: Observer::default(),
        }
    }
}

impl EmulatorBuilder {
    /// The address to listen on: a loopback `IP:PORT` (`127.0.0.1:4010`, `[::1]:0`) or
    /// `localhost:PORT`. Any other address is refused when starting.
    pub fn listen(mut self, address: impl Into<String>) -> Self {
        self.listen = address.into();
        self
    }

    /// Where status webhooks go for messages without a callback URL of their own, at every
    /// provider without a URL of its own ([`EmulatorBuilder::webhook_url_for`]).
    pub fn webhook_url(mut self, url: impl Into<String>) -> Self {
        self.webhook_urls.every = Some(url.into());
        self
    }

    /// Where status webhooks of `provider`'s messages go when they have no callback URL of
    /// their own, in place of [`EmulatorBuilder::webhook_url`] for that provider (set again, the
    /// last URL counts). The other providers' webhooks do not go there.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use sms_sdk_emulator::{Emulator, Provider};
    ///
    /// let emulator = Emulator::builder()
    ///     .webhook_url("http://127.0.0.1:3000/sms/status")
    ///     .webhook_url_for(Provider::Telnyx, "http://127.0.0.1:3000/sms/telnyx")
    ///     .start()
    ///     .await?;
    /// // Telnyx's status webhooks go to /sms/telnyx, every other provider's to /sms/status.
    /// # emulator.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn webhook_url_for(mut self, provider: Provider, url: impl Into<String>) -> Self {
        self.webhook_urls.set(provider, url.into());
        self
    }

    /// Where `POST /_emulator/inbound` delivers inbound messages unless the request names
    /// another URL, for every provider without a URL of its own
    /// ([`EmulatorBuilder::inbound_url_for`]).
    pub fn inbound_url(mut self, url: impl Into<String>) -> Self {
        self.inbound_urls.every = Some(url.into());
        self
    }

    /// Where `POST /_emulator/inbound` delivers `provider`'s inbound messages unless the request
    /// names another URL, in place of [`EmulatorBuilder::inbound_url`] for that provider (set
    /// again, the last URL counts).
    pub fn inbound_url_for(mut self, provider: Provider, url: impl Into<String>) -> Self {
        self.inbound_urls.set(provider, url.into());
        self
    }

    /// The time before the first status step and between steps (default 200 ms).
    pub fn status_delay(mut self, delay: Duration) -> Self {
        self.status_delay = delay;
        self
    }

    /// The time between the attempts of a webhook that was not answered 2xx (default 1 s).
    pub fn webhook_retry_interval(mut self, interval: Duration) -> Self {
        self.webhook_retry_interval = interval;
        self
    }

    /// The largest request body accepted, in bytes (default 1 MiB). A send with a larger body
    /// is answered with its provider's error body and HTTP 413 (and listed for inspection);
    /// `POST /_emulator/inbound` answers 413 `{"error"}`.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// How long a connection has to send a request's headers (default 30 s): counted from the
    /// connection, or from the previous response on a kept-alive one, so an idle connection is
    /// closed after it too. The same time bounds reading the body. Between 1 ms and one day.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How many received requests are kept for inspection (default 100,000): beyond it, the
    /// oldest entry is forgotten (a message no longer kept gets no further status webhooks and
    /// is not found by the fetch endpoints). The rate-limited-once keys are bounded by the same
    /// number. At least 1.
    pub fn max_messages(mut self, count: usize) -> Self {
        self.max_messages = count;
        self
    }

    /// How long to wait before answering each send request (by default, no wait): `choose` is
    /// called once per send request with the request as received (provider, recipient, sender,
    /// body; its status is not set yet) and returns the wait, at most one day.
    ///
    /// The wait comes after the request is handled: it is listed, and a message it creates
    /// exists, before the wait starts. So a client whose timeout is shorter than the wait gives
    /// up on a message that was created, as it would with a slow provider. A held connection
    /// stays held; a reset or a dropped connection happens after the wait. Seed any randomness
    /// in `choose` (or derive the wait from the request, as from a key in its body) to keep a
    /// test repeatable.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use sms_sdk::{Client, ErrorKind, Message, UnknownReason};
    /// use sms_sdk_emulator::Emulator;
    ///
    /// let slow = |request: &sms_sdk_emulator::ReceivedMessage| {
    ///     if request.body.as_deref() == Some("slow") { Duration::from_millis(300) } else { Duration::ZERO }
    /// };
    /// let emulator = Emulator::builder().latency(slow).start().await?;
    /// let client = Client::builder()
    ///     .adapter(emulator.twilio().from("+15005550006").build()?)
    ///     .timeout(Duration::from_millis(100))
    ///     .build()?;
    /// let error = client.send(&Message::new("+14155550123", "slow")).await.unwrap_err();
    /// assert_eq!(error.kind(), ErrorKind::Unknown(UnknownReason::Timeout));
    /// assert!(emulator.messages()[0].id.is_some(), "the message was created all the same");
    /// # Ok(())
    /// # }
    /// ```
    pub fn latency(mut self, choose: impl Fn(&ReceivedMessage) -> Duration + Send + Sync + 'static) -> Self {
        self.latency = Latency::new(choose);
        self
    }

    /// Calls `observe` once per request the emulator answers (or faults) and once per webhook
    /// it posts (after its last attempt): what a request log prints. It is called on the
    /// emulator's tasks, so it should return quickly (hand the event to a channel). The events
    /// are safe to log: recipients are masked and no body, credential or signature is in them.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::sync::{Arc, Mutex};
    /// use sms_sdk::{Client, Message};
    /// use sms_sdk_emulator::{Emulator, magic};
    ///
    /// let lines = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&lines);
    /// let emulator = Emulator::builder().observe(move |event| log.lock().unwrap().push(event.to_string())).start().await?;
    /// let client = Client::builder().adapter(emulator.twilio().from("+15005550006").build()?).build()?;
    /// let _ = client.send(&Message::new(magic::OPTED_OUT, "Hi")).await;
    /// assert_eq!(lines.lock().unwrap()[0], "twilio send to=+1********04 400 rejected category=compliance");
    /// # Ok(())
    /// # }
    /// ```
    pub fn observe(mut self, observe: impl Fn(&Served) + Send + Sync + 'static) -> Self {
        self.observer = Observer::new(observe);
        self
    }

    /// Binds the address and starts serving in the background (on the current tokio runtime).
    ///
    /// # Errors
    /// [`StartErrorKind::InvalidAddress`] or [`StartErrorKind::NotLoopback`] for the listen
    /// address, [`StartErrorKind::InvalidUrl`] for a webhook or inbound URL (of every
    /// provider or of one) that is not an absolute http(s) URL,
    /// [`StartErrorKind::InvalidSetting`] for a delay or timeout out of range,
    /// [`StartErrorKind::Bind`] when the address is taken, and
    /// [`StartErrorKind::Internal`] if the fixed keys or the HTTP client cannot be set up.
    pub async fn start(self) -> Result<RunningEmulator, StartError> {
        let address = loopback_address(&self.listen)?;
        for url in self.webhook_urls.all().chain(self.inbound_urls.all()) {
            check_url(url)?;
        }
        check_delay("the status delay", self.status_delay, Duration::ZERO)?;
        check_delay("the webhook retry interval", self.webhook_retry_interval, Duration::ZERO)?;
        check_delay("the header read timeout", self.header_read_timeout, Duration::from_millis(1))?;
        let keys = keys::keys().map_err(|detail| StartError::new(StartErrorKind::Internal, detail))?;
        let poster = Poster::new(self.webhook_retry_interval).map_err(|error| {
            StartError::new(StartErrorKind::Internal, "the webhook HTTP client could not be built")
                .with_boxed_source(error)
        })?;
        let listener = TcpListener::bind(address).await.map_err(|error| {
            StartError::new(StartErrorKind::Bind, format!("could not listen on {address}")).with_source(error)
        })?;
        let address = listener.local_addr().map_err(|error| {
            StartError::new(StartErrorKind::Bind, "the listening address is unknown").with_source(error)
        })?;
        let shutdown = CancellationToken::new();
        let config = Config {
            webhook_urls: self.webhook_urls,
            inbound_urls: self.inbound_urls,
            status_delay: self.status_delay,
            body_limit: self.body_limit,
            read_timeout: self.header_read_timeout,
            latency: self.latency,
            observer: self.observer,
        };
        let store = Store::new(shutdown.clone(), self.max_messages);
        let status_slots = Arc::new(Semaphore::new(MAX_PENDING_STATUS));
        let app = Arc::new(App { config, keys, store, poster, status_slots, shutdown: shutdown.clone() });
        let router = routes::router(Arc::clone(&app));
        let server = tokio::spawn(server::serve(listener, router, self.header_read_timeout, shutdown));
        Ok(RunningEmulator { app, address, server: Some(server) })
    }
}

/// Parses a listen address as [`EmulatorBuilder::listen`] takes it (`127.0.0.1:PORT`,
/// `[::1]:PORT` or `localhost:PORT`) and refuses anything but loopback, so a command can check
/// its argument before starting.
///
/// ```
/// assert!(sms_sdk_emulator::loopback_address("localhost:4010").is_ok());
/// assert!(sms_sdk_emulator::loopback_address("0.0.0.0:4010").is_err());
/// ```
///
/// # Errors
/// [`StartErrorKind::InvalidAddress`] when it is not an address, [`StartErrorKind::NotLoopback`]
/// when it is not a loopback one.
pub fn loopback_address(text: &str) -> Result<SocketAddr, StartError> {
    let invalid = || {
        StartError::new(
            StartErrorKind::InvalidAddress,
            format!("{text:?} is not a listen address (expected 127.0.0.1:PORT, [::1]:PORT or localhost:PORT)"),
        )
    };
    let address = match text.strip_prefix("localhost:") {
        Some(port) => SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port.parse().map_err(|_| invalid())?),
        None => text.parse::<SocketAddr>().map_err(|_| invalid())?,
    };
    if !address.ip().is_loopback() {
        return Err(StartError::new(
            StartErrorKind::NotLoopback,
            format!("the emulator listens on loopback only, not on {address}"),
        ));
    }
    Ok(address)
}

/// Refuses a delay under `min` or over a day.
fn check_delay(name: &str, delay: Duration, min: Duration) -> Result<(), StartError> {
    if (min..=MAX_DELAY).contains(&delay) {
        return Ok(());
    }
    Err(StartError::new(
        StartErrorKind::InvalidSetting,
        format!("{name} must be between {min:?} and one day, not {delay:?}"),
    ))
}

/// Checks a webhook or inbound URL as [`EmulatorBuilder::start`] does: an absolute http(s) URL.
///
/// ```
/// assert!(sms_sdk_emulator::check_url("http://127.0.0.1:3000/sms").is_ok());
/// assert!(sms_sdk_emulator::check_url("127.0.0.1:3000/sms").is_err());
/// ```
///
/// # Errors
/// [`StartErrorKind::InvalidUrl`] for anything else.
pub fn check_url(text: &str) -> Result<(), StartError> {
    match url::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(()),
        Ok(_) | Err(_) => {
            Err(StartError::new(StartErrorKind::InvalidUrl, format!("{text:?} is not an absolute http(s) URL")))
        }
    }
}

/// A running emulator. It stops when [`RunningEmulator::shutdown`] is awaited or when it is
/// dropped.
pub struct RunningEmulator {
    app: Arc<App>,
    address: SocketAddr,
    server: Option<JoinHandle<()>>,
}

impl RunningEmulator {
    /// `http://127.0.0.1:PORT`: the base URL to give every adapter.
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The address it listens on.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Every send request received so far, in order (what `GET /_emulator/messages` lists).
    #[must_use]
    pub fn messages(&self) -> Vec<ReceivedMessage> {
        self.app.store.list()
    }

    /// Forgets every message and all per-recipient state, and stops pending status webhooks
    /// (what `DELETE /_emulator/messages` does).
    pub fn clear(&self) {
        self.app.store.clear();
    }

    /// A Twilio adapter builder with the emulator's credentials and base URL (add a sender).
    pub fn twilio(&self) -> TwilioBuilder {
        Twilio::builder(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN).base_url(self.base_url())
    }

    /// A Telnyx adapter builder with the emulator's API key and base URL.
    pub fn telnyx(&self) -> TelnyxBuilder {
        Telnyx::builder(TELNYX_API_KEY).base_url(self.base_url())
    }

    /// A Plivo adapter builder with the emulator's credentials and base URL.
    pub fn plivo(&self) -> PlivoBuilder {
        Plivo::builder(PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN).base_url(self.base_url())
    }

    /// A Vonage adapter builder with the emulator's API key and secret (Basic auth).
    pub fn vonage(&self) -> VonageBuilder {
        Vonage::basic(VONAGE_API_KEY, VONAGE_API_SECRET).base_url(self.base_url())
    }

    /// A Vonage adapter builder authenticated as the emulator's test application (RS256 JWT).
    pub fn vonage_application(&self) -> VonageBuilder {
        Vonage::application(VONAGE_APPLICATION_ID, VONAGE_PRIVATE_KEY).base_url(self.base_url())
    }

    /// A Sinch adapter builder with the emulator's service plan, API token and base URL.
    pub fn sinch(&self) -> SinchBuilder {
        Sinch::builder(SINCH_SERVICE_PLAN_ID, SINCH_API_TOKEN).base_url(self.base_url())
    }

    /// An AWS End User Messaging SMS adapter builder with the emulator's access key, region
    /// (`us-east-1`) and base URL (add a sender). AWS has no per-message callback URL: its
    /// delivery events go to the emulator's webhook URL for AWS
    /// ([`EmulatorBuilder::webhook_url_for`] with [`Provider::Aws`], or
    /// [`EmulatorBuilder::webhook_url`]), as SNS notifications from
    /// [`AWS_SNS_TOPIC_ARN`](crate::credentials::AWS_SNS_TOPIC_ARN) signed with the key of
    /// [`AWS_SNS_CERTIFICATE`](crate::credentials::AWS_SNS_CERTIFICATE).
    pub fn aws(&self) -> AwsBuilder {
        Aws::builder(AWS_REGION, AwsCredentials::new(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY))
            .base_url(self.base_url())
    }

    /// An Infobip adapter builder with the emulator's API key, the emulator's base URL standing
    /// for the account's own API host (add a sender). Delivery reports go to the message's
    /// webhook URL, or else the emulator's webhook URL for Infobip, with the Basic credentials
    /// [`INFOBIP_WEBHOOK_USER`](crate::credentials::INFOBIP_WEBHOOK_USER) and
    /// [`INFOBIP_WEBHOOK_PASSWORD`](crate::credentials::INFOBIP_WEBHOOK_PASSWORD).
    pub fn infobip(&self) -> InfobipBuilder {
        Infobip::builder(self.base_url(), INFOBIP_API_KEY)
    }

    /// A Bandwidth adapter builder for the emulator's account and Messaging application,
    /// authenticated as its API user (HTTP Basic), with the emulator's base URL (add a sender).
    /// Bandwidth has no per-message callback URL: its callbacks go to the emulator's webhook URL
    /// for Bandwidth ([`EmulatorBuilder::webhook_url_for`] with [`Provider::Bandwidth`], or
    /// [`EmulatorBuilder::webhook_url`]), with the application's callback credentials
    /// [`BANDWIDTH_CALLBACK_USER`](crate::credentials::BANDWIDTH_CALLBACK_USER) and
    /// [`BANDWIDTH_CALLBACK_PASSWORD`](crate::credentials::BANDWIDTH_CALLBACK_PASSWORD).
    pub fn bandwidth(&self) -> BandwidthBuilder {
        Bandwidth::basic(BANDWIDTH_ACCOUNT_ID, BANDWIDTH_APPLICATION_ID, BANDWIDTH_API_USER, BANDWIDTH_API_PASSWORD)
            .base_url(self.base_url())
    }

    /// A Bandwidth adapter builder as [`RunningEmulator::bandwidth`], authenticated with OAuth 2.0
    /// client credentials: its token comes from the emulator's `POST /api/v1/oauth2/token`.
    pub fn bandwidth_oauth2(&self) -> BandwidthBuilder {
        Bandwidth::oauth2(BANDWIDTH_ACCOUNT_ID, BANDWIDTH_APPLICATION_ID, BANDWIDTH_CLIENT_ID, BANDWIDTH_CLIENT_SECRET)
            .base_url(self.base_url())
            .token_url(format!("{}/api/v1/oauth2/token", self.base_url()))
    }

    /// Stops accepting connections, ends open ones and cancels pending webhooks.
    pub async fn shutdown(mut self) {
        self.app.shutdown.cancel();
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

impl Drop for RunningEmulator {
    fn drop(&mut self) {
        self.app.shutdown.cancel();
    }
}

impl fmt::Debug for RunningEmulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunningEmulator")
            .field("base_url", &self.base_url())
            .field("webhook_url", &self.app.config.webhook_urls.every)
            .field("webhook_url_for", &self.app.config.webhook_urls.own)
            .field("inbound_url", &self.app.config.inbound_urls.every)
            .field("inbound_url_for", &self.app.config.inbound_urls.own)
            .field("status_delay", &self.app.config.status_delay)
            .field("body_limit", &self.app.config.body_limit)
            .field("header_read_timeout", &self.app.config.read_timeout)
            .field("latency", &self.app.config.latency)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_accepted() {
        assert!(loopback_address("127.0.0.1:0").is_ok());
        assert!(loopback_address("[::1]:4010").is_ok());
        assert_eq!(loopback_address("localhost:4010").ok(), "127.0.0.1:4010".parse().ok());
        for (text, kind) in [
            ("0.0.0.0:4010", StartErrorKind::NotLoopback),
            ("192.168.1.2:4010", StartErrorKind::NotLoopback),
            ("[::]:0", StartErrorKind::NotLoopback),
            ("example.com:80", StartErrorKind::InvalidAddress),
            ("127.0.0.1", StartErrorKind::InvalidAddress),
        ] {
            assert_eq!(loopback_address(text).map_err(|e| e.kind()).err(), Some(kind), "{text}");
        }
    }

    #[test]
    fn delays_must_be_within_range() {
        assert!(check_delay("d", Duration::ZERO, Duration::ZERO).is_ok());
        assert!(check_delay("d", MAX_DELAY, Duration::ZERO).is_ok());
        assert!(check_delay("d", Duration::ZERO, Duration::from_millis(1)).is_err());
        let error = check_delay("d", Duration::MAX, Duration::ZERO).err().map(|e| e.kind());
        assert_eq!(error, Some(StartErrorKind::InvalidSetting));
    }

    #[test]
    fn urls_must_be_absolute_http() {
        assert!(check_url("http://127.0.0.1:9/hook").is_ok());
        assert!(check_url("/hook").is_err());
        assert!(check_url("ftp://example.com/").is_err());
    }
}
