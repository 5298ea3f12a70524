//! Provider configuration from the environment, with the reference doctor's variable names.

use sms_sdk::adapter::{Adapter as _, AnyAdapter};
use sms_sdk::provider::aws::{Aws, AwsCredentials};
use sms_sdk::provider::bandwidth::Bandwidth;
use sms_sdk::provider::infobip::Infobip;
use sms_sdk::provider::sinch::{Region, Sinch};
use sms_sdk::provider::vonage::Vonage;
use sms_sdk::{Error, Plivo, Sender, Telnyx, Twilio};

use crate::flags::Provider;
use crate::{EXIT_CONFIGURATION, Env};

/// Each provider's production origin, replaced by `SMS_SDK_<PROVIDER>_BASE_URL` (Sinch's is its
/// default region's, US; AWS's is `us-east-1`'s, though it always follows `AWS_REGION`;
/// Infobip's shared host is never used: each account has its own, `INFOBIP_BASE_URL`).
pub(crate) fn default_origin(provider: Provider) -> &'static str {
    match provider {
        Provider::Twilio => sms_sdk::provider::twilio::DEFAULT_BASE_URL,
        Provider::Telnyx => sms_sdk::provider::telnyx::DEFAULT_BASE_URL,
        Provider::Plivo => sms_sdk::provider::plivo::DEFAULT_BASE_URL,
        Provider::Vonage => sms_sdk::provider::vonage::Region::Global.base_url(),
        Provider::Sinch => Region::Us.base_url(),
        Provider::Aws => "https://sms-voice.us-east-1.amazonaws.com",
        Provider::Infobip => "https://api.infobip.com",
        Provider::Bandwidth => sms_sdk::provider::bandwidth::DEFAULT_BASE_URL,
    }
}

/// The variables that name the AWS region, in the order AWS's own tools read them.
pub(crate) const AWS_REGION_VARIABLES: [&str; 2] = ["AWS_REGION", "AWS_DEFAULT_REGION"];

/// The AWS region of `AWS_REGION` (else `AWS_DEFAULT_REGION`), when set.
pub(crate) fn aws_region(env: &Env) -> Option<&str> {
    AWS_REGION_VARIABLES.iter().find_map(|name| env.get(name)).map(str::trim)
}

/// Sinch's regions, as `SINCH_REGION` names them.
const SINCH_REGIONS: [(&str, Region); 5] =
    [("us", Region::Us), ("eu", Region::Eu), ("au", Region::Au), ("br", Region::Br), ("ca", Region::Ca)];

/// The Sinch region of `SINCH_REGION` (`us` when unset).
///
/// # Errors
/// A configuration message listing the regions.
pub(crate) fn sinch_region(env: &Env) -> Result<Region, String> {
    let Some(name) = env.get("SINCH_REGION") else { return Ok(Region::Us) };
    SINCH_REGIONS
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name.trim()))
        .map(|(_, region)| *region)
        .ok_or_else(|| "SINCH_REGION must be one of us, eu, au, br, ca (the region of the service plan)".to_owned())
}

/// The origin `provider`'s adapter sends to: `SMS_SDK_<PROVIDER>_BASE_URL`, else its production
/// origin (for Sinch, its region's, or US when the region is invalid: [`check`] refuses that;
/// for Infobip, the account's `INFOBIP_BASE_URL`, `https://` when it is a bare host, and empty
/// without one: the adapter refuses that, and [`check`] names the variable).
pub(crate) fn origin(env: &Env, provider: Provider) -> String {
    if let Some(base) = env.get(&base_url_variable(provider)) {
        return base.to_owned();
    }
    match provider {
        Provider::Sinch => sinch_region(env).unwrap_or_default().base_url().to_owned(),
        Provider::Aws => {
            aws_region(env).map_or_else(|| default_origin(provider).to_owned(), sms_sdk::provider::aws::endpoint)
        }
        Provider::Infobip => env
            .get(INFOBIP_BASE_URL)
            .map(|host| if host.contains("://") { host.to_owned() } else { format!("https://{host}") })
            .unwrap_or_default(),
        Provider::Twilio | Provider::Telnyx | Provider::Plivo | Provider::Vonage | Provider::Bandwidth => {
            default_origin(provider).to_owned()
        }
    }
}

/// The account's own API host at Infobip (`https://<id>.api.infobip.com`, from its portal).
pub(crate) const INFOBIP_BASE_URL: &str = "INFOBIP_BASE_URL";

/// The variables that may set the origin of `provider`'s requests, as a message names them when
/// it does not know which did: `SMS_SDK_<PROVIDER>_BASE_URL`, and for Infobip its
/// `INFOBIP_BASE_URL` too.
pub(crate) fn origin_variables(provider: Provider) -> String {
    let base = base_url_variable(provider);
    if provider == Provider::Infobip { format!("{base} or {INFOBIP_BASE_URL}") } else { base }
}

/// The variable that sets the origin of `provider`'s requests: `SMS_SDK_<PROVIDER>_BASE_URL`
/// when set, else for Infobip `INFOBIP_BASE_URL` when set; `None` for a provider's own fixed
/// origin.
pub(crate) fn origin_variable(env: &Env, provider: Provider) -> Option<String> {
    let base = base_url_variable(provider);
    if env.get(&base).is_some() {
        return Some(base);
    }
    (provider == Provider::Infobip && env.get(INFOBIP_BASE_URL).is_some()).then(|| INFOBIP_BASE_URL.to_owned())
}

/// The token endpoint of Bandwidth's OAuth 2.0: under `SMS_SDK_BANDWIDTH_BASE_URL` when that is
/// set (the emulator serves both), else Bandwidth's.
fn bandwidth_token_url(env: &Env) -> Option<String> {
    let base = env.get(&base_url_variable(Provider::Bandwidth))?;
    Some(format!("{}/api/v1/oauth2/token", base.trim_end_matches('/')))
}

/// One group of variables of which any one must be set.
pub(crate) type Group = &'static [&'static str];

/// The required groups, optional variables and secret variables of a provider.
pub(crate) struct ProviderEnv {
    pub(crate) required: &'static [Group],
    pub(crate) optional: &'static [&'static str],
    pub(crate) secrets: &'static [&'static str],
}

/// The environment table of `provider`.
pub(crate) fn provider_env(provider: Provider) -> ProviderEnv {
    match provider {
        Provider::Twilio => ProviderEnv {
            required: &[&["TWILIO_ACCOUNT_SID"], &["TWILIO_AUTH_TOKEN", "TWILIO_API_KEY_SID"]],
            optional: &["TWILIO_API_KEY_SECRET", "TWILIO_FROM", "TWILIO_MESSAGING_SERVICE_SID"],
            secrets: &["TWILIO_AUTH_TOKEN", "TWILIO_API_KEY_SECRET"],
        },
        Provider::Telnyx => ProviderEnv {
            required: &[&["TELNYX_API_KEY"]],
            optional: &["TELNYX_FROM", "TELNYX_MESSAGING_PROFILE_ID"],
            secrets: &["TELNYX_API_KEY"],
        },
        Provider::Plivo => ProviderEnv {
            required: &[&["PLIVO_AUTH_ID"], &["PLIVO_AUTH_TOKEN"]],
            optional: &["PLIVO_FROM", "PLIVO_POWERPACK_UUID"],
            secrets: &["PLIVO_AUTH_TOKEN"],
        },
        Provider::Vonage => ProviderEnv {
            required: &[&["VONAGE_API_KEY", "VONAGE_APPLICATION_ID"]],
            optional: &["VONAGE_API_SECRET", "VONAGE_PRIVATE_KEY", "VONAGE_FROM"],
            secrets: &["VONAGE_API_SECRET", "VONAGE_PRIVATE_KEY"],
        },
        Provider::Sinch => ProviderEnv {
            required: &[&["SINCH_SERVICE_PLAN_ID"], &["SINCH_API_TOKEN"]],
            optional: &["SINCH_FROM", "SINCH_REGION"],
            secrets: &["SINCH_API_TOKEN"],
        },
        Provider::Aws => ProviderEnv {
            required: &[&AWS_REGION_VARIABLES, &["AWS_ACCESS_KEY_ID"], &["AWS_SECRET_ACCESS_KEY"]],
            optional: &["AWS_SESSION_TOKEN", "AWS_FROM"],
            secrets: &["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"],
        },
        Provider::Infobip => ProviderEnv {
            required: &[&[INFOBIP_BASE_URL, "SMS_SDK_INFOBIP_BASE_URL"], &["INFOBIP_API_KEY"]],
            optional: &["INFOBIP_FROM"],
            secrets: &["INFOBIP_API_KEY"],
        },
        Provider::Bandwidth => ProviderEnv {
            required: &[
                &["BANDWIDTH_ACCOUNT_ID"],
                &["BANDWIDTH_APPLICATION_ID"],
                &["BANDWIDTH_USERNAME", "BANDWIDTH_CLIENT_ID"],
            ],
            optional: &["BANDWIDTH_PASSWORD", "BANDWIDTH_CLIENT_SECRET", "BANDWIDTH_FROM"],
            secrets: &["BANDWIDTH_PASSWORD", "BANDWIDTH_CLIENT_SECRET"],
        },
    }
}

/// The variables that carry a credential into a request header: visible ASCII only.
const HEADER_VARIABLES: [&str; 18] = [
    "TWILIO_ACCOUNT_SID",
    "TWILIO_AUTH_TOKEN",
    "TWILIO_API_KEY_SID",
    "TWILIO_API_KEY_SECRET",
    "TELNYX_API_KEY",
    "PLIVO_AUTH_ID",
    "PLIVO_AUTH_TOKEN",
    "VONAGE_API_KEY",
    "VONAGE_API_SECRET",
    "SINCH_API_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "INFOBIP_API_KEY",
    "BANDWIDTH_USERNAME",
    "BANDWIDTH_PASSWORD",
    "BANDWIDTH_CLIENT_ID",
    "BANDWIDTH_CLIENT_SECRET",
];

/// Every variable of `provider` that `send` reads, its base URL override included.
fn send_variables(provider: Provider) -> impl Iterator<Item = String> {
    let table = provider_env(provider);
    let listed = table.required.iter().flat_map(|group| group.iter()).chain(table.optional).map(|n| (*n).to_owned());
    listed.chain(std::iter::once(base_url_variable(provider)))
}

/// `SMS_SDK_<PROVIDER>_BASE_URL`.
pub(crate) fn base_url_variable(provider: Provider) -> String {
    format!("SMS_SDK_{}_BASE_URL", provider.as_str().to_ascii_uppercase())
}

/// Whether any variable of `provider` is set: the user meant to configure it. For AWS only its
/// SMS variables count (`AWS_FROM`, `SMS_SDK_AWS_BASE_URL`): the credentials and the region are
/// set in many shells for other work, and must not make a send go to AWS unasked.
pub(crate) fn is_mentioned(env: &Env, provider: Provider) -> bool {
    if provider == Provider::Aws {
        return env.get("AWS_FROM").is_some() || env.get(&base_url_variable(provider)).is_some();
    }
    send_variables(provider).any(|name| env.get(&name).is_some())
}

/// The variables that give `provider` a default sender, as an error names them.
pub(crate) fn sender_variables(provider: Provider) -> &'static str {
    match provider {
        Provider::Twilio => "TWILIO_FROM (or TWILIO_MESSAGING_SERVICE_SID)",
        Provider::Telnyx => "TELNYX_FROM",
        Provider::Plivo => "PLIVO_FROM (or PLIVO_POWERPACK_UUID)",
        Provider::Vonage => "VONAGE_FROM",
        Provider::Sinch => "SINCH_FROM",
        Provider::Aws => "AWS_FROM (a phone number, sender ID, or pool id or ARN)",
        Provider::Infobip => "INFOBIP_FROM",
        Provider::Bandwidth => "BANDWIDTH_FROM",
    }
}

/// Whether `endpoint` (`scheme://host[:port]`) is `provider`'s own production API (for Sinch,
/// any region's; for Infobip, any account's host).
pub(crate) fn is_own_endpoint(provider: Provider, endpoint: &str) -> bool {
    let is = |origin: &str| url::Url::parse(origin).is_ok_and(|url| url.origin().ascii_serialization() == endpoint);
    match provider {
        Provider::Sinch => SINCH_REGIONS.iter().any(|(_, region)| is(region.base_url())),
        // Any region's endpoint, FIPS and China ones included.
        Provider::Aws => url::Url::parse(endpoint).is_ok_and(|url| {
            url.host_str().is_some_and(|host| {
                host.starts_with("sms-voice")
                    && (host.ends_with(".amazonaws.com") || host.ends_with(".amazonaws.com.cn"))
            })
        }),
        Provider::Infobip => url::Url::parse(endpoint).is_ok_and(|url| {
            url.host_str().is_some_and(|host| host == "api.infobip.com" || host.ends_with(".api.infobip.com"))
        }),
        Provider::Twilio | Provider::Telnyx | Provider::Plivo | Provider::Vonage | Provider::Bandwidth => {
            is(default_origin(provider))
        }
    }
}

/// Whether any provider variable at all is set. Only when none is does the embedded emulator
/// stand in.
pub(crate) fn any_mentioned(env: &Env) -> bool {
    Provider::ALL.into_iter().any(|p| is_mentioned(env, p))
}

/// What `provider` still needs before it can send, as the variables to set.
pub(crate) fn missing(env: &Env, provider: Provider) -> Vec<&'static str> {
    let set = |name: &str| env.get(name).is_some();
    let mut missing = Vec::new();
    let mut need = |name: &'static str| {
        if !set(name) {
            missing.push(name);
        }
    };
    match provider {
        Provider::Twilio => {
            need("TWILIO_ACCOUNT_SID");
            if !set("TWILIO_AUTH_TOKEN") {
                if set("TWILIO_API_KEY_SID") || set("TWILIO_API_KEY_SECRET") {
                    need("TWILIO_API_KEY_SID");
                    need("TWILIO_API_KEY_SECRET");
                } else {
                    need("TWILIO_AUTH_TOKEN");
                }
            }
        }
        Provider::Telnyx => need("TELNYX_API_KEY"),
        Provider::Plivo => {
            need("PLIVO_AUTH_ID");
            need("PLIVO_AUTH_TOKEN");
        }
        Provider::Vonage => {
            // As `adapter` builds it: an API key means Basic auth, else an application.
            let application = set("VONAGE_APPLICATION_ID") || set("VONAGE_PRIVATE_KEY");
            if !set("VONAGE_API_KEY") && application {
                need("VONAGE_APPLICATION_ID");
                need("VONAGE_PRIVATE_KEY");
            } else {
                need("VONAGE_API_KEY");
                need("VONAGE_API_SECRET");
            }
        }
        Provider::Sinch => {
            need("SINCH_SERVICE_PLAN_ID");
            need("SINCH_API_TOKEN");
        }
        Provider::Aws => {
            if aws_region(env).is_none() {
                need("AWS_REGION");
            }
            need("AWS_ACCESS_KEY_ID");
            need("AWS_SECRET_ACCESS_KEY");
        }
        Provider::Infobip => {
            // The emulator's (or a proxy's) origin stands in for the account's host.
            if !set(&base_url_variable(provider)) {
                need(INFOBIP_BASE_URL);
            }
            need("INFOBIP_API_KEY");
        }
        Provider::Bandwidth => {
            need("BANDWIDTH_ACCOUNT_ID");
            need("BANDWIDTH_APPLICATION_ID");
            // As `adapter` builds it: an API user means Basic auth, else OAuth 2.0 client credentials.
            if !set("BANDWIDTH_USERNAME") && (set("BANDWIDTH_CLIENT_ID") || set("BANDWIDTH_CLIENT_SECRET")) {
                need("BANDWIDTH_CLIENT_ID");
                need("BANDWIDTH_CLIENT_SECRET");
            } else {
                need("BANDWIDTH_USERNAME");
                need("BANDWIDTH_PASSWORD");
            }
        }
    }
    missing
}

/// An adapter's configuration message as the command spells things: the library's field names
/// (`Twilio account_sid`, `private_key`) become the variables that set them
/// (`TWILIO_ACCOUNT_SID`, `VONAGE_PRIVATE_KEY`).
pub(crate) fn spelled(provider: Provider, message: &str) -> String {
    let table = provider_env(provider);
    let name = provider.as_str();
    let prefix = format!("{}_", name.to_ascii_uppercase());
    let title = name.get(..1).map(str::to_ascii_uppercase).unwrap_or_default() + name.get(1..).unwrap_or_default();
    let mut text = message.to_owned();
    if provider == Provider::Aws {
        text = text.replace("The AWS region", "AWS_REGION");
    }
    for name in table.required.iter().flat_map(|group| group.iter()).chain(table.optional) {
        let Some(field) = name.strip_prefix(&prefix).map(str::to_ascii_lowercase) else { continue };
        // Plain words (`from`) are English in a message, not field names; after the provider's
        // name they are its field (`Bandwidth password`, `Bandwidth application id`).
        if field.contains('_') {
            text = text.replace(&format!("{title} {field}"), name).replace(&field, name);
        }
        text = text.replace(&format!("{title} {}", field.replace('_', " ")), name);
    }
    text
}

/// Checks that `provider`'s environment is complete and sendable: every missing variable, or a
/// credential that cannot be sent in a header, is named.
///
/// # Errors
/// A configuration message naming the variables.
pub(crate) fn check(env: &Env, provider: Provider) -> Result<(), String> {
    let missing = missing(env, provider);
    let name = provider.as_str();
    if !missing.is_empty() {
        let verb = if missing.len() == 1 { "is" } else { "are" };
        return Err(format!("{name} is not fully configured: {} {verb} not set", missing.join(", ")));
    }
    if provider == Provider::Sinch {
        sinch_region(env)?;
    }
    if provider == Provider::Aws {
        check_aws_region(env)?;
    }
    let prefix = format!("{}_", name.to_ascii_uppercase());
    for name in HEADER_VARIABLES.iter().filter(|n| n.starts_with(&prefix)) {
        if env.get(name).is_some_and(|value| !value.bytes().all(|b| b.is_ascii_graphic())) {
            return Err(format!(
                "{name} contains a character that cannot be sent in a header (a space, newline or non-ASCII \
                 character)"
            ));
        }
    }
    Ok(())
}

/// Refuses an `AWS_REGION` (or `AWS_DEFAULT_REGION`) that is not a region name.
///
/// # Errors
/// A configuration message.
pub(crate) fn check_aws_region(env: &Env) -> Result<(), String> {
    if aws_region(env).is_some_and(|region| !sms_sdk::provider::aws::is_region(region)) {
        return Err("AWS_REGION must be a region name such as us-east-1 (lowercase letters, digits and '-')".into());
    }
    Ok(())
}

/// A sender as the command line writes it: `+…` a number, 3–8 digits a short code, an AWS
/// origination identity's id or ARN (`pool-…`, `phone-…`, `senderid-…`, `arn:…`) a pool, anything
/// else an alphanumeric sender ID.
pub(crate) fn parse_sender(text: &str) -> Sender {
    const AWS_IDENTITIES: [&str; 4] = ["arn:", "pool-", "phone-", "senderid-"];
    if AWS_IDENTITIES.iter().any(|prefix| text.starts_with(prefix)) {
        Sender::messaging_service(text)
    } else if text.starts_with('+') {
        Sender::phone(text)
    } else if (3..=8).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit()) {
        Sender::short_code(text)
    } else {
        Sender::sender_id(text)
    }
}

/// The sender configured in the environment and its text: `<PROVIDER>_FROM`, else Twilio's
/// messaging service or Plivo's Powerpack.
pub(crate) fn env_sender(env: &Env, provider: Provider) -> Option<(Sender, String)> {
    let from = format!("{}_FROM", provider.as_str().to_ascii_uppercase());
    if let Some(text) = env.get(&from) {
        return Some((parse_sender(text), text.to_owned()));
    }
    let pool = match provider {
        Provider::Twilio => env.get("TWILIO_MESSAGING_SERVICE_SID"),
        Provider::Plivo => env.get("PLIVO_POWERPACK_UUID"),
        Provider::Telnyx
        | Provider::Vonage
        | Provider::Sinch
        | Provider::Aws
        | Provider::Infobip
        | Provider::Bandwidth => None,
    }?;
    Some((Sender::messaging_service(pool), pool.to_owned()))
}

/// `builder` with `from` as its default sender, when there is one.
macro_rules! with_from {
    ($builder:expr, $from:expr) => {
        match $from {
            Some(from) => $builder.from(from),
            None => $builder,
        }
    };
}

/// Builds `provider`'s adapter from the environment, with `from` (or the environment's sender)
/// as its default sender.
///
/// # Errors
/// The adapter's configuration error.
pub(crate) fn adapter(env: &Env, provider: Provider, from: Option<Sender>) -> Result<AnyAdapter, Error> {
    let var = |name: &str| env.get(name).unwrap_or_default().to_owned();
    let from = from.or_else(|| env_sender(env, provider).map(|(sender, _)| sender));
    let base = origin(env, provider);
    Ok(match provider {
        Provider::Twilio => {
            let builder = if env.get("TWILIO_AUTH_TOKEN").is_some() {
                Twilio::builder(var("TWILIO_ACCOUNT_SID"), var("TWILIO_AUTH_TOKEN"))
            } else {
                Twilio::with_api_key(var("TWILIO_ACCOUNT_SID"), var("TWILIO_API_KEY_SID"), var("TWILIO_API_KEY_SECRET"))
            };
            let builder = builder.base_url(base);
            AnyAdapter::new(with_from!(builder, from).build()?)
        }
        Provider::Telnyx => {
            let mut builder = Telnyx::builder(var("TELNYX_API_KEY")).base_url(base);
            if let Some(profile) = env.get("TELNYX_MESSAGING_PROFILE_ID") {
                builder = builder.messaging_profile_id(profile);
            }
            AnyAdapter::new(with_from!(builder, from).build()?)
        }
        Provider::Plivo => {
            let builder = Plivo::builder(var("PLIVO_AUTH_ID"), var("PLIVO_AUTH_TOKEN")).base_url(base);
            AnyAdapter::new(with_from!(builder, from).build()?)
        }
        Provider::Vonage => {
            let builder = if env.get("VONAGE_API_KEY").is_some() {
                Vonage::basic(var("VONAGE_API_KEY"), var("VONAGE_API_SECRET"))
            } else {
                Vonage::application(var("VONAGE_APPLICATION_ID"), private_key(&var("VONAGE_PRIVATE_KEY")))
            };
            let builder = builder.base_url(base);
            AnyAdapter::new(with_from!(builder, from).build()?)
        }
        Provider::Sinch => {
            let builder = Sinch::builder(var("SINCH_SERVICE_PLAN_ID"), var("SINCH_API_TOKEN")).base_url(base);
            AnyAdapter::new(with_from!(builder, from).build()?)
        }
        Provider::Aws => {
            let mut credentials = AwsCredentials::new(var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY"));
            if let Some(token) = env.get("AWS_SESSION_TOKEN") {
                credentials = credentials.session_token(token.to_owned());
            }
            let region = aws_region(env).unwrap_or_default().to_owned();
            let builder = Aws::builder(region, credentials).base_url(base);
            AnyAdapter::new(with_from!(builder, from).build()?)
        }
        Provider::Infobip => {
            let builder = Infobip::builder(base, var("INFOBIP_API_KEY"));
            AnyAdapter::new(with_from!(builder, from).build()?)
        }
        Provider::Bandwidth => {
            let (account, application) = (var("BANDWIDTH_ACCOUNT_ID"), var("BANDWIDTH_APPLICATION_ID"));
            let mut builder = if env.get("BANDWIDTH_USERNAME").is_some() {
                Bandwidth::basic(account, application, var("BANDWIDTH_USERNAME"), var("BANDWIDTH_PASSWORD"))
            } else {
                Bandwidth::oauth2(account, application, var("BANDWIDTH_CLIENT_ID"), var("BANDWIDTH_CLIENT_SECRET"))
            };
            if let Some(token_url) = bandwidth_token_url(env) {
                builder = builder.token_url(token_url);
            }
            let builder = builder.base_url(base);
            AnyAdapter::new(with_from!(builder, from).build()?)
        }
    })
}

/// Why a provider's adapter could not be built from the environment.
pub(crate) struct Unbuilt {
    /// The library error's code when the adapter refused its configuration; `None` when
    /// [`check`] refused the environment.
    pub(crate) code: Option<&'static str>,
    /// What is wrong, naming the variables ([`spelled`]).
    pub(crate) message: String,
}

/// [`check`]s `provider`'s environment, then builds its adapter (with the environment's sender).
///
/// # Errors
/// What is missing or refused, naming the variables.
pub(crate) fn checked(env: &Env, provider: Provider) -> Result<AnyAdapter, Unbuilt> {
    check(env, provider).map_err(|message| Unbuilt { code: None, message })?;
    adapter(env, provider, None)
        .map_err(|e| Unbuilt { code: Some(e.code()), message: spelled(provider, &e.to_string()) })
}

/// The adapters of `providers` (the `--provider` flags), or of every provider with any variable
/// set; `None` when no provider variable is set at all (the embedded emulator stands in). A
/// provider that is named or mentioned must be complete: what is missing is a configuration
/// error naming it.
///
/// # Errors
/// The exit code (7) and the message.
pub(crate) fn configured_adapters(providers: &[Provider], env: &Env) -> Result<Option<Vec<AnyAdapter>>, (u8, String)> {
    let providers: Vec<Provider> = if providers.is_empty() {
        Provider::ALL.into_iter().filter(|p| is_mentioned(env, *p)).collect()
    } else {
        providers.to_vec()
    };
    if providers.is_empty() {
        return Ok(None);
    }
    let mut adapters = Vec::new();
    for provider in providers {
        let adapter = checked(env, provider).map_err(|Unbuilt { code, message }| {
            let text = match code {
                None => format!("configuration: {message}"),
                Some(code) => format!("{code}: {}: {message}", provider.as_str()),
            };
            (EXIT_CONFIGURATION, text)
        })?;
        adapters.push(adapter);
    }
    Ok(Some(adapters))
}

/// Refuses a send that no adapter has a sender for: without `--from` (`from`), at least one of
/// `adapters` needs its `<PROVIDER>_FROM` (a missing variable is a configuration error, exit 7).
///
/// # Errors
/// The exit code (7) and the message naming the variables.
pub(crate) fn require_sender(adapters: &[AnyAdapter], from: Option<&str>) -> Result<(), (u8, String)> {
    if from.is_some() || adapters.iter().any(|a| a.info().default_from.is_some()) {
        return Ok(());
    }
    let variables: Vec<&str> =
        adapters.iter().filter_map(|a| Provider::named(&a.info().name)).map(sender_variables).collect();
    let message = format!("configuration: no sender: set {}, or pass --from", variables.join(", or "));
    Err((EXIT_CONFIGURATION, message))
}

/// The largest private key file read: 64 KiB (an RSA PEM key is a few KiB).
const MAX_KEY_FILE: u64 = 64 * 1024;

/// `VONAGE_PRIVATE_KEY` is PEM text or the path of a PEM file (read up to 64 KiB; a longer or
/// unreadable file is passed on as text, which the adapter refuses as not PEM).
fn private_key(value: &str) -> String {
    if value.contains("-----BEGIN") || value.is_empty() {
        return value.to_owned();
    }
    read_text_file(value, MAX_KEY_FILE).unwrap_or_else(|_| value.to_owned())
}

/// The first `limit` bytes of the text file at `path` (a PEM key or certificate a variable names).
///
/// # Errors
/// When the file cannot be opened or read, or is not UTF-8.
pub(crate) fn read_text_file(path: &str, limit: u64) -> std::io::Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(std::fs::File::open(path)?, limit), &mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_field_names_become_the_variables() {
        assert_eq!(
            spelled(Provider::Twilio, "Twilio account_sid must be AC followed by 32 hex characters."),
            "TWILIO_ACCOUNT_SID must be AC followed by 32 hex characters."
        );
        assert_eq!(spelled(Provider::Vonage, "Vonage private_key is not PEM."), "VONAGE_PRIVATE_KEY is not PEM.");
        assert_eq!(spelled(Provider::Telnyx, "from is required"), "from is required");
    }
}
