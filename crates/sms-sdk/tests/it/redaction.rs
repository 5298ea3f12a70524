//! No error's Display, Debug or serialized form contains a full phone number, a body or a secret.

use proptest::prelude::*;
use serde_json::json;
use sms_sdk::hooks::PolicyDecision;
use sms_sdk::testing::{MemoryAdapter, RejectedOptions, rejected_outcome};
use sms_sdk::{Category, Client, Error, Message, Sender};

fn rendered(err: &Error) -> String {
    format!("{err} | {err:?} | {}", serde_json::to_string(err).unwrap())
}

fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn errors_never_show_numbers_bodies_or_secrets(
        national in "[2-9][0-9]{9}",
        body in "[a-z]{6}[A-Z0-9]{8}",
        secret in "[A-Za-z]{4}-secret-[0-9]{6}",
        case in 0usize..6,
    ) {
        let to = format!("+1{national}");
        let message = Message::new(to.clone(), body.clone());
        let provider_text = format!("The number {to} cannot receive SMS");
        let memory = MemoryAdapter::builder()
            .outcomes([rejected_outcome(Category::Recipient, RejectedOptions::default())])
            .build();
        let err = run(async {
            match case {
                0 => Client::builder().adapter(memory).build().unwrap()
                    .send(&message.clone().from(Sender::sender_id(format!("{}!", &body[..5])))).await.unwrap_err(),
                1 => Client::builder().adapter(memory).build().unwrap()
                    .send(&message.clone().provider_option("memory", json!({ "extra": { "Body": secret } }))).await.unwrap_err(),
                2 => {
                    let outcome = rejected_outcome(Category::Sender, RejectedOptions::default());
                    let sms_sdk::Outcome::Rejected(mut rejection) = outcome else { unreachable!() };
                    rejection.details = sms_sdk::error::ProviderError::new("memory").message(&provider_text);
                    let memory = MemoryAdapter::builder().outcomes([sms_sdk::Outcome::Rejected(rejection)]).build();
                    Client::builder().adapter(memory).build().unwrap().send(&message).await.unwrap_err()
                }
                3 => {
                    let reason = format!("{to} said {body} {secret}");
                    Client::builder().adapter(memory)
                        .before_send(move |_| { let r = reason.clone(); async move { Ok::<_, std::convert::Infallible>(PolicyDecision::reject(r)) } })
                        .build().unwrap().send(&message).await.unwrap_err()
                }
                4 => Client::builder().adapter(memory).build().unwrap()
                    .send(&Message::new(format!("{to}0000"), body.clone())).await.unwrap_err(),
                _ => Client::builder().adapter(memory).build().unwrap().send(&message).await.unwrap_err(),
            }
        });
        let text = rendered(&err);
        prop_assert!(!text.contains(&national), "{}", text);
        prop_assert!(!text.contains(&body), "{}", text);
        prop_assert!(!text.contains(&secret), "{}", text);
        let debug = format!("{message:?}");
        prop_assert!(!debug.contains(&national) && !debug.contains(&body), "{}", debug);
    }
}

/// `SmsEvent::masked` of an inbound message, a STOP and a status update with numbers: no full
/// number, no text, no payload; the full `Serialize` keeps them (the application needs them).
#[cfg(feature = "twilio")]
#[test]
fn a_masked_event_holds_no_number_text_or_payload() {
    use sms_sdk::TwilioWebhook;
    use sms_sdk::testing::webhooks::signed_twilio_request;
    use sms_sdk::webhook::WebhookVerifier as _;

    let url = "https://example.com/sms";
    let verifier = TwilioWebhook::new("auth-token").unwrap();
    let sid = ("MessageSid", "SM0123456789abcdef0123456789abcdef");
    let account = ("AccountSid", "ACfedcba9876543210fedcba9876543210");
    let (from, to) = (("From", "+14155550123"), ("To", "+447700900123"));
    let requests = [
        vec![
            sid,
            account,
            from,
            to,
            ("Body", "secret words here"),
            ("NumMedia", "1"),
            ("MediaUrl0", "https://m.example/p.jpg"),
        ],
        vec![sid, account, from, to, ("Body", "STOP")],
        vec![sid, account, from, to, ("MessageStatus", "undelivered"), ("ErrorCode", "30003")],
    ];
    for params in requests {
        let event = verifier.verify(&signed_twilio_request("auth-token", url, &params).as_request()).unwrap();
        let full = serde_json::to_string(&event).unwrap();
        assert!(full.contains("+14155550123") && full.contains("ACfedcba"), "Serialize keeps everything: {full}");
        let masked = serde_json::to_string(&event.masked()).unwrap();
        for secret in ["+14155550123", "+447700900123", "secret words", "m.example", "ACfedcba", "raw"] {
            assert!(!masked.contains(secret), "{secret} in {masked}");
        }
        assert!(masked.contains(&event.dedupe_key) && masked.contains(event.type_name()), "{masked}");
        assert!(masked.contains("+1********23"), "{masked}");
    }
}
