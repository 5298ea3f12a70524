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
