//! Sinch (SMS REST API `xms/v1`): support level `supported`.
//!
//! ```
//! use sms_sdk::provider::sinch::{Region, Sinch};
//!
//! let sinch = Sinch::builder("servicePlanId01", "API-TOKEN-0123456789").region(Region::Eu).from("+15005550006").build()?;
//! # let _ = sinch;
//! # Ok::<(), sms_sdk::Error>(())
//! ```
//!
//! A message is a JSON `POST {base}/xms/v1/{service_plan_id}/batches` of one recipient with
//! `Authorization: Bearer <API token>` (the token of that service plan), asking for a delivery
//! report per recipient. The correlation reference travels as the batch's `client_reference`,
//! which Sinch echoes in every delivery report. Sinch has no idempotency header, so a send whose
//! outcome is unknown is settled by a lookup (`client_reference`, recipient) or a verified
//! delivery report, never by sending again.

mod lookup;
mod request;
mod response;
mod webhook;

use std::fmt;

use time::OffsetDateTime;

use self::request::{OPTIONS, capabilities, request_body};
use self::response::interpret;
#[cfg(feature = "testing")]
pub(crate) use self::webhook::parse as parse_body;
pub use self::webhook::{SinchWebhook, signed_payload};
use crate::HttpConfig;
use crate::adapter::{Adapter, AdapterInfo, Outcome, SendContext, Support, SupportStatus};
use crate::error::Error;
use crate::http::{Authorization, Body, Post, Transport, check_credential};
use crate::lookup::{Lookup, is_plain_id};
use crate::message::{OutboundMessage, Sender};
use crate::redact::Secret;

/// The adapter's name.
pub const NAME: &str = "sinch";

/// Wire facts and pure functions the emulator and the test suites share; not part of the stable
/// API, may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use super::request::{DEFAULT_DELIVERY_REPORT, MAX_VALIDITY_SECS, OPTIONS, capabilities, request_body};
    pub use super::response::{delivery, interpret, rejection_category};
    pub use super::webhook::{sign, verify_signature};
}

/// Sinch's SMS regions: each keeps its data in that region, and a service plan lives in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Region {
    /// `https://us.sms.api.sinch.com` (the default).
    #[default]
    Us,
    /// `https://eu.sms.api.sinch.com`.
    Eu,
    /// `https://au.sms.api.sinch.com`.
    Au,
    /// `https://br.sms.api.sinch.com`.
    Br,
    /// `https://ca.sms.api.sinch.com`.
    Ca,
}

impl Region {
    /// The region's API origin.
    #[must_use]
    pub const fn base_url(self) -> &'static str {
        match self {
            Self::Us => "https://us.sms.api.sinch.com",
            Self::Eu => "https://eu.sms.api.sinch.com",
            Self::Au => "https://au.sms.api.sinch.com",
            Self::Br => "https://br.sms.api.sinch.com",
            Self::Ca => "https://ca.sms.api.sinch.com",
        }
    }
}

/// The Sinch adapter.
#[derive(Clone)]
pub struct Sinch {
    info: AdapterInfo,
    transport: Transport,
    authorization: Authorization,
}

/// Builds a [`Sinch`] adapter.
#[must_use]
pub struct SinchBuilder {
    service_plan_id: String,
    api_token: Secret,
    from: Option<Sender>,
    base_url: Option<String>,
    region: Region,
    http: HttpConfig,
}

impl Sinch {
    /// An adapter for the service plan `service_plan_id`, authenticated with its API token
    /// (Sinch dashboard → SMS → APIs).
    pub fn builder(service_plan_id: impl Into<String>, api_token: impl Into<Secret>) -> SinchBuilder {
        SinchBuilder {
            service_plan_id: service_plan_id.into(),
            api_token: api_token.into(),
            from: None,
            base_url: None,
            region: Region::default(),
            http: HttpConfig::new(),
        }
    }
}

impl SinchBuilder {
    /// The default sender (a number, a short code or an alphanumeric sender ID).
    pub fn from(mut self, sender: impl Into<Sender>) -> Self {
        self.from = Some(sender.into());
        self
    }

    /// The region of the service plan (default [`Region::Us`]).
    pub fn region(mut self, region: Region) -> Self {
        self.region = region;
        self
    }

    /// How the adapter reaches Sinch, for its sends and lookups: a client of your own (a proxy,
    /// one pool for several adapters), the connect timeout, the `User-Agent` ([`HttpConfig`]).
    pub fn http(mut self, http: HttpConfig) -> Self {
        self.http = http;
        self
    }

    /// Replaces the region's origin (the emulator, a proxy).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// Checks the configuration and builds the adapter.
    ///
    /// # Errors
    /// `Configuration` when the service plan id is not 1 to 64 letters, digits, `-` or `_` (it
    /// goes into the request's path), the API token is empty or holds a character that cannot
    /// be sent in a header, or the base URL is not http(s).
    pub fn build(self) -> Result<Sinch, Error> {
        if self.service_plan_id.is_empty() {
            return Err(Error::configuration("Sinch service_plan_id is required."));
        }
        if !is_plain_id(&self.service_plan_id) {
            return Err(Error::configuration("The Sinch service plan id must be 1 to 64 letters, digits, '-' or '_'."));
        }
        check_credential("Sinch", "api_token", self.api_token.expose())?;
        let mut info = AdapterInfo::new(NAME, capabilities())
            .support(Support { status: SupportStatus::Supported, notes: Vec::new() })
            .provider_options(&OPTIONS);
        info.default_from = self.from;
        let base_url = self.base_url.as_deref().unwrap_or(self.region.base_url());
        let path = format!("/xms/v1/{}/batches", self.service_plan_id);
        let transport = Transport::new(NAME, base_url, &path, vec![self.api_token.clone()], &self.http)?;
        info.endpoint = Some(transport.origin().to_owned());
        let authorization = Authorization::new(Secret::new(format!("Bearer {}", self.api_token.expose())));
        Ok(Sinch { info, transport, authorization })
    }
}

impl Adapter for Sinch {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        let body = Body::Json(request_body(message, OffsetDateTime::now_utc()));
        let post = Post::new(&self.authorization, body, cx, message);
        self.transport.post(post, interpret).await
    }

    fn lookup(&self) -> Option<&dyn Lookup> {
        Some(self)
    }
}

impl fmt::Debug for Sinch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sinch")
            .field("endpoint", &self.transport.origin())
            .field("path", &self.transport.path())
            .field("default_from", &self.info.default_from)
            .field("authorization", &self.authorization)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for SinchBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SinchBuilder")
            .field("service_plan_id", &self.service_plan_id)
            .field("region", &self.region)
            .field("base_url", &self.base_url.as_deref().map(crate::redact::redact_url))
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builder_checks_what_goes_into_the_path_and_the_header() {
        assert!(Sinch::builder("plan-1", "token").build().is_ok());
        for plan in ["../x", "a/b", "a?b"] {
            let error = Sinch::builder(plan, "token").build().unwrap_err();
            assert!(error.to_string().contains("service plan id"), "{plan}: {error}");
        }
        let error = Sinch::builder("", "token").build().unwrap_err();
        assert_eq!(error.to_string(), "Sinch service_plan_id is required.");
        assert!(Sinch::builder("plan", "").build().is_err());
        assert!(Sinch::builder("plan", "a\nb").build().is_err());
        let eu = Sinch::builder("plan", "token").region(Region::Eu).build().unwrap();
        assert_eq!(eu.info().endpoint.as_deref(), Some("https://eu.sms.api.sinch.com"));
    }

    #[test]
    fn debug_hides_the_token() {
        let sinch = Sinch::builder("plan", "secret-token-123").build().unwrap();
        let debug = format!("{sinch:?} {:?}", Sinch::builder("plan", "secret-token-123"));
        assert!(!debug.contains("secret-token-123"), "{debug}");
        assert!(debug.contains("/xms/v1/plan/batches"), "{debug}");
    }
}
