//! Opt-outs that enforce themselves: verified STOP and START webhooks feed a suppression list, and
//! a ready `before_send` policy refuses a send to a suppressed recipient before any request.
//!
//! Each provider keeps its own opt-out list, which does not follow traffic that fails over or
//! moves to another provider. This one does: [`Feeder`] turns verified `opted_out` / `opted_in`
//! events (provider signals and the STOP keywords the normalizer applies, plus the START and
//! UNSTOP opt-in keywords) into changes of a
//! [`SuppressionStore`](crate::store::suppression::SuppressionStore), ordered by event time and
//! idempotent under replayed webhooks; [`SuppressionPolicy`] checks it before every send and
//! refuses as a `compliance` rejection (`PolicyRejected`, retry-safe, never failed over).
//!
//! **Never mark a STOP handled before it was fed.** Call [`Feeder::feed`] where a failure can
//! still refuse the webhook: in the handler behind the tower layer's dedupe
//! (`VerifyLayer::dedupe`), answering 5xx when `feed` fails (the claim is freed, and the
//! provider's redelivery is fed again), or before your own `first_seen` call. Feeding is
//! idempotent, so a STOP fed twice changes nothing; a STOP whose dedupe key was recorded before a
//! failed feed would be lost. An observer (`VerifyLayer::observer`) cannot refuse the request, so
//! it is no place for the feeder when the list may be unavailable.
//!
//! ```
//! use std::time::SystemTime;
//! use sms_sdk::store::suppression::{Change, MemorySuppressionStore, Scope, SuppressionStore};
//! use sms_sdk::suppression::SuppressionPolicy;
//! use sms_sdk::testing::MemoryAdapter;
//! use sms_sdk::{Category, Client, ErrorKind, Message, PhoneNumber, SendOptions};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let list = MemorySuppressionStore::new();
//! let number = PhoneNumber::parse("+14155550123")?;
//! list.apply(&[Change::opt_out(number, Scope::Account, SystemTime::now(), "keyword:STOP")], SystemTime::now()).await?;
//!
//! let memory = MemoryAdapter::new();
//! let client = Client::builder()
//!     .adapter(memory.clone())
//!     .policy(SuppressionPolicy::new(list))
//!     .build()?;
//! let refused = client.send(&Message::new("+14155550123", "Sale!")).await.unwrap_err();
//! assert_eq!((refused.kind(), refused.category()), (ErrorKind::PolicyRejected, Some(Category::Compliance)));
//! assert!(refused.is_retry_safe() && memory.sent().is_empty());
//!
//! // The one confirmation a regulator allows, sent on purpose and logged.
//! let confirmation = Message::new("+14155550123", "You are unsubscribed. Reply START to resubscribe.");
//! client.send_with(&confirmation, SendOptions::default().policy_override("STOP confirmation")).await?;
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```

mod feed;
mod policy;

pub use self::feed::{Fed, Feeder, OPT_IN_KEYWORDS, ScopeRule};
pub use self::policy::SuppressionPolicy;
