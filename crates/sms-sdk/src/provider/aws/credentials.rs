//! AWS credentials: a key pair with an optional session token, and the source the adapter asks
//! for them before each request (so temporary credentials can refresh).

use std::fmt;

use crate::error::Error;
use crate::redact::Secret;
use crate::{BoxError, BoxFuture};

/// An access key id, its secret, and the session token of temporary credentials.
#[derive(Clone)]
pub struct AwsCredentials {
    access_key_id: String,
    secret_access_key: Secret,
    session_token: Option<Secret>,
}

impl AwsCredentials {
    /// Long-term credentials (an IAM user's access key).
    pub fn new(access_key_id: impl Into<String>, secret_access_key: impl Into<Secret>) -> Self {
        Self { access_key_id: access_key_id.into(), secret_access_key: secret_access_key.into(), session_token: None }
    }

    /// Temporary credentials: the session token goes out as `X-Amz-Security-Token` (and is
    /// signed).
    #[must_use]
    pub fn session_token(mut self, token: impl Into<Secret>) -> Self {
        self.session_token = Some(token.into());
        self
    }

    /// The access key id (not a secret: it names the key).
    #[must_use]
    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    pub(crate) fn secret(&self) -> &Secret {
        &self.secret_access_key
    }

    pub(crate) fn token(&self) -> Option<&Secret> {
        self.session_token.as_ref()
    }

    /// Checks what goes into the headers: an access key id of letters and digits, a secret and a
    /// token of visible ASCII.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let id = &self.access_key_id;
        if id.is_empty() || id.len() > 128 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(Error::configuration("The AWS access_key_id must be 1 to 128 letters and digits."));
        }
        crate::http::check_credential("AWS", "secret_access_key", self.secret_access_key.expose())?;
        if let Some(token) = &self.session_token {
            crate::http::check_credential("AWS", "session_token", token.expose())?;
        }
        Ok(())
    }
}

impl fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &self.secret_access_key)
            .field("session_token", &self.session_token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Where the adapter gets its credentials before each request: fixed ones ([`AwsCredentials`]
/// is a source of itself), or your own source that refreshes temporary credentials (an assumed
/// role, a container's or instance's role). An error is a rejection of the send before any
/// request (category `auth`): nothing was sent. Its text is not kept (it may name a secret). A
/// source that has not answered within the attempt's timeout is treated as failed.
pub trait CredentialSource: Send + Sync + 'static {
    /// The credentials to sign the next request with.
    fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, BoxError>>;
}

impl CredentialSource for AwsCredentials {
    fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, BoxError>> {
        let credentials = self.clone();
        Box::pin(async move { Ok(credentials) })
    }
}
