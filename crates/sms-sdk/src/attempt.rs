//! The provider requests of a send, as errors and receipts list them: safe to log.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::outcome::{Category, Delivery, UnknownReason};

/// One provider request of a send: safe to log (no body, number or option).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Attempt {
    /// The adapter that made it.
    pub provider: String,
    /// 1-based, per adapter within one send.
    pub attempt: u32,
    /// What it proved.
    #[serde(flatten)]
    pub outcome: AttemptOutcome,
    /// How long the request took.
    #[serde(rename = "duration_ms", with = "millis")]
    pub duration: Duration,
    /// Where the request went (`scheme://host[:port]`), when the adapter says
    /// ([`AdapterInfo::endpoint`](crate::adapter::AdapterInfo::endpoint)). Idempotency records
    /// keep it, so that a result is never replayed to a client that sends somewhere else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

/// The result of one attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// Accepted.
    Accepted {
        /// The provider's message id.
        provider_id: String,
        /// Status in the response.
        delivery: Delivery,
    },
    /// Rejected.
    Rejected {
        /// Why.
        category: Category,
        /// HTTP status, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        http_status: Option<u16>,
        /// The provider's error code, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_code: Option<String>,
        /// The provider's `Retry-After`.
        #[serde(default, rename = "retry_after_ms", skip_serializing_if = "Option::is_none", with = "millis_opt")]
        retry_after: Option<Duration>,
    },
    /// Unknown.
    Unknown {
        /// Why.
        reason: UnknownReason,
        /// HTTP status, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        http_status: Option<u16>,
    },
}

pub(crate) mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

pub(crate) mod millis_opt {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::ref_option)] // the signature serde's `with` requires
    pub(crate) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::millis::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<u64>::deserialize(d).map(|ms| ms.map(Duration::from_millis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_serialize_flat_with_millisecond_durations() {
        let attempt = Attempt {
            provider: "memory".into(),
            attempt: 1,
            outcome: AttemptOutcome::Rejected {
                category: Category::RateLimited,
                http_status: Some(429),
                provider_code: None,
                retry_after: Some(Duration::from_secs(2)),
            },
            duration: Duration::from_millis(12),
            endpoint: None,
        };
        let json = serde_json::to_string(&attempt).unwrap();
        assert_eq!(
            json,
            r#"{"provider":"memory","attempt":1,"outcome":"rejected","category":"rate_limited","http_status":429,"retry_after_ms":2000,"duration_ms":12}"#
        );
        assert_eq!(serde_json::from_str::<Attempt>(&json).unwrap(), attempt);
    }
}
