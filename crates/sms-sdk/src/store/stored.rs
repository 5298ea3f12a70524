//! The stored format of a final record's JSON: versioned, and independent of the public types,
//! so that a field added to [`Receipt`] or [`ErrorRecord`] never changes what a store writes or
//! can read.
//!
//! Version 0 has no `v` field: the public `Receipt` and `ErrorRecord` as they serialized up to
//! the first versioned release. Version 1 adds `v` and, on an accepted record, the `endpoint` it
//! was sent to (kept for a key an operator settled, which has no attempt to carry it). A version
//! 1 row holds every field version 0 requires, so a release that reads only version 0 still
//! reads it (during a rolling upgrade, or after a rollback). A row of a version newer than
//! [`VERSION`] is refused with an error naming it ([`StoreError::newer_format`]), never taken for
//! absent.
//!
//! Every change of the format adds a version and golden fixtures
//! (`tests/fixtures/stored/v<N>/`), and keeps reading the older ones.

use std::io::Write;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::StoreError;
use crate::encoding::Encoding;
use crate::error::{Attempt, AttemptOutcome, ErrorRecord, Limit};
use crate::issue::Field;
use crate::outcome::{Category, Delivery, ProviderError, UnknownReason};
use crate::receipt::Receipt;

/// The format version this code writes; it reads every version up to it.
pub(crate) const VERSION: u32 = 1;

/// Just the version of a stored record (absent: version 0).
#[derive(Deserialize)]
struct Version {
    #[serde(default)]
    v: u32,
}

/// Refuses a record of a format newer than [`VERSION`].
fn check_version(key: &str, json: &str) -> Result<(), StoreError> {
    let Version { v } = serde_json::from_str(json)
        .map_err(|e| StoreError::corrupt(key, format_args!("the record does not parse: {e}")))?;
    if v > VERSION { Err(StoreError::newer_format(key, v, VERSION)) } else { Ok(()) }
}

/// An accepted record's result, as stored.
#[derive(Serialize, Deserialize)]
struct StoredReceipt {
    #[serde(default)]
    v: u32,
    id: String,
    provider: String,
    provider_id: String,
    /// Always `accepted`: written for version 0 readers, which require it; not read.
    #[serde(default = "accepted", skip_deserializing)]
    handoff: &'static str,
    delivery: Delivery,
    encoding: Encoding,
    segments: u32,
    attempted_providers: Vec<String>,
    attempts: Vec<StoredAttempt>,
    /// Always false: written for version 0 readers, which require it; not read.
    #[serde(default, skip_deserializing)]
    replayed: bool,
    /// Where the message went, when no attempt says (a key an operator settled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    endpoint: Option<String>,
}

const fn accepted() -> &'static str {
    "accepted"
}

/// One provider request, as stored.
#[derive(Serialize, Deserialize)]
struct StoredAttempt {
    provider: String,
    attempt: u32,
    #[serde(flatten)]
    outcome: StoredOutcome,
    duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    endpoint: Option<String>,
}

/// What one request proved, as stored.
#[derive(Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum StoredOutcome {
    Accepted {
        provider_id: String,
        delivery: Delivery,
    },
    Rejected {
        category: Category,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        http_status: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_code: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
    },
    Unknown {
        reason: UnknownReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        http_status: Option<u16>,
    },
}

/// A rejected or unknown record's error, as stored.
#[derive(Serialize, Deserialize)]
struct StoredError {
    #[serde(default, skip_serializing_if = "is_zero")]
    v: u32,
    code: String,
    message: String,
    retry_safe: bool,
    attempts: Vec<StoredAttempt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provider: Option<StoredProviderError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    category: Option<Category>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<UnknownReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit: Option<Limit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    field: Option<Field>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_after_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    errors: Vec<StoredError>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // the signature serde's `skip_serializing_if` requires
const fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// A provider's details, as stored.
#[derive(Serialize, Deserialize)]
struct StoredProviderError {
    provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request_id: Option<String>,
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl From<&Attempt> for StoredAttempt {
    fn from(a: &Attempt) -> Self {
        let outcome = match &a.outcome {
            AttemptOutcome::Accepted { provider_id, delivery } => {
                StoredOutcome::Accepted { provider_id: provider_id.clone(), delivery: *delivery }
            }
            AttemptOutcome::Rejected { category, http_status, provider_code, retry_after } => StoredOutcome::Rejected {
                category: *category,
                http_status: *http_status,
                provider_code: provider_code.clone(),
                retry_after_ms: retry_after.map(millis),
            },
            AttemptOutcome::Unknown { reason, http_status } => {
                StoredOutcome::Unknown { reason: *reason, http_status: *http_status }
            }
        };
        Self {
            provider: a.provider.clone(),
            attempt: a.attempt,
            outcome,
            duration_ms: millis(a.duration),
            endpoint: a.endpoint.clone(),
        }
    }
}

impl From<StoredAttempt> for Attempt {
    fn from(a: StoredAttempt) -> Self {
        let outcome = match a.outcome {
            StoredOutcome::Accepted { provider_id, delivery } => AttemptOutcome::Accepted { provider_id, delivery },
            StoredOutcome::Rejected { category, http_status, provider_code, retry_after_ms } => {
                AttemptOutcome::Rejected {
                    category,
                    http_status,
                    provider_code,
                    retry_after: retry_after_ms.map(Duration::from_millis),
                }
            }
            StoredOutcome::Unknown { reason, http_status } => AttemptOutcome::Unknown { reason, http_status },
        };
        Self {
            provider: a.provider,
            attempt: a.attempt,
            outcome,
            duration: Duration::from_millis(a.duration_ms),
            endpoint: a.endpoint,
        }
    }
}

impl From<&ProviderError> for StoredProviderError {
    fn from(p: &ProviderError) -> Self {
        Self {
            provider: p.provider().to_owned(),
            http_status: p.status(),
            code: p.provider_code().map(str::to_owned),
            message: p.text().map(str::to_owned),
            request_id: p.provider_request_id().map(str::to_owned),
        }
    }
}

impl From<StoredProviderError> for ProviderError {
    fn from(p: StoredProviderError) -> Self {
        Self::restore(p.provider, p.http_status, p.code, p.message, p.request_id)
    }
}

impl StoredError {
    fn of(e: &ErrorRecord, v: u32) -> Self {
        Self {
            v,
            code: e.code.clone(),
            message: e.message.clone(),
            retry_safe: e.retry_safe,
            attempts: e.attempts.iter().map(StoredAttempt::from).collect(),
            provider: e.provider.as_ref().map(StoredProviderError::from),
            category: e.category,
            reason: e.reason,
            limit: e.limit,
            field: e.field,
            retry_after_ms: e.retry_after.map(millis),
            // The nested rejections carry no version of their own: the outer one covers them.
            errors: e.errors.iter().map(|e| Self::of(e, 0)).collect(),
        }
    }
}

impl From<StoredError> for ErrorRecord {
    fn from(e: StoredError) -> Self {
        Self {
            code: e.code,
            message: e.message,
            retry_safe: e.retry_safe,
            attempts: e.attempts.into_iter().map(Attempt::from).collect(),
            provider: e.provider.map(ProviderError::from),
            category: e.category,
            reason: e.reason,
            limit: e.limit,
            // Only failed sends are stored; a conflict is an answer to a send, never a record.
            conflict: None,
            field: e.field,
            retry_after: e.retry_after_ms.map(Duration::from_millis),
            errors: e.errors.into_iter().map(Self::from).collect(),
        }
    }
}

/// Writes the stored JSON of an accepted result; `endpoint` is where it went when no attempt
/// says.
pub(crate) fn write_receipt(out: impl Write, receipt: &Receipt, endpoint: Option<&str>) -> Result<(), StoreError> {
    let stored = StoredReceipt {
        v: VERSION,
        id: receipt.id.clone(),
        provider: receipt.provider.clone(),
        provider_id: receipt.provider_id.clone(),
        handoff: accepted(),
        delivery: receipt.delivery,
        encoding: receipt.encoding,
        segments: receipt.segments,
        attempted_providers: receipt.attempted_providers.clone(),
        attempts: receipt.attempts.iter().map(StoredAttempt::from).collect(),
        replayed: false,
        endpoint: endpoint.filter(|e| Some(*e) != last_endpoint(&receipt.attempts)).map(str::to_owned),
    };
    Ok(serde_json::to_writer(out, &stored)?)
}

/// Writes the stored JSON of a rejected or unknown record's error.
pub(crate) fn write_error(out: impl Write, error: &ErrorRecord) -> Result<(), StoreError> {
    Ok(serde_json::to_writer(out, &StoredError::of(error, VERSION))?)
}

/// The accepted result stored as `json` under `key`, and the endpoint the message went to.
pub(crate) fn read_receipt(key: &str, json: &str) -> Result<(Receipt, Option<String>), StoreError> {
    check_version(key, json)?;
    let stored: StoredReceipt = parse(key, json)?;
    let attempts: Vec<Attempt> = stored.attempts.into_iter().map(Attempt::from).collect();
    let endpoint = stored.endpoint.or_else(|| last_endpoint(&attempts).map(str::to_owned));
    let receipt = Receipt {
        id: stored.id,
        provider: stored.provider,
        provider_id: stored.provider_id,
        delivery: stored.delivery,
        encoding: stored.encoding,
        segments: stored.segments,
        attempted_providers: stored.attempted_providers,
        attempts,
        replayed: false,
    };
    Ok((receipt, endpoint))
}

/// The error stored as `json` under `key`.
pub(crate) fn read_error(key: &str, json: &str) -> Result<ErrorRecord, StoreError> {
    check_version(key, json)?;
    parse::<StoredError>(key, json).map(ErrorRecord::from)
}

fn parse<T: serde::de::DeserializeOwned>(key: &str, json: &str) -> Result<T, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::corrupt(key, format_args!("the record does not parse: {e}")))
}

/// The endpoint of the last request, which is where an accepted message went.
pub(crate) fn last_endpoint(attempts: &[Attempt]) -> Option<&str> {
    attempts.last().and_then(|a| a.endpoint.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt_json(receipt: &Receipt, endpoint: Option<&str>) -> String {
        let mut json = Vec::new();
        write_receipt(&mut json, receipt, endpoint).unwrap();
        String::from_utf8(json).unwrap()
    }

    #[test]
    fn a_newer_version_is_refused_naming_it() {
        let error = read_error("k", r#"{"v":7,"code":"x"}"#).unwrap_err();
        assert!(error.is_newer_format(), "{error}");
        assert!(error.to_string().contains("version 7"), "{error}");
        assert!(error.to_string().contains("key \"k\""), "{error}");
        let error = read_receipt("k", r#"{"v":2}"#).unwrap_err();
        assert!(error.is_newer_format() && !error.is_corrupt(), "{error}");
    }

    #[cfg(feature = "testing")]
    #[test]
    fn a_version_1_receipt_keeps_every_field_version_0_requires() {
        let receipt = crate::testing::store_contract::sample_receipt("SM1");
        let json: serde_json::Value = serde_json::from_str(&receipt_json(&receipt, None)).unwrap();
        for field in [
            "id",
            "provider",
            "provider_id",
            "handoff",
            "delivery",
            "encoding",
            "segments",
            "attempted_providers",
            "attempts",
            "replayed",
        ] {
            assert!(json.get(field).is_some(), "{field}");
        }
        assert_eq!(json["v"], 1);
        assert_eq!(json["handoff"], "accepted");
    }

    #[cfg(feature = "testing")]
    #[test]
    fn the_endpoint_is_stored_only_when_no_attempt_says_it() {
        let receipt = crate::testing::store_contract::sample_receipt("SM1");
        let own = receipt.attempts[0].endpoint.clone();
        let json: serde_json::Value = serde_json::from_str(&receipt_json(&receipt, own.as_deref())).unwrap();
        assert!(json.get("endpoint").is_none(), "the attempt says it: {json}");
        let (_, endpoint) = read_receipt("k", &receipt_json(&receipt, None)).unwrap();
        assert_eq!(endpoint, own);
        let settled = Receipt { attempts: Vec::new(), ..receipt };
        let (read, endpoint) = read_receipt("k", &receipt_json(&settled, Some("http://127.0.0.1:4010"))).unwrap();
        assert_eq!((read, endpoint.as_deref()), (settled, Some("http://127.0.0.1:4010")));
    }
}
