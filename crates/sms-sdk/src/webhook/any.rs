//! [`AnyWebhook`]: one verifier for several providers, for the status callbacks of a client
//! that fails over (a message's callbacks come from whichever provider accepted it).

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use http::HeaderMap;

use super::{SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// The name an [`AnyWebhook`] gives as its provider, and in the errors of a request it cannot
/// attribute to one of its verifiers.
const NAME: &str = "any";

/// A verifier made of several providers' verifiers: it recognises the provider of each request
/// from its headers ([`WebhookVerifier::recognizes`]: Twilio's `X-Twilio-Signature`, Telnyx's
/// `telnyx-signature-ed25519`, Plivo's `X-Plivo-Signature-*`, Vonage's `Authorization: Bearer`,
/// Sinch's `x-sinch-webhook-signature`, AWS SNS's `x-amz-sns-message-type`, and an
/// `Authorization: Basic` for Infobip's and Bandwidth's Basic credentials; an Infobip verifier
/// of a URL token recognises nothing: give it a route of its own) and verifies it with that
/// provider's verifier and secret.
///
/// A request recognised by no verifier is refused as
/// [`MissingSignature`](WebhookError::MissingSignature) (401) with the provider `any`. When
/// several verifiers recognise it (two accounts of one provider, or two routes with different
/// public URLs), each is tried in the order added and the first that verifies wins; when none
/// does, the first one's error is returned. Nothing of the payload is read before a signature
/// holds, as with each verifier alone.
///
/// It is a [`WebhookVerifier`], so it works wherever one does: the axum extractor
/// (`Verified<AnyWebhook>`, with the `AnyWebhook` as the router state or taken from it through
/// `FromRef`), the tower layer (`VerifyLayer::new(any)`), or [`verify`](WebhookVerifier::verify)
/// directly. Its [`body_limit`](WebhookVerifier::body_limit) is the largest of its verifiers'
/// (each still refuses a body over its own). Cloning is cheap: the verifiers are shared.
///
/// ```
/// # #[cfg(all(feature = "twilio", feature = "telnyx", feature = "testing"))] {
/// use sms_sdk::testing::webhooks::{TelnyxKeyPair, signed_twilio_request};
/// use sms_sdk::webhook::{AnyWebhook, WebhookVerifier};
/// use sms_sdk::{TelnyxWebhook, TwilioWebhook};
///
/// # let telnyx_public_key = TelnyxKeyPair::from_seed([7; 32]).public_key;
/// let url = "https://example.com/sms/status";
/// let webhooks = AnyWebhook::new()
///     .with(TwilioWebhook::new("auth-token").unwrap().public_url(url))
///     .with(TelnyxWebhook::new(&telnyx_public_key).unwrap());
///
/// let params = [("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("MessageStatus", "delivered")];
/// let signed = signed_twilio_request("auth-token", url, &params);
/// let event = webhooks.verify(&signed.as_request()).unwrap();
/// assert_eq!(event.provider, "twilio");
/// # }
/// ```
#[derive(Clone, Default)]
pub struct AnyWebhook {
    verifiers: Vec<Arc<dyn WebhookVerifier>>,
}

impl AnyWebhook {
    /// A set with no verifier yet (it refuses every request until one is added).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `verifier`; requests it recognises are verified with it.
    #[must_use]
    pub fn with(mut self, verifier: impl WebhookVerifier + 'static) -> Self {
        self.verifiers.push(Arc::new(verifier));
        self
    }

    /// Adds a verifier that is already shared.
    #[must_use]
    pub fn with_shared(mut self, verifier: Arc<dyn WebhookVerifier>) -> Self {
        self.verifiers.push(verifier);
        self
    }

    /// The providers of its verifiers, in the order added (a provider added twice is named twice).
    pub fn providers(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.verifiers.iter().map(|v| v.provider())
    }

    /// What `verify` answers with the first verifier that recognises `request` and verifies
    /// it, else the first refusal (`MissingSignature` when none recognises it).
    fn first_verified<T>(
        &self,
        request: &WebhookRequest<'_>,
        verify: impl Fn(&dyn WebhookVerifier) -> Result<T, WebhookError>,
    ) -> Result<T, WebhookError> {
        let mut first_error = None;
        for verifier in self.recognising(request.headers) {
            match verify(verifier) {
                Ok(verified) => return Ok(verified),
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        Err(first_error.unwrap_or(WebhookError::MissingSignature { provider: NAME }))
    }

    /// The verifiers that recognise a request with `headers`, in the order added.
    fn recognising<'a>(&'a self, headers: &'a HeaderMap) -> impl Iterator<Item = &'a dyn WebhookVerifier> + 'a {
        self.verifiers.iter().map(|v| &**v).filter(move |v| v.recognizes(headers))
    }
}

impl WebhookVerifier for AnyWebhook {
    /// `any`: the provider of one request is the one that verified it (the event's `provider`).
    fn provider(&self) -> &'static str {
        NAME
    }

    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.first_verified(request, |verifier| verifier.verify_at(request, now))
    }

    fn verify_all_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<Vec<SmsEvent>, WebhookError> {
        self.first_verified(request, |verifier| verifier.verify_all_at(request, now))
    }

    fn body_limit(&self) -> usize {
        self.verifiers.iter().map(|v| v.body_limit()).max().unwrap_or(super::DEFAULT_MAX_BODY)
    }

    fn recognizes(&self, headers: &HeaderMap) -> bool {
        self.recognising(headers).next().is_some()
    }

    /// The first challenge of its verifiers (a request without credentials names no provider).
    fn challenge(&self) -> Option<&'static str> {
        self.verifiers.iter().find_map(|v| v.challenge())
    }

    /// Prepares every verifier that recognizes the request; the first failure is the answer.
    fn prepare<'a>(&'a self, request: &'a WebhookRequest<'a>) -> crate::BoxFuture<'a, Result<(), WebhookError>> {
        Box::pin(async move {
            for verifier in self.recognising(request.headers) {
                verifier.prepare(request).await?;
            }
            Ok(())
        })
    }
}

impl fmt::Debug for AnyWebhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyWebhook").field("providers", &self.providers().collect::<Vec<_>>()).finish()
    }
}
