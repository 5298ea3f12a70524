//! The fixed test credentials the emulator accepts and the secrets it signs webhooks with.
//!
//! They are the same on every run and in every process, so a test, a script or an example can
//! configure the real adapters and webhook verifiers with them. None of them is a real account.
//!
//! ```
//! use sms_sdk_emulator::credentials;
//!
//! assert!(credentials::TWILIO_ACCOUNT_SID.starts_with("AC"));
//! let keys = credentials::keys_json();
//! assert_eq!(keys["telnyx"]["public_key"], credentials::TELNYX_PUBLIC_KEY);
//! ```

use serde_json::{Value, json};

/// The Twilio account SID (`AC` and 32 hex characters): the Basic auth user and the path's
/// account.
pub const TWILIO_ACCOUNT_SID: &str = "ACe1a70000000000000000000000000001";
/// The Twilio auth token: the Basic auth password, and the key of `X-Twilio-Signature`.
pub const TWILIO_AUTH_TOKEN: &str = "emulator-twilio-auth-token";

/// The Telnyx API key (`Authorization: Bearer …`).
pub const TELNYX_API_KEY: &str = "KEY_emulator_telnyx_api_key";
/// The seed (private key) of the Ed25519 key pair that signs Telnyx webhooks.
pub const TELNYX_SIGNING_SEED: [u8; 32] = *b"sms-sdk emulator: telnyx seed 01";
/// The Telnyx webhook public key: base64 of the 32-byte Ed25519 public key of
/// [`TELNYX_SIGNING_SEED`] (what `TelnyxWebhook::new` takes).
pub const TELNYX_PUBLIC_KEY: &str = "Y4nPFe/r4yqDZn0jHVBrOpiI90N2qb01jZsFe6Z8O6M=";

/// The Plivo auth id: the Basic auth user and the path's account.
pub const PLIVO_AUTH_ID: &str = "MAEMULATOR0000000001";
/// The Plivo auth token: the Basic auth password, and the key of the V2 and V3 signatures.
pub const PLIVO_AUTH_TOKEN: &str = "emulator-plivo-auth-token";

/// The Vonage API key (Basic auth user).
pub const VONAGE_API_KEY: &str = "e1a70001";
/// The Vonage API secret (Basic auth password).
pub const VONAGE_API_SECRET: &str = "emulator-vonage-api-secret";
/// The Vonage application id that application JWTs must carry.
pub const VONAGE_APPLICATION_ID: &str = "5e1a7000-0000-4000-8000-000000000001";
/// The Vonage application's RSA-2048 private key (PKCS#8 PEM): the adapter signs its RS256
/// JWTs with it, and the emulator checks them with its public half.
pub const VONAGE_PRIVATE_KEY: &str = include_str!("../assets/vonage_application_key.pem");
/// The Vonage signature secret: the HS256 key of the webhook JWTs.
pub const VONAGE_SIGNATURE_SECRET: &str = "emulator-vonage-signature-secret";

/// The Sinch service plan id (the path's plan).
pub const SINCH_SERVICE_PLAN_ID: &str = "e1a70000000000000000000000000005";
/// The Sinch API token of that plan (`Authorization: Bearer …`).
pub const SINCH_API_TOKEN: &str = "emulator-sinch-api-token";
/// The Sinch webhook secret: the HMAC key of the callbacks' `x-sinch-webhook-signature` (what
/// `SinchWebhook::hmac` takes).
pub const SINCH_WEBHOOK_SECRET: &str = "emulator-sinch-webhook-secret";

/// The AWS access key id (long-term, `AKIA…`): the `Credential` of the Signature Version 4
/// `Authorization`.
pub const AWS_ACCESS_KEY_ID: &str = "AKIAE1A7000000000006";
/// The AWS secret access key that Signature Version 4 signatures are checked
/// with.
pub const AWS_SECRET_ACCESS_KEY: &str = "e1a7EmulatorAwsSecretAccessKey0000000006";
/// The AWS region requests must be signed for (the credential scope's region).
pub const AWS_REGION: &str = "us-east-1";
/// The SNS topic delivery events and inbound messages are published to: the `TopicArn` of
/// every SNS notification the emulator posts (what `AwsWebhook::builder` takes).
pub const AWS_SNS_TOPIC_ARN: &str = "arn:aws:sns:us-east-1:000000000000:sms-sdk-emulator";
/// The `SigningCertURL` of every SNS notification: shaped like AWS's (https, host
/// `sns.{region}.amazonaws.com`, a path ending in `.pem`), so a verifier's URL check passes, but
/// nothing is served there: give a verifier [`AWS_SNS_CERTIFICATE`] instead of letting it fetch.
pub const AWS_SNS_SIGNING_CERT_URL: &str =
    "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-sms-sdk-emulator.pem";
/// The self-signed X.509 certificate (PEM, RSA-2048, CN `sns.us-east-1.amazonaws.com`) whose key
/// signs the emulator's SNS notifications (what `AwsWebhookBuilder::certificate_pem` takes). The
/// emulator also serves it at `GET /_emulator/aws/sns-certificate.pem`.
pub const AWS_SNS_CERTIFICATE: &str = include_str!("../assets/aws_sns_certificate.pem");
/// The private key (PKCS#8 PEM) of [`AWS_SNS_CERTIFICATE`], which signs SNS notifications.
pub(crate) const AWS_SNS_PRIVATE_KEY: &str = include_str!("../assets/aws_sns_key.pem");

/// The Infobip API key (`Authorization: App …`). The emulator's base URL stands for the
/// account's own API host.
pub const INFOBIP_API_KEY: &str = "e1a70000000000000000000000000007-emulator-infobip";
/// The user of the Basic credentials every Infobip callback carries (Infobip signs none: what
/// `InfobipWebhook::basic` checks).
pub const INFOBIP_WEBHOOK_USER: &str = "infobip-emulator";
/// The password of those Basic credentials.
pub const INFOBIP_WEBHOOK_PASSWORD: &str = "emulator-infobip-webhook-password";

/// The Bandwidth account id (the path's account).
pub const BANDWIDTH_ACCOUNT_ID: &str = "9900008";
/// The id of the Bandwidth Messaging application every message must name (`applicationId`).
pub const BANDWIDTH_APPLICATION_ID: &str = "5e1a7000-0000-4000-8000-000000000008";
/// The Bandwidth API user (HTTP Basic user).
pub const BANDWIDTH_API_USER: &str = "emulator-bandwidth-user";
/// The Bandwidth API user's password (HTTP Basic password).
pub const BANDWIDTH_API_PASSWORD: &str = "emulator-bandwidth-password";
/// The Bandwidth OAuth 2.0 client id (Basic user of `POST /api/v1/oauth2/token`).
pub const BANDWIDTH_CLIENT_ID: &str = "emulator-bandwidth-client";
/// The Bandwidth OAuth 2.0 client secret.
pub const BANDWIDTH_CLIENT_SECRET: &str = "emulator-bandwidth-client-secret";
/// The user of the application's callback credentials, which every Bandwidth callback carries
/// as Basic (what `BandwidthWebhook::basic` checks).
pub const BANDWIDTH_CALLBACK_USER: &str = "bandwidth-emulator";
/// The password of the application's callback credentials.
pub const BANDWIDTH_CALLBACK_PASSWORD: &str = "emulator-bandwidth-callback-password";

/// Every credential and webhook secret, in the shape `GET /_emulator/keys` returns:
/// `{"twilio": {"account_sid", "auth_token"}, "telnyx": {"api_key", "public_key"},
/// "plivo": {"auth_id", "auth_token"}, "vonage": {"api_key", "api_secret", "application_id",
/// "private_key", "signature_secret"}, "sinch": {"service_plan_id", "api_token",
/// "webhook_secret"}, "aws": {"access_key_id", "secret_access_key", "region", "sns_topic_arn",
/// "sns_certificate"}, "infobip": {"api_key", "webhook_user", "webhook_password"},
/// "bandwidth": {"account_id", "application_id", "api_user", "api_password", "client_id",
/// "client_secret", "callback_user", "callback_password"}}`.
#[must_use]
pub fn keys_json() -> Value {
    json!({
        "twilio": {"account_sid": TWILIO_ACCOUNT_SID, "auth_token": TWILIO_AUTH_TOKEN},
        "telnyx": {"api_key": TELNYX_API_KEY, "public_key": TELNYX_PUBLIC_KEY},
        "plivo": {"auth_id": PLIVO_AUTH_ID, "auth_token": PLIVO_AUTH_TOKEN},
        "vonage": {
            "api_key": VONAGE_API_KEY,
            "api_secret": VONAGE_API_SECRET,
            "application_id": VONAGE_APPLICATION_ID,
            "private_key": VONAGE_PRIVATE_KEY,
            "signature_secret": VONAGE_SIGNATURE_SECRET,
        },
        "sinch": {
            "service_plan_id": SINCH_SERVICE_PLAN_ID,
            "api_token": SINCH_API_TOKEN,
            "webhook_secret": SINCH_WEBHOOK_SECRET,
        },
        "aws": {
            "access_key_id": AWS_ACCESS_KEY_ID,
            "secret_access_key": AWS_SECRET_ACCESS_KEY,
            "region": AWS_REGION,
            "sns_topic_arn": AWS_SNS_TOPIC_ARN,
            "sns_certificate": AWS_SNS_CERTIFICATE,
        },
        "infobip": {
            "api_key": INFOBIP_API_KEY,
            "webhook_user": INFOBIP_WEBHOOK_USER,
            "webhook_password": INFOBIP_WEBHOOK_PASSWORD,
        },
        "bandwidth": {
            "account_id": BANDWIDTH_ACCOUNT_ID,
            "application_id": BANDWIDTH_APPLICATION_ID,
            "api_user": BANDWIDTH_API_USER,
            "api_password": BANDWIDTH_API_PASSWORD,
            "client_id": BANDWIDTH_CLIENT_ID,
            "client_secret": BANDWIDTH_CLIENT_SECRET,
            "callback_user": BANDWIDTH_CALLBACK_USER,
            "callback_password": BANDWIDTH_CALLBACK_PASSWORD,
        },
    })
}
