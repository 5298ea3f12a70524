//! What a failed send means for the operator, in words: whether anything was sent, whether the
//! same send can succeed later, and what to do.

use sms_sdk::{Category, Error, ErrorKind};

/// Whether trying the same send again could succeed without anything changing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Later, as it is (a rate limit, an unreachable provider or store, a key in progress).
    Later,
    /// Only once the account or the configuration is fixed.
    AfterFix,
    /// Never as it is: the message, or its recipient, is refused.
    Never,
}

/// How trying `category`'s rejection again fares.
fn of_category(category: Category) -> Retry {
    #[allow(clippy::wildcard_enum_match_arm)] // `Category` is non-exhaustive: a new one is lasting until known
    match category {
        Category::RateLimited | Category::Unreachable => Retry::Later,
        Category::Auth | Category::Sender | Category::Account => Retry::AfterFix,
        _ => Retry::Never,
    }
}

/// How trying `error`'s send again fares; `None` for an unknown outcome (never retried) and a
/// key conflict (never resent under the key).
pub(crate) fn retry(error: &Error) -> Option<Retry> {
    #[allow(clippy::wildcard_enum_match_arm)] // `ErrorKind` is non-exhaustive: a new kind is lasting until known
    Some(match error.kind() {
        ErrorKind::Unknown(_) | ErrorKind::IdempotencyConflict => return None,
        ErrorKind::Rejected(category) => of_category(category),
        ErrorKind::AllRejected => {
            let parts: Vec<Retry> = error.rejections().iter().filter_map(retry).collect();
            if parts.contains(&Retry::Later) {
                Retry::Later
            } else if parts.contains(&Retry::AfterFix) {
                Retry::AfterFix
            } else {
                Retry::Never
            }
        }
        ErrorKind::Store | ErrorKind::IdempotencyInProgress | ErrorKind::Aborted | ErrorKind::QueueTimeout(_) => {
            Retry::Later
        }
        // The command's one `before_send` is the suppression list: its store failed.
        ErrorKind::BeforeSend => Retry::Later,
        ErrorKind::Configuration => Retry::AfterFix,
        _ => Retry::Never,
    })
}

/// One line saying what `error` means and what to do; `key` is the send's idempotency key, when
/// it had one.
pub(crate) fn line(error: &Error, key: Option<&str>) -> String {
    let suppressed = error.kind() == ErrorKind::PolicyRejected && error.category() == Some(Category::Compliance);
    match retry(error) {
        None if error.kind() == ErrorKind::IdempotencyConflict => {
            "nothing was sent: the key names another message, or was used against another endpoint; never \
             resend this message under it"
                .to_owned()
        }
        None if key.is_some() => format!(
            "the message may have been sent: do not resend it; reconcile the key first (sms-sdk idempotency \
             reconcile {})",
            crate::shell::quote(key.unwrap_or_default())
        ),
        None => "the message may have been sent, and without --idempotency-key nothing recorded this send: there \
                 is nothing to reconcile, so check with the provider (its console or API, by recipient and time) \
                 before sending it again, or the customer may get it twice"
            .to_owned(),
        Some(_) if suppressed => "nothing was sent: the recipient opted out, so the same send will be refused \
                                  again (sms-sdk suppression check; --policy-override REASON sends this one \
                                  message anyway)"
            .to_owned(),
        Some(Retry::Later) => "nothing was sent: the same send may succeed later".to_owned(),
        Some(Retry::AfterFix) => {
            "nothing was sent: the same send will fail again until the account or the configuration is fixed".to_owned()
        }
        Some(Retry::Never) => "nothing was sent: the same message will be refused again; fix it or drop it".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_follow_the_table() {
        for (category, retry) in [
            (Category::RateLimited, Retry::Later),
            (Category::Unreachable, Retry::Later),
            (Category::Auth, Retry::AfterFix),
            (Category::Sender, Retry::AfterFix),
            (Category::Account, Retry::AfterFix),
            (Category::Recipient, Retry::Never),
            (Category::Compliance, Retry::Never),
            (Category::Request, Retry::Never),
        ] {
            assert_eq!(of_category(category), retry, "{category}");
        }
    }
}
