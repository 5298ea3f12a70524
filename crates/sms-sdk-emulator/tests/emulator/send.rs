//! The real adapters against the emulator: acceptance, every magic rejection, every fault,
//! failover and credentials.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::time::Duration;

use common::{Api, FROM, TO, client, client_with, emulator};
use sms_sdk::provider::aws::{Aws, AwsCredentials};
use sms_sdk::{Category, Client, ErrorKind, Failover, Message, RetryPolicy, Twilio, UnknownReason};
use sms_sdk_emulator::credentials::{
    AWS_ACCESS_KEY_ID, AWS_REGION, AWS_SECRET_ACCESS_KEY, BANDWIDTH_ACCOUNT_ID, BANDWIDTH_API_USER,
    BANDWIDTH_APPLICATION_ID, BANDWIDTH_CLIENT_ID, TELNYX_API_KEY, TWILIO_ACCOUNT_SID,
};
use sms_sdk_emulator::{Provider, Status, magic};
use tokio::task::JoinSet;

/// Sinch's code for every magic rejection.
const SINCH_REJECTION: &str = "syntax_invalid_parameter_format";

/// A reason rejected everywhere: its recipient, its category, Twilio's, Telnyx's and Vonage's
/// codes, and AWS's, Infobip's and Bandwidth's category and code.
type Reason = (&'static str, Category, [&'static str; 3], [(Category, &'static str); 3]);

/// Each reason rejected everywhere: its recipient, its category, Twilio's, Telnyx's and Vonage's
/// codes, and AWS's category and `Reason` (AWS has no recipient category: a recipient it cannot
/// take is a `ValidationException` of the field, `request`), Infobip's category and rejected
/// status name (in a 200), and Bandwidth's category and error `type`.
const REASONS: [Reason; 5] = [
    (
        magic::INVALID_NUMBER,
        Category::Recipient,
        ["21211", "40310", "1430"],
        [
            (Category::Request, "FIELD_VALIDATION_FAILED"),
            (Category::Recipient, "REJECTED_DESTINATION"),
            (Category::Recipient, "request-validation"),
        ],
    ),
    (
        magic::CANNOT_RECEIVE,
        Category::Recipient,
        ["21614", "40319", "1170"],
        [
            (Category::Request, "INVALID_PARAMETER"),
            (Category::Recipient, "REJECTED_DESTINATION"),
            (Category::Recipient, "request-validation"),
        ],
    ),
    (
        magic::SENDER_CANNOT_ROUTE,
        Category::Sender,
        ["21612", "40305", "1120"],
        [
            (Category::Sender, "INVALID_IDENTITY_FOR_DESTINATION_COUNTRY"),
            (Category::Sender, "REJECTED_SOURCE"),
            (Category::Sender, "request-validation"),
        ],
    ),
    (
        magic::NO_PERMISSION,
        Category::Account,
        ["21408", "40309", "1160"],
        [
            (Category::Account, "DESTINATION_COUNTRY_BLOCKED"),
            (Category::Account, "REJECTED_NOT_ENOUGH_CREDITS"),
            (Category::Auth, "forbidden"),
        ],
    ),
    (
        magic::OPTED_OUT,
        Category::Compliance,
        ["21610", "40300", "1240"],
        [
            (Category::Compliance, "DESTINATION_PHONE_NUMBER_OPTED_OUT"),
            (Category::Request, "REJECTED_DND"),
            (Category::Recipient, "request-validation"),
        ],
    ),
];

/// The category and code `provider`'s adapter gives a reason of [`REASONS`].
fn answer(provider: Provider, reason: &Reason) -> (Category, Option<&'static str>) {
    let (_, category, [twilio, telnyx, vonage], [aws, infobip, bandwidth]) = *reason;
    match provider {
        Provider::Twilio => (category, Some(twilio)),
        Provider::Telnyx => (category, Some(telnyx)),
        // Plivo documents no codes: its generic 400 is a `request` rejection.
        Provider::Plivo => (Category::Request, None),
        Provider::Vonage => (category, Some(vonage)),
        // Sinch answers what it cannot take with a syntax error: `request` too.
        Provider::Sinch => (Category::Request, Some(SINCH_REJECTION)),
        Provider::Aws => (aws.0, Some(aws.1)),
        Provider::Infobip => (infobip.0, Some(infobip.1)),
        Provider::Bandwidth => (bandwidth.0, Some(bandwidth.1)),
    }
}

fn is_uuid(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok()
}

#[tokio::test]
async fn every_provider_accepts_and_the_message_is_listed() {
    let emulator = emulator().await;
    for api in Api::ALL {
        let receipt = client(&emulator, api).send(&Message::new(TO, "Hello")).await.expect("accepted");
        assert_eq!(receipt.provider, api.provider().name());
        let id = &receipt.provider_id;
        match api.provider() {
            Provider::Twilio => {
                assert!(
                    id.len() == 34 && id.starts_with("SM") && id[2..].bytes().all(|b| b.is_ascii_hexdigit()),
                    "{id}"
                );
            }
            Provider::Telnyx | Provider::Plivo | Provider::Vonage | Provider::Aws => assert!(is_uuid(id), "{id}"),
            Provider::Sinch => assert!(id.len() == 26 && id.bytes().all(|b| b.is_ascii_alphanumeric()), "{id}"),
            // The id the adapter chose for the destination.
            Provider::Infobip => assert!(id.starts_with("sms-sdk-") && id.len() == 40, "{id}"),
            Provider::Bandwidth => {
                assert!(id.len() == 29 && id[..13].bytes().all(|b| b.is_ascii_digit()), "{id}");
                assert!(id[13..].bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()), "{id}");
            }
        }
        let entry = emulator.messages().pop().expect("an entry");
        assert_eq!(entry.provider, api.provider());
        assert_eq!(entry.id.as_deref(), Some(id.as_str()));
        assert_eq!(entry.to.as_deref(), Some(TO));
        assert_eq!(entry.body.as_deref(), Some("Hello"));
        assert!(entry.from.as_deref().is_some_and(|from| FROM.ends_with(from)), "{:?}", entry.from);
        assert!(matches!(entry.status, Status::Queued | Status::Sent | Status::Delivered), "{:?}", entry.status);
    }
    assert_eq!(emulator.messages().len(), Api::ALL.len());
}

#[tokio::test]
async fn media_and_callback_urls_are_recorded() {
    let emulator = emulator().await;
    let message =
        Message::new(TO, "Look").media_url("https://example.com/a.png").webhook_url("https://example.com/status");
    client(&emulator, Api::Twilio).send(&message).await.expect("accepted");
    let entry = emulator.messages().pop().expect("an entry");
    assert_eq!(entry.media_urls, ["https://example.com/a.png"]);
    assert_eq!(entry.callback_url.as_deref(), Some("https://example.com/status"));
}

#[tokio::test]
async fn every_magic_rejection_is_classified_with_the_providers_own_code() {
    let emulator = emulator().await;
    for reason in &REASONS {
        let to = reason.0;
        for api in Api::ALL {
            let err = client(&emulator, api).send(&Message::new(to, "Hello")).await.expect_err("rejected");
            let (expected, code) = answer(api.provider(), reason);
            assert_eq!(err.kind(), ErrorKind::Rejected(expected), "{api:?} {to}");
            assert_eq!(err.provider_error().and_then(|e| e.provider_code()), code, "{api:?} {to}");
            let entry = emulator.messages().pop().expect("an entry");
            assert_eq!((entry.status, entry.id), (Status::Rejected, None));
        }
    }
}

/// The recipients rejected at one provider only, with the category and code each provider's
/// adapter gives for the same reason rejected everywhere (`request` and no code at Plivo).
#[tokio::test]
async fn a_recipient_of_one_provider_is_rejected_there_with_its_code_and_accepted_elsewhere() {
    let emulator = emulator().await;
    let mut checked = 0;
    for recipient in magic::recipients() {
        let Some(at) = recipient.only_at else { continue };
        checked += 1;
        // `+1500555P0RR` is rejected for the reason of `+150055500RR`.
        let reason = REASONS
            .iter()
            .find(|(everywhere, ..)| everywhere[9..] == recipient.number[9..])
            .unwrap_or_else(|| panic!("no reason for {}", recipient.number));
        for api in Api::ALL {
            let result = client(&emulator, api).send(&Message::new(recipient.number, "Hello")).await;
            let entry = emulator.messages().pop().expect("an entry");
            if api.provider() != at {
                let receipt = result.unwrap_or_else(|e| panic!("{api:?} {}: {e}", recipient.number));
                assert_eq!(receipt.attempted_providers, [api.provider().name()]);
                assert_eq!(entry.id.as_deref(), Some(receipt.provider_id.as_str()), "{api:?}");
                continue;
            }
            let err = result.expect_err("rejected at its provider");
            let (expected, code) = answer(at, reason);
            assert_eq!(err.kind(), ErrorKind::Rejected(expected), "{api:?} {}", recipient.number);
            assert_eq!(err.provider_error().and_then(|e| e.provider_code()), code, "{api:?} {}", recipient.number);
            assert_eq!((entry.status, entry.id), (Status::Rejected, None));
        }
    }
    assert_eq!(checked, 40, "five reasons at each of eight providers");
    // The accepted ones are delivered like any other message.
    assert!(
        common::eventually(|| emulator.messages().iter().all(|m| m.id.is_none() || m.status == Status::Delivered))
            .await
    );
}

#[tokio::test]
async fn a_sender_rejection_at_twilio_only_fails_over_and_telnyx_accepts() {
    let emulator = emulator().await;
    let client = Api::Telnyx
        .add_to(Api::Twilio.add_to(Client::builder(), &emulator), &emulator)
        .failover(Failover::OnEligibleRejection)
        .build()
        .expect("client");
    for to in [magic::TWILIO_SENDER_CANNOT_ROUTE, magic::TWILIO_NO_PERMISSION] {
        let receipt = client.send(&Message::new(to, "Hello")).await.expect("accepted by telnyx");
        assert_eq!(receipt.attempted_providers, ["twilio", "telnyx"], "{to}");
        assert_eq!(receipt.provider, "telnyx");
        let first = &receipt.attempts[0];
        assert!(
            matches!(first.outcome, sms_sdk::error::AttemptOutcome::Rejected { category, .. }
                if category == if to == magic::TWILIO_SENDER_CANNOT_ROUTE { Category::Sender } else { Category::Account }),
            "{:?}",
            first.outcome
        );
    }
    // A compliance rejection at Twilio alone does not fail over.
    let err = client.send(&Message::new(magic::TWILIO_OPTED_OUT, "Hello")).await.expect_err("rejected");
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Compliance));
    assert_eq!(err.attempts().len(), 1);
    // And a sender rejection at Telnyx alone is never seen: Twilio accepts first.
    let receipt = client.send(&Message::new(magic::TELNYX_SENDER_CANNOT_ROUTE, "Hello")).await.expect("accepted");
    assert_eq!(receipt.attempted_providers, ["twilio"]);
}

/// Sends to `to` through every API at once; returns each API's result.
async fn send_everywhere(
    emulator: &sms_sdk_emulator::RunningEmulator,
    to: &'static str,
    configure: fn(sms_sdk::ClientBuilder) -> sms_sdk::ClientBuilder,
) -> Vec<(Api, Result<sms_sdk::Receipt, sms_sdk::Error>)> {
    let mut sends = JoinSet::new();
    for api in Api::ALL {
        let client: Client = client_with(emulator, api, configure);
        // One body per API: the rate-limited-once state is keyed on provider, recipient and body.
        sends.spawn(async move { (api, client.send(&Message::new(to, format!("Fault {api:?}"))).await) });
    }
    sends.join_all().await
}

fn no_retry(builder: sms_sdk::ClientBuilder) -> sms_sdk::ClientBuilder {
    builder.retry(RetryPolicy::none()).timeout(Duration::from_millis(400))
}

async fn assert_unknown(to: &'static str, reason: UnknownReason) {
    let emulator = emulator().await;
    for (api, result) in send_everywhere(&emulator, to, no_retry).await {
        let err = result.expect_err("not accepted");
        assert_eq!(err.kind(), ErrorKind::Unknown(reason), "{api:?}");
        assert!(!err.is_retry_safe());
    }
    assert_eq!(emulator.messages().len(), Api::ALL.len());
}

#[tokio::test]
async fn http_500_is_unknown_server_error() {
    assert_unknown(magic::SERVER_ERROR, UnknownReason::ServerError).await;
}

#[tokio::test]
async fn a_held_connection_is_unknown_timeout() {
    assert_unknown(magic::HOLD, UnknownReason::Timeout).await;
}

#[tokio::test]
async fn a_reset_connection_is_unknown_network() {
    assert_unknown(magic::RESET, UnknownReason::Network).await;
}

#[tokio::test]
async fn a_bare_429_is_unknown_unexpected_status_except_at_sinch_and_bandwidth() {
    let emulator = emulator().await;
    for (api, result) in send_everywhere(&emulator, magic::BARE_429, no_retry).await {
        let err = result.expect_err("not accepted");
        if matches!(api.provider(), Provider::Sinch | Provider::Bandwidth) {
            // Sinch and Bandwidth document their 429 by the status alone.
            assert_eq!(err.kind(), ErrorKind::Rejected(Category::RateLimited));
            assert_eq!(err.retry_after(), None);
        } else {
            assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::UnexpectedStatus), "{api:?}");
            assert!(!err.is_retry_safe());
        }
    }
}

#[tokio::test]
async fn an_unreadable_2xx_is_unknown_malformed_response() {
    assert_unknown(magic::UNREADABLE, UnknownReason::MalformedResponse).await;
}

#[tokio::test]
async fn a_message_created_before_the_connection_dropped_is_unknown_but_listed() {
    let emulator = emulator().await;
    for (api, result) in send_everywhere(&emulator, magic::CREATED_THEN_DROPPED, no_retry).await {
        assert_eq!(result.expect_err("not accepted").kind(), ErrorKind::Unknown(UnknownReason::Network), "{api:?}");
    }
    let messages = emulator.messages();
    assert_eq!(messages.len(), Api::ALL.len());
    for message in messages {
        assert!(message.id.is_some(), "{message:?}");
        assert_eq!(message.http_status, None);
        assert!(matches!(message.status, Status::Queued | Status::Sent | Status::Delivered));
    }
}

#[tokio::test]
async fn always_rate_limited_is_a_rate_limit_rejection_with_retry_after() {
    let emulator = emulator().await;
    for (api, result) in send_everywhere(&emulator, magic::RATE_LIMITED, no_retry).await {
        let err = result.expect_err("rejected");
        assert_eq!(err.kind(), ErrorKind::Rejected(Category::RateLimited), "{api:?}");
        // AWS's ThrottlingException carries no Retry-After.
        assert_eq!(err.retry_after(), api.provider().retry_after(), "{api:?}");
    }
    // AWS answers its ThrottlingException with a 400.
    let status = |provider| if provider == Provider::Aws { 400 } else { 429 };
    assert!(
        emulator
            .messages()
            .iter()
            .all(|m| m.status == Status::RateLimited && m.http_status == Some(status(m.provider)))
    );
}

#[tokio::test]
async fn rate_limited_once_is_retried_after_a_second_then_accepted() {
    let emulator = emulator().await;
    let retry = |builder: sms_sdk::ClientBuilder| {
        builder.retry(RetryPolicy::new(2, Duration::from_millis(500), Duration::from_secs(2)))
    };
    for (api, result) in send_everywhere(&emulator, magic::RATE_LIMITED_ONCE, retry).await {
        let receipt = result.unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert_eq!(receipt.attempts.len(), 2, "{api:?}");
    }
    let messages = emulator.messages();
    for provider in Provider::ALL {
        let statuses: Vec<Status> = messages.iter().filter(|m| m.provider == provider).map(|m| m.status).collect();
        // Vonage and Bandwidth are sent to two ways.
        let expected = if matches!(provider, Provider::Vonage | Provider::Bandwidth) { 2 } else { 1 };
        assert_eq!(statuses.iter().filter(|s| **s == Status::RateLimited).count(), expected, "{provider}");
        assert_eq!(statuses.len(), expected * 2, "{provider}");
    }
}

#[tokio::test]
async fn a_sender_rejection_fails_over_to_the_next_provider() {
    let emulator = emulator().await;
    let client = Api::Telnyx
        .add_to(Api::Twilio.add_to(Client::builder(), &emulator), &emulator)
        .failover(Failover::OnEligibleRejection)
        .build()
        .expect("client");
    let err = client.send(&Message::new(magic::SENDER_CANNOT_ROUTE, "Hello")).await.expect_err("rejected");
    // The recipient is magic for every provider, so the next one rejects it too.
    assert_eq!(err.kind(), ErrorKind::AllRejected);
    let kinds: Vec<ErrorKind> = err.rejections().iter().map(sms_sdk::Error::kind).collect();
    assert_eq!(kinds, [ErrorKind::Rejected(Category::Sender); 2]);
    let providers: Vec<Provider> = emulator.messages().iter().map(|m| m.provider).collect();
    assert_eq!(providers, [Provider::Twilio, Provider::Telnyx]);
}

#[tokio::test]
async fn an_auth_rejection_fails_over_and_the_next_provider_accepts() {
    let emulator = emulator().await;
    let wrong = Twilio::builder(TWILIO_ACCOUNT_SID, "wrong-token").from(FROM).base_url(emulator.base_url());
    let client = Api::Plivo
        .add_to(Client::builder().adapter(wrong.build().expect("adapter")), &emulator)
        .failover(Failover::OnEligibleRejection)
        .build()
        .expect("client");
    let receipt = client.send(&Message::new(TO, "Hello")).await.expect("accepted by plivo");
    assert_eq!(receipt.provider, "plivo");
    assert_eq!(receipt.attempted_providers, ["twilio", "plivo"]);
}

#[tokio::test]
async fn wrong_credentials_are_auth_rejections() {
    let emulator = emulator().await;
    let base = emulator.base_url();
    let clients = [
        Client::builder()
            .adapter(Twilio::builder(TWILIO_ACCOUNT_SID, "nope").from(FROM).base_url(&base).build().expect("a")),
        Client::builder().adapter(
            Twilio::builder("AC00000000000000000000000000000000", "nope")
                .from(FROM)
                .base_url(&base)
                .build()
                .expect("a"),
        ),
        Client::builder().adapter(sms_sdk::Telnyx::builder("KEY_wrong").from(FROM).base_url(&base).build().expect("a")),
        Client::builder().adapter(
            sms_sdk::Plivo::builder("MAEMULATOR0000000001", "nope").from(FROM).base_url(&base).build().expect("a"),
        ),
        Client::builder()
            .adapter(sms_sdk::Vonage::basic("e1a70001", "nope").from(FROM).base_url(&base).build().expect("a")),
        Client::builder().adapter(
            sms_sdk::Vonage::application("another-application", sms_sdk_emulator::credentials::VONAGE_PRIVATE_KEY)
                .from(FROM)
                .base_url(&base)
                .build()
                .expect("a"),
        ),
        Client::builder().adapter(
            Aws::builder(AWS_REGION, AwsCredentials::new(AWS_ACCESS_KEY_ID, "not-the-secret"))
                .from(FROM)
                .base_url(&base)
                .build()
                .expect("a"),
        ),
        Client::builder().adapter(
            Aws::builder(AWS_REGION, AwsCredentials::new("AKIAE1A7000000000099", AWS_SECRET_ACCESS_KEY))
                .from(FROM)
                .base_url(&base)
                .build()
                .expect("a"),
        ),
        Client::builder()
            .adapter(sms_sdk::provider::infobip::Infobip::builder(&base, "not-the-key").from(FROM).build().expect("a")),
        Client::builder().adapter(
            sms_sdk::provider::bandwidth::Bandwidth::basic(
                BANDWIDTH_ACCOUNT_ID,
                BANDWIDTH_APPLICATION_ID,
                BANDWIDTH_API_USER,
                "not-the-password",
            )
            .from(FROM)
            .base_url(&base)
            .build()
            .expect("a"),
        ),
        // A wrong client secret gets no token: nothing is sent.
        Client::builder().adapter(
            sms_sdk::provider::bandwidth::Bandwidth::oauth2(
                BANDWIDTH_ACCOUNT_ID,
                BANDWIDTH_APPLICATION_ID,
                BANDWIDTH_CLIENT_ID,
                "not-the-secret",
            )
            .from(FROM)
            .base_url(&base)
            .token_url(format!("{base}/api/v1/oauth2/token"))
            .build()
            .expect("a"),
        ),
    ];
    for builder in clients {
        let client = builder.retry(RetryPolicy::none()).build().expect("client");
        let err = client.send(&Message::new(TO, "Hello")).await.expect_err("rejected");
        assert_eq!(err.kind(), ErrorKind::Rejected(Category::Auth), "{client:?}");
    }
    // AWS refuses a signature with a 403.
    let status = |provider| if provider == Provider::Aws { 403 } else { 401 };
    assert!(
        emulator
            .messages()
            .iter()
            .all(|m| m.status == Status::Rejected && m.id.is_none() && m.http_status == Some(status(m.provider)))
    );
    // The right key still works.
    let right = sms_sdk::Telnyx::builder(TELNYX_API_KEY).from(FROM).base_url(&base).build().expect("adapter");
    Client::builder().adapter(right).build().expect("client").send(&Message::new(TO, "ok")).await.expect("accepted");
}

#[tokio::test]
async fn latency_delays_the_answer_after_the_message_is_created() {
    let wait = Duration::from_millis(300);
    let emulator = sms_sdk_emulator::Emulator::builder()
        .status_delay(Duration::from_millis(30))
        .latency(move |request| if request.body.as_deref() == Some("slow") { wait } else { Duration::ZERO })
        .start()
        .await
        .expect("the emulator starts");
    let client = |timeout| client_with(&emulator, Api::Telnyx, |b| b.retry(RetryPolicy::none()).timeout(timeout));

    // Too slow for the client: unknown, yet the message exists.
    let started = std::time::Instant::now();
    let err = client(Duration::from_millis(100)).send(&Message::new(TO, "slow")).await.expect_err("timed out");
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Timeout));
    assert!(started.elapsed() < wait, "the client gave up first: {:?}", started.elapsed());
    let entry = emulator.messages().pop().expect("listed before the wait");
    assert!(entry.id.is_some(), "created before the wait: {entry:?}");

    // A patient client gets the answer after the wait; other requests are not delayed.
    let patient = client(Duration::from_secs(5));
    let started = std::time::Instant::now();
    patient.send(&Message::new(TO, "slow")).await.expect("accepted");
    assert!(started.elapsed() >= wait, "{:?}", started.elapsed());
    let err = patient.send(&Message::new(magic::INVALID_NUMBER, "slow")).await.expect_err("rejected");
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Recipient));
    let err = patient.send(&Message::new(magic::RESET, "slow")).await.expect_err("reset");
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Network));
    let started = std::time::Instant::now();
    patient.send(&Message::new(TO, "quick")).await.expect("accepted");
    assert!(started.elapsed() < wait, "{:?}", started.elapsed());
    assert_eq!(emulator.messages().len(), 5);
}

/// The Sinch lookups the reconciler uses find the batch the emulator created: by id, and in the
/// list of its recipient; an id it never issued is not found.
#[tokio::test]
async fn sinch_lookups_find_the_created_batch() {
    use sms_sdk::lookup::{Lookup as _, LookupOutcome};
    let emulator = emulator().await;
    let receipt = client(&emulator, Api::Sinch).send(&Message::new(TO, "Find me")).await.expect("accepted");
    let sinch = emulator.sinch().build().expect("adapter");
    let timeout = Duration::from_secs(5);
    let LookupOutcome::Found(found) = sinch.fetch(&receipt.provider_id, timeout).await else { panic!("not found") };
    assert_eq!(found[0].provider_id, receipt.provider_id);
    assert_eq!((found[0].to.as_deref(), found[0].body.as_deref()), (Some(TO), Some("Find me")));
    let since = time::OffsetDateTime::now_utc() - time::Duration::days(1);
    let LookupOutcome::Found(listed) = sinch.list_to(TO, since, timeout).await else { panic!("no list") };
    assert_eq!(listed.iter().map(|m| m.provider_id.as_str()).collect::<Vec<_>>(), [receipt.provider_id.as_str()]);
    let LookupOutcome::Found(none) = sinch.list_to("+14155550999", since, timeout).await else { panic!("no list") };
    assert!(none.is_empty());
    assert!(matches!(sinch.fetch("01NOSUCHBATCH0000000000000", timeout).await, LookupOutcome::NotFound));
}
