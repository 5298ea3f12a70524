//! The result of an accepted send, as the client returns it and stores record it.

use serde::{Deserialize, Serialize};

use crate::adapter::Delivery;
use crate::encoding::Encoding;
use crate::error::Attempt;

/// The result of an accepted send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Receipt {
    /// `sms_` and 32 lowercase hex characters; the same on every replay.
    pub id: String,
    /// The adapter that accepted.
    pub provider: String,
    /// The provider's message id.
    pub provider_id: String,
    /// The status in the send response (usually `queued`; never assumed delivered).
    pub delivery: Delivery,
    /// The body's encoding.
    pub encoding: Encoding,
    /// The body's estimated segments (not a billing figure).
    pub segments: u32,
    /// Adapters tried, in order, without duplicates.
    pub attempted_providers: Vec<String>,
    /// Every provider request, in order.
    pub attempts: Vec<Attempt>,
    /// True when this result was replayed (from the store, or from a concurrent send with the
    /// same key) instead of sent.
    pub replayed: bool,
}

/// A new send id: `sms_` and 32 lowercase hex characters.
pub(crate) fn new_send_id() -> String {
    let mut id = String::with_capacity(36);
    id.push_str("sms_");
    id.push_str(crate::ids::uuid_v4().simple().encode_lower(&mut uuid::Uuid::encode_buffer()));
    id
}
