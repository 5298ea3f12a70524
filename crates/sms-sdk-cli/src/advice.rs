//! What a failed send means for the operator, in words: whether anything was sent, whether the
//! same send can succeed later, and what to do.

use sms_sdk::{Category, Conflict, Error, ErrorKind, NextStep};

/// One line saying what `error` means and what to do; `key` is the send's idempotency key, when
/// it had one.
pub(crate) fn line(error: &Error, key: Option<&str>) -> String {
    let suppressed = error.kind() == ErrorKind::PolicyRejected && error.category() == Some(Category::Compliance);
    #[allow(clippy::wildcard_enum_match_arm)] // `NextStep` is non-exhaustive: a new step is lasting until known
    match error.next_step() {
        NextStep::NeverResend if error.kind() == ErrorKind::IdempotencyConflict(Conflict::OtherEndpoint) => {
            "nothing was sent: the key's result was recorded against another endpoint (another account, region \
             or the emulator); never resend this message under it"
                .to_owned()
        }
        NextStep::NeverResend => {
            "nothing was sent: the key names another message; never resend this message under it".to_owned()
        }
        NextStep::Reconcile if key.is_some() => format!(
            "the message may have been sent: do not resend it; reconcile the key first (sms-sdk idempotency \
             reconcile {})",
            crate::shell::quote(key.unwrap_or_default())
        ),
        NextStep::Reconcile => {
            "the message may have been sent, and without --idempotency-key nothing recorded this send: there \
                 is nothing to reconcile, so check with the provider (its console or API, by recipient and time) \
                 before sending it again, or the customer may get it twice"
                .to_owned()
        }
        _ if suppressed => "nothing was sent: the recipient opted out, so the same send will be refused \
                                  again (sms-sdk suppression check; --policy-override REASON sends this one \
                                  message anyway)"
            .to_owned(),
        NextStep::RetryLater if error.kind() == ErrorKind::Store => {
            "nothing was sent: the store failed; the same send may succeed once the store answers again (a \
             timeout, a refused connection), or only after its URL, credentials or certificates are fixed (the \
             error above says which)"
                .to_owned()
        }
        NextStep::RetryLater => "nothing was sent: the same send may succeed later".to_owned(),
        NextStep::AlertOperator => {
            "nothing was sent: the same send will fail again until the account or the configuration is fixed".to_owned()
        }
        _ => "nothing was sent: the same message will be refused again; fix it or drop it".to_owned(),
    }
}
