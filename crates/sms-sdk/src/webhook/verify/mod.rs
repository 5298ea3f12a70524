//! What the provider verifiers share, by job: their options and the checks made before a
//! signature (`settings`), the signed URL (`url`), form parameters (`form`), signatures and keys
//! (`crypto`), Basic credentials (`basic`) and timestamps (`time`).

// Shared by the four provider features: a build with only some of them leaves some unused.
#![cfg_attr(
    not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")),
    allow(unused_imports)
)]

#[cfg(any(feature = "sinch", feature = "infobip", feature = "bandwidth"))]
mod basic;
mod crypto;
mod form;
mod settings;
mod time;
mod url;

#[cfg(any(feature = "sinch", feature = "infobip", feature = "bandwidth"))]
pub(crate) use self::basic::BasicCredentials;
#[cfg(any(feature = "infobip", feature = "bandwidth"))]
pub(crate) use self::basic::only_event;
#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage", feature = "sinch"))]
pub(crate) use self::crypto::KeyedMac;
pub(crate) use self::crypto::{decode_base64, decode_signature, encode_base64};
pub(crate) use self::form::{
    FormFields, Pairs, SortEntry, count_params, first_repeat, form_pairs, form_pairs_counted, indexed_values,
    key_index, sort_entry,
};
pub(crate) use self::settings::{Settings, header, verifier_options};
pub(crate) use self::time::{check_unix_timestamp, parse_time, unix_seconds};
pub(crate) use self::url::{query, split_url};
pub(crate) use crate::digest::same_bytes;
