//! OAuth 2.0 client credentials: the access token the adapter fetches from Bandwidth's token URL
//! before a send, and keeps until shortly before it expires.
//!
//! One fetch at a time: concurrent sends that find no fresh token wait for the one fetch under
//! way, then use its token. A fetch that fails leaves nothing cached, so the next send tries
//! again.

use std::time::{Duration, SystemTime};

use http::HeaderMap;
use serde::Deserialize;
use tokio::time::Instant;

use crate::adapter::{Category, Outcome};
use crate::error::{Error, ProviderError};
use crate::http::{Authorization, Body, HttpConfig, Post, Transport, basic_auth, check_credential};
use crate::json::{self, Code, Text};
use crate::redact::Secret;

/// Bandwidth's token URL (the OAuth 2.0 `clientCredentials` flow of its API specification).
pub const DEFAULT_TOKEN_URL: &str = "https://api.bandwidth.com/api/v1/oauth2/token";

/// How long before its end a token is replaced (or half its lifetime, when that is shorter).
const REFRESH_MARGIN: Duration = Duration::from_mins(1);

/// The longest a token is kept, whatever `expires_in` says.
const MAX_LIFETIME: Duration = Duration::from_hours(24);

/// Where a token comes from and the one in hand.
pub(crate) struct TokenSource {
    transport: Transport,
    /// `Basic base64(client_id:client_secret)`.
    client: Authorization,
    /// The token in hand (`Bearer …`) and when it stops being used.
    cached: std::sync::Mutex<Option<(Authorization, Instant)>>,
    /// Held while a token is fetched, so only one fetch runs.
    fetching: tokio::sync::Mutex<()>,
}

/// Why no token could be had (never the token URL's answer: it may echo a secret).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenError {
    /// The token URL could not be reached, or did not answer in time.
    Transport,
    /// It refused the client credentials (this HTTP status).
    Refused(u16),
    /// It answered 2xx without a token that can be sent.
    Malformed,
}

impl TokenError {
    /// Why, for the rejection's message.
    pub(crate) fn describe(self) -> String {
        match self {
            Self::Transport => "the OAuth2 token request failed or timed out; nothing was sent".to_owned(),
            Self::Refused(status) => {
                format!("the OAuth2 token URL refused the client credentials (HTTP {status}); nothing was sent")
            }
            Self::Malformed => "the OAuth2 token URL answered without a usable token; nothing was sent".to_owned(),
        }
    }
}

/// The members of a token response the source reads.
#[derive(Default, Deserialize)]
#[serde(default)]
struct TokenResponse<'a> {
    #[serde(borrow)]
    access_token: Text<'a>,
    #[serde(borrow)]
    token_type: Text<'a>,
    #[serde(borrow)]
    expires_in: Code<'a>,
}

impl TokenSource {
    /// A source fetching from `token_url` with the client credentials.
    pub(crate) fn new(
        provider: &'static str,
        token_url: &str,
        client_id: &str,
        client_secret: &Secret,
        http: &HttpConfig,
    ) -> Result<Self, Error> {
        let transport = Transport::new(provider, token_url, "", vec![client_secret.clone()], http)
            .map_err(|_| Error::configuration("The Bandwidth token URL must be an absolute http(s) URL."))?;
        Ok(Self {
            transport,
            client: basic_auth(client_id, client_secret.expose()),
            cached: std::sync::Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
        })
    }

    /// The token URL's origin, for `Debug`.
    pub(crate) fn origin(&self) -> &str {
        self.transport.origin()
    }

    /// Drops the token in hand (Bandwidth refused it), so the next request fetches another.
    pub(crate) fn forget(&self) {
        if let Ok(mut cached) = self.cached.lock() {
            *cached = None;
        }
    }

    /// The token in hand when it is still fresh.
    fn fresh(&self) -> Option<Authorization> {
        let cached = self.cached.lock().ok()?;
        cached.as_ref().filter(|(_, until)| Instant::now() < *until).map(|(token, _)| token.clone())
    }

    /// A fresh token: the one in hand, or one fetched within `timeout` (the caller bounds the
    /// wait for another fetch too).
    pub(crate) async fn authorization(&self, timeout: Duration) -> Result<Authorization, TokenError> {
        if let Some(token) = self.fresh() {
            return Ok(token);
        }
        let _fetching = self.fetching.lock().await;
        if let Some(token) = self.fresh() {
            return Ok(token);
        }
        let (token, lifetime) = self.fetch(timeout).await?;
        if let Some(keep) = keep_for(lifetime)
            && let Ok(mut cached) = self.cached.lock()
        {
            *cached = Some((token.clone(), Instant::now() + keep));
        }
        Ok(token)
    }

    /// `POST grant_type=client_credentials` with the client credentials as Basic.
    async fn fetch(&self, timeout: Duration) -> Result<(Authorization, Option<Duration>), TokenError> {
        let mut read: Result<(Authorization, Option<Duration>), TokenError> = Err(TokenError::Transport);
        let post = Post {
            authorization: &self.client,
            body: Body::Form("grant_type=client_credentials".to_owned()),
            timeout,
            text: "",
            headers: Vec::new(),
        };
        let interpret = |status: u16, _: &HeaderMap, body: &[u8], _: SystemTime| {
            read = if (200..300).contains(&status) { parse_token(body) } else { Err(TokenError::Refused(status)) };
            // The outcome is not used: what was read is.
            Outcome::rejected(Category::Auth, ProviderError::new("bandwidth"))
        };
        let _ = self.transport.post(post, interpret).await;
        read
    }
}

/// The `Authorization` of a token response and the lifetime it claims.
fn parse_token(body: &[u8]) -> Result<(Authorization, Option<Duration>), TokenError> {
    let response: TokenResponse<'_> = json::read(body).ok().flatten().ok_or(TokenError::Malformed)?;
    let token = response.access_token.non_empty().ok_or(TokenError::Malformed)?;
    if response.token_type.non_empty().is_some_and(|kind| !kind.eq_ignore_ascii_case("bearer")) {
        return Err(TokenError::Malformed);
    }
    check_credential("Bandwidth", "access_token", token).map_err(|_| TokenError::Malformed)?;
    let lifetime = response
        .expires_in
        .string_or_number()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    Ok((Authorization::new(Secret::new(format!("Bearer {token}"))), lifetime))
}

/// How long a token of `lifetime` is used: until `REFRESH_MARGIN` before its end (half its
/// lifetime when that is shorter), at most a day; not kept at all without a lifetime.
fn keep_for(lifetime: Option<Duration>) -> Option<Duration> {
    let lifetime = lifetime?.min(MAX_LIFETIME);
    let keep = lifetime.saturating_sub(REFRESH_MARGIN.min(lifetime / 2));
    (!keep.is_zero()).then_some(keep)
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSource").field("token_url", &self.origin()).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t305_tokens_are_read_and_kept_until_shortly_before_they_expire() {
        let (token, lifetime) =
            parse_token(br#"{"access_token":"eyJ.abc","token_type":"Bearer","expires_in":3600}"#).unwrap();
        assert_eq!(token.expose(), "Bearer eyJ.abc");
        assert_eq!(lifetime, Some(Duration::from_hours(1)));
        assert_eq!(keep_for(lifetime), Some(Duration::from_mins(59)));
        assert_eq!(keep_for(Some(Duration::from_mins(1))), Some(Duration::from_secs(30)));
        assert_eq!(
            keep_for(Some(Duration::from_hours(10 * 24))),
            Some(Duration::from_hours(24) - Duration::from_mins(1))
        );
        assert_eq!(keep_for(Some(Duration::ZERO)), None);
        assert_eq!(keep_for(None), None);
        for body in [
            "{}",
            r#"{"access_token":""}"#,
            r#"{"access_token":"a b"}"#,
            r#"{"access_token":"abc","token_type":"mac"}"#,
            r#"{"access_token":"a","access_token":"b"}"#,
            "not json",
        ] {
            assert_eq!(parse_token(body.as_bytes()).map(|_| ()), Err(TokenError::Malformed), "{body}");
        }
        let (_, lifetime) = parse_token(br#"{"access_token":"abc","expires_in":"120"}"#).unwrap();
        assert_eq!(lifetime, Some(Duration::from_mins(2)));
    }
}
