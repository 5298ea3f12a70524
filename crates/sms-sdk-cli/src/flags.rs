//! Typed values of the command's flags, parsed by clap: a bad value is a usage error (exit 2)
//! that lists the possible values and suggests the nearest one.

use std::time::Duration;

use clap::ValueEnum;

/// A provider, as `--provider` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Provider {
    Twilio,
    Telnyx,
    Plivo,
    Vonage,
    Sinch,
    Aws,
    Infobip,
    Bandwidth,
}

impl Provider {
    /// The providers, in the default failover order.
    pub(crate) const ALL: [Self; 8] =
        [Self::Twilio, Self::Telnyx, Self::Plivo, Self::Vonage, Self::Sinch, Self::Aws, Self::Infobip, Self::Bandwidth];

    /// The provider named `name` (`twilio`, …), as records and adapters spell it.
    pub(crate) fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// The provider's name (`twilio`, …), as the configuration and the records spell it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Twilio => "twilio",
            Self::Telnyx => "telnyx",
            Self::Plivo => "plivo",
            Self::Vonage => "vonage",
            Self::Sinch => "sinch",
            Self::Aws => "aws",
            Self::Infobip => "infobip",
            Self::Bandwidth => "bandwidth",
        }
    }

    /// Checks that `id` has the shape of this provider's message ids: Twilio's `SM` (or `MM`)
    /// and 32 hex digits, Sinch's 26 letters and digits, AWS's 1 to 64 letters, digits and `-`
    /// (a UUID in practice), Infobip's 1 to 200 letters, digits, `-`, `_` and `.` (the ids the
    /// adapter chooses are `sms-sdk-…`), Bandwidth's 1 to 64 letters, digits, `-` and `_`, a UUID
    /// for the others.
    ///
    /// # Errors
    /// What the id should look like.
    pub(crate) fn check_message_id(self, id: &str) -> Result<(), String> {
        let hex = |text: &str| text.bytes().all(|b| b.is_ascii_hexdigit());
        let (ok, shape) = match self {
            Self::Twilio => (
                id.len() == 34 && (id.starts_with("SM") || id.starts_with("MM")) && id.get(2..).is_some_and(hex),
                "SM (or MM) followed by 32 hex digits",
            ),
            Self::Sinch => (
                id.len() == 26 && id.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()),
                "26 capital letters and digits (a batch id)",
            ),
            Self::Aws => (
                (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'),
                "1 to 64 letters, digits and '-' (a MessageId)",
            ),
            Self::Infobip => (
                (1..=200).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
                "1 to 200 letters, digits, '-', '_' or '.' (a messageId)",
            ),
            Self::Bandwidth => (
                (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b)),
                "1 to 64 letters, digits, '-' or '_' (a message id)",
            ),
            Self::Telnyx | Self::Plivo | Self::Vonage => {
                let groups: Vec<&str> = id.split('-').collect();
                let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
                (lengths == [8, 4, 4, 4, 12] && groups.iter().all(|g| hex(g)), "a UUID (8-4-4-4-12 hex digits)")
            }
        };
        if ok { Ok(()) } else { Err(format!("a {} message id is {shape}", self.as_str())) }
    }
}

/// What `idempotency list --state` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StateFilter {
    /// A send holds the key (in progress, or stale when older than the stale limit).
    Reserved,
    /// The provider accepted the message.
    Accepted,
    /// The message was rejected.
    Rejected,
    /// The outcome is unknown: reconcile.
    Unknown,
    /// Unknown and stale reserved keys, plus reservations still in progress, with their age.
    Unresolved,
}

/// The longest `--since`: 400 days (providers keep message records about that long).
pub(crate) const MAX_SINCE: Duration = Duration::from_hours(400 * 24);

/// Parses a `--since` duration: `30s`, `15m`, `24h`, `7d` or plain seconds, more than zero and
/// at most 400 days.
///
/// # Errors
/// A message saying what a duration looks like.
pub(crate) fn since(text: &str) -> Result<Duration, String> {
    parse_duration(text)
        .filter(|d| !d.is_zero() && *d <= MAX_SINCE)
        .ok_or_else(|| "must be a duration such as 30m, 24h or 7d (at most 400d)".to_owned())
}

fn parse_duration(text: &str) -> Option<Duration> {
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let factor = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    number.parse::<u64>().ok()?.checked_mul(factor).map(Duration::from_secs)
}

/// Parses the emulator's `--listen`: a loopback address (the emulator's own rule).
///
/// # Errors
/// The emulator's message: not an address, or not loopback.
pub(crate) fn listen(text: &str) -> Result<String, String> {
    sms_sdk_emulator::loopback_address(text).map(|_| text.to_owned()).map_err(|e| e.to_string())
}

/// Parses a URL webhooks go to (the emulator's `--webhook-url` and `--inbound-url`, `webhook
/// verify --url`): absolute http(s).
///
/// # Errors
/// The emulator's message.
pub(crate) fn http_url(text: &str) -> Result<String, String> {
    sms_sdk_emulator::check_url(text).map(|()| text.to_owned()).map_err(|e| e.to_string())
}

/// A value of the emulator's `--webhook-url` or `--inbound-url`: a bare URL for every provider,
/// or `PROVIDER=URL` for one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProviderUrl {
    /// The provider the URL is for, `None` for every provider without one of its own.
    pub(crate) provider: Option<sms_sdk_emulator::Provider>,
    /// The URL: absolute http(s).
    pub(crate) url: String,
}

/// Parses a value of the emulator's `--webhook-url` or `--inbound-url`: an absolute http(s) URL
/// (for every provider), or `PROVIDER=URL` with a provider's name (`twilio=https://…`).
///
/// # Errors
/// The unknown provider, or the emulator's message about the URL.
pub(crate) fn provider_url(text: &str) -> Result<ProviderUrl, String> {
    let bare = http_url(text);
    if let Ok(url) = bare {
        return Ok(ProviderUrl { provider: None, url });
    }
    // A URL's scheme has no `=`: a name and an `=` before anything else name a provider.
    match text.split_once('=') {
        Some((name, url)) if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => {
            let provider = name.parse::<sms_sdk_emulator::Provider>().map_err(|e| e.to_string())?;
            Ok(ProviderUrl { provider: Some(provider), url: http_url(url)? })
        }
        Some(_) | None => bare.map(|url| ProviderUrl { provider: None, url }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(since("90"), Ok(Duration::from_secs(90)));
        assert_eq!(since("30m"), Ok(Duration::from_mins(30)));
        assert_eq!(since("24h"), Ok(Duration::from_hours(24)));
        assert_eq!(since("400d"), Ok(MAX_SINCE));
        for bad in ["", "0", "0h", "401d", "forever", "1w", "-1h", "h", "99999999999999999999d"] {
            assert!(since(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn message_ids_have_each_providers_shape() {
        assert!(Provider::Twilio.check_message_id("SM0123456789abcdef0123456789abcdef").is_ok());
        assert!(Provider::Twilio.check_message_id("MM0123456789ABCDEF0123456789abcdef").is_ok());
        for bad in ["SM1", "XX0123456789abcdef0123456789abcdef", "SM0123456789abcdef0123456789abcdeg", "", "SMé"] {
            assert!(Provider::Twilio.check_message_id(bad).is_err(), "{bad}");
        }
        for provider in [Provider::Telnyx, Provider::Plivo, Provider::Vonage] {
            assert!(provider.check_message_id("2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c").is_ok());
            for bad in ["2b7a3f3c1d2e4f5a9b8c7d6e5f4a3b2c", "SM0123456789abcdef0123456789abcdef", "x-y-z", ""] {
                assert!(provider.check_message_id(bad).is_err(), "{bad}");
            }
        }
    }

    #[test]
    fn a_url_is_for_every_provider_and_a_named_one_for_that_provider() {
        use sms_sdk_emulator::Provider as Emulated;
        let url = |provider, url: &str| Ok(ProviderUrl { provider, url: url.to_owned() });
        assert_eq!(provider_url("http://127.0.0.1:3000/sms"), url(None, "http://127.0.0.1:3000/sms"));
        // An `=` in a bare URL's query is the URL's.
        assert_eq!(provider_url("https://x.example/s?twilio=1"), url(None, "https://x.example/s?twilio=1"));
        assert_eq!(provider_url("twilio=https://x.example/t"), url(Some(Emulated::Twilio), "https://x.example/t"));
        assert_eq!(
            provider_url("vonage=http://127.0.0.1/v?a=b"),
            url(Some(Emulated::Vonage), "http://127.0.0.1/v?a=b")
        );
        for (bad, says) in [
            (
                "twillio=https://x.example/",
                "unknown provider \"twillio\" (expected twilio, telnyx, plivo, vonage, sinch, aws, infobip or bandwidth)",
            ),
            ("Twilio=https://x.example/", "unknown provider \"Twilio\""),
            ("telnyx=127.0.0.1:3000/sms", "\"127.0.0.1:3000/sms\" is not an absolute http(s) URL"),
            ("telnyx=", "\"\" is not an absolute http(s) URL"),
            ("127.0.0.1:3000/sms", "\"127.0.0.1:3000/sms\" is not an absolute http(s) URL"),
            ("=https://x.example/", "\"=https://x.example/\" is not an absolute http(s) URL"),
            ("/a=b", "\"/a=b\" is not an absolute http(s) URL"),
        ] {
            let error = provider_url(bad).expect_err(bad);
            assert!(error.contains(says), "{bad}: {error}");
        }
    }

    #[test]
    fn provider_names_are_the_configuration_names() {
        for provider in Provider::value_variants() {
            let name = provider.to_possible_value().map(|v| v.get_name().to_owned());
            assert_eq!(name.as_deref(), Some(provider.as_str()));
            assert_eq!(Provider::named(provider.as_str()), Some(*provider));
        }
        assert_eq!(Provider::ALL, Provider::value_variants());
        assert_eq!(Provider::named("twillio"), None);
    }
}
