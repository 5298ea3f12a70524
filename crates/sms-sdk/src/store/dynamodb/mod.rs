//! The DynamoDB store: one table shared by every function and instance, with no server to run.
//!
//! ```no_run
//! # async fn example() -> Result<(), sms_sdk::store::StoreError> {
//! use sms_sdk::store::dynamodb::DynamoStore;
//!
//! // Credentials and region from aws-config's default chain (a Lambda function's role, say).
//! let store = DynamoStore::builder("sms-sdk").connect().await?;
//! # let _ = store; Ok(()) }
//! ```
//!
//! `store::open("dynamodb://TABLE?region=REGION&endpoint=URL")` opens the same (both parameters
//! optional: the region then comes from `AWS_REGION` or the profile, and the endpoint from the
//! region). Credentials come from aws-config's default chain, in its order: the environment
//! (`AWS_ACCESS_KEY_ID`, …), the shared profiles (`AWS_PROFILE`, SSO, `credential_process`),
//! web identity (EKS, GitHub Actions), and the container or instance role (ECS, EC2; a Lambda
//! function's execution role reaches it through the environment, the first of these);
//! [`DynamoStoreBuilder::sdk_config`] takes a configuration of your own instead.
//!
//! # The table
//!
//! [`DynamoStoreBuilder::create_table`] (the command's `sms-sdk store init --store dynamodb://TABLE`)
//! creates it on demand (`PAY_PER_REQUEST`) with its two indexes and DynamoDB's expiry on the
//! `ttl` attribute; [`DynamoStoreBuilder::connect`] checks, with one `DescribeTable`, that the
//! table is there and has that shape, and says to run it when not. Every item's partition key is
//! `pk`, a string that starts with what the item is:
//!
//! | `pk` | item | other attributes |
//! | --- | --- | --- |
//! | `record#<key>` | an idempotency record | `state`, `fingerprint`, `reservation_id`, `reserved_at`, `record`, `expires_at`, `recipient`, `ttl`, `unresolved` |
//! | `dedupe#<key>` | a webhook dedupe key | `claim` (a claim's token; absent once done), `until`, `ttl` |
//! | `reference#<reference>` | a correlation reference | `key`, `until`, `ttl` |
//! | `suppression#<recipient> <scope>` | a suppression entry | see [`DynamoSuppressionStore`](crate::store::suppression::DynamoSuppressionStore) |
//! | `suppression-event#<recipient> <event>` | a webhook event's change, applied | `until`, `ttl` |
//!
//! Times are epoch milliseconds, as in the other stores, and `ttl` is the same expiry in epoch
//! seconds, for DynamoDB's own deletion. That deletion is lazy (within days), so every read and
//! every condition also treats an item past its time as absent. `reserved` and `unknown` records
//! never expire.
//!
//! The index `unresolved` (partition `unresolved`, sort `pk`, every attribute projected) holds
//! only `reserved` and `unknown` records: a record's `unresolved` attribute is `unresolved#<n>`
//! while it is in one of those states and removed when it is settled, where `n` (0 to 15) is
//! the FNV-1a hash of its key modulo 16, so that the index's writes spread over sixteen
//! partitions. Listing unresolved, reserved or unknown keys queries it, shard by shard (ordered
//! by key within a shard), never scanning the table; listing every record, or the accepted or
//! rejected ones, scans the table in pages. The index `suppressed` (partition `suppressed`, sort
//! `pk`) holds the opt-outs, in recipient and scope order. A query of an index may trail the
//! table's latest writes by a moment (DynamoDB's indexes are eventually consistent); every
//! decision (reserve, finalize, resolve) reads and writes the table itself, strongly consistent.
//!
//! # Atomicity, retries and limits
//!
//! `reserve` is one conditional `PutItem` (the key is absent, expired, or rejected with the same
//! fingerprint); `finalize` is one conditional `UpdateItem` on the reservation id; the operator's
//! `resolve` one conditional `UpdateItem` or `DeleteItem` on the unresolved state. A failed
//! condition returns the item as it was (`ReturnValuesOnConditionCheckFailure`), so no call
//! reads first. The SDK re-sends a request whose reply was lost: a re-sent `reserve` finds its
//! own reservation id and answers acquired, a re-sent `finalize` its own record and answers
//! written.
//!
//! The SDK makes at most 3 attempts of a call, each cut after a third of the operation timeout
//! (default 10 s), and the whole call, retries included, ends within the operation timeout with
//! a timeout [`StoreError`]. Throttling (`ProvisionedThroughputExceededException`,
//! `ThrottlingException`, `RequestLimitExceeded`) that outlasts the retries is a store error
//! that [`StoreError::is_throttled`] recognises, raised before any provider request.
//!
//! The SDK's own `tracing` events are silenced while it works for the store: at the trace level
//! they print request and response bodies, whose items hold recipients' full numbers. What a
//! failed call says reaches its [`StoreError`].

mod dedupe;
mod item;
mod list;
mod reference;
mod table;

pub use self::table::TableInit;
/// The AWS configuration crate this store is built with, for [`DynamoStoreBuilder::sdk_config`].
pub use aws_config;
/// The DynamoDB client crate this store is built with.
pub use aws_sdk_dynamodb;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use aws_sdk_dynamodb::Client as DynamoClient;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};

use self::item::{RECORD, record_item, row};
use super::error::Limit;
use super::row::{expiry, payload_to};
use super::timeouts::{Timeouts, timeout_setters};
use super::{
    Claim, Filter, FinalRecord, Finalized, IdempotencyStore, Listing, Operator, Page, Record, Reservation,
    ReservationId, Resolution, Resolved, State, StoreError, millis, resolved_receipt, stale_cutoff,
};
use crate::redact::redact_url_userinfo;
use futures_util::future::BoxFuture;

pub(crate) use self::item::{Item, attr, number, ttl_seconds};

/// The most attempts the SDK makes of one call (the first and two retries).
const MAX_ATTEMPTS: u32 = 3;

/// Idempotency records, webhook dedupe keys, correlation references and (through
/// [`DynamoSuppressionStore`](crate::store::suppression::DynamoSuppressionStore)) the suppression
/// list in one DynamoDB table. Cheap to clone.
#[derive(Clone)]
pub struct DynamoStore {
    pub(crate) client: DynamoClient,
    pub(crate) table: Arc<str>,
    pub(crate) place: Arc<str>,
    timeouts: Timeouts,
}

impl fmt::Debug for DynamoStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamoStore").field("at", &self.place).field("timeouts", &self.timeouts).finish_non_exhaustive()
    }
}

/// Configures a [`DynamoStore`].
#[must_use]
pub struct DynamoStoreBuilder {
    table: String,
    region: Option<String>,
    endpoint: Option<String>,
    sdk_config: Option<aws_config::SdkConfig>,
    timeouts: Timeouts,
}

impl fmt::Debug for DynamoStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamoStoreBuilder")
            .field("table", &self.table)
            .field("region", &self.region)
            .field("endpoint", &self.endpoint.as_deref().map(redact_url_userinfo))
            .field("sdk_config", &self.sdk_config.as_ref().map(|_| "given"))
            .field("timeouts", &self.timeouts)
            .finish()
    }
}

impl DynamoStore {
    /// A store on the table `table`, with aws-config's default chain for credentials and region.
    pub fn builder(table: impl Into<String>) -> DynamoStoreBuilder {
        DynamoStoreBuilder {
            table: table.into(),
            region: None,
            endpoint: None,
            sdk_config: None,
            timeouts: Timeouts::default(),
        }
    }

    /// Connects to the table of a `dynamodb://TABLE?region=…&endpoint=…` URL.
    ///
    /// # Errors
    /// A [`StoreError`] when the URL is malformed, or the table cannot be reached or is not there.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        DynamoStoreBuilder::from_url(url)?.connect().await
    }

    /// Runs one call, `what`, within the operation timeout, and makes its failure a store error.
    pub(crate) async fn call<T, E>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, SdkError<E, HttpResponse>>>,
    ) -> Result<T, StoreError>
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        let work = Box::pin(async { quiet(call).await.map_err(|e| self.error(what, &e)) });
        self.timeouts.operation(&self.place, what, work).await
    }

    /// The SDK client the store calls DynamoDB with (its configuration: the retries and
    /// timeouts above), for calls of your own on the same connections.
    #[must_use]
    pub fn sdk_client(&self) -> &DynamoClient {
        &self.client
    }

    /// The store's timeouts.
    pub(crate) fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// The store error of a failed call.
    pub(crate) fn error<E>(&self, what: &str, error: &SdkError<E, HttpResponse>) -> StoreError
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        if let SdkError::TimeoutError(_) = error {
            return StoreError::timeout(&self.place, what, Limit::Operation, self.timeouts.operation);
        }
        let reason = format!("{what}: {}", reason(error));
        match error.code() {
            Some("ProvisionedThroughputExceededException" | "ThrottlingException" | "RequestLimitExceeded") => {
                StoreError::throttled(&self.place, &reason)
            }
            Some("ResourceNotFoundException") => StoreError::new(reason).hint(table::NOT_FOUND),
            Some(
                "UnrecognizedClientException"
                | "InvalidSignatureException"
                | "ExpiredTokenException"
                | "AccessDeniedException",
            ) => StoreError::new(reason).hint(REFUSED),
            None if matches!(error, SdkError::ServiceError(_)) => StoreError::new(reason).hint(NOT_DYNAMODB),
            _ if reason.contains("credentials") || reason.contains("IMDS") => {
                StoreError::new(reason).hint(NO_CREDENTIALS)
            }
            _ => StoreError::new(reason),
        }
    }

    /// The record of `key`, read strongly consistent; `None` when there is none.
    async fn item(&self, what: &str, key: &str) -> Result<Option<Item>, StoreError> {
        let read = self.client.get_item().table_name(&*self.table).key("pk", attr(format!("{RECORD}{key}")));
        let output = self.call(what, read.consistent_read(true).send()).await?;
        Ok(output.item.map(Item))
    }
}

impl DynamoStoreBuilder {
    /// The store of a `dynamodb://TABLE?region=…&endpoint=…` URL (the parameters may be left
    /// out; no other is known).
    ///
    /// # Errors
    /// A [`StoreError`] when the URL is not of that form.
    pub fn from_url(url: &str) -> Result<Self, StoreError> {
        let bad =
            |why: &str| StoreError::new(format!("a DynamoDB store URL is dynamodb://TABLE?region=…&endpoint=…: {why}"));
        let rest = url.strip_prefix("dynamodb://").ok_or_else(|| bad("it must start with dynamodb://"))?;
        let (table, query) = rest.split_once('?').unwrap_or((rest, ""));
        let mut builder = DynamoStore::builder(table);
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = url::form_urlencoded::parse(value.as_bytes()).next().map(|(v, _)| v.into_owned());
            let shown: String = name.chars().take(32).collect();
            let value = value.filter(|v| !v.is_empty()).ok_or_else(|| bad(&format!("`{shown}` has no value")))?;
            builder = match name {
                "region" => builder.region(value),
                "endpoint" => builder.endpoint(value),
                _ => return Err(bad(&format!("`{shown}` is not one of its parameters, region and endpoint"))),
            };
        }
        Ok(builder)
    }

    /// The AWS region (default: aws-config's chain, `AWS_REGION` or the profile's).
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// The endpoint URL, for DynamoDB Local, a VPC endpoint or a test server (default: the
    /// region's).
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// An AWS configuration of your own (credentials provider, region, HTTP client) instead of
    /// the default chain's; `region` and `endpoint`, when set, still win.
    pub fn sdk_config(mut self, config: aws_config::SdkConfig) -> Self {
        self.sdk_config = Some(config);
        self
    }

    timeout_setters! {
        connect: "How long loading the AWS configuration and checking the table may take; default 5 s.",
        operation: "How long one call may take, the SDK's retries included; default 10 s.",
    }

    /// Connects: loads the configuration and checks the table with one `DescribeTable`.
    ///
    /// # Errors
    /// A [`StoreError`] when a timeout is zero, the table name is not one DynamoDB allows, no
    /// region is configured, or the table is not there (or not of the store's shape) within the
    /// connect timeout.
    pub async fn connect(self) -> Result<DynamoStore, StoreError> {
        // Boxed, as every call below: the SDK's futures nest deep, and a caller's future (or a
        // thread's stack) would hold them inline.
        let store = Box::pin(self.client()).await?;
        let (place, limit) = (Arc::clone(&store.place), store.timeouts.connect);
        let checked = store.timeouts.connect(&place, Box::pin(table::check(&store))).await;
        // The SDK's own limit may end the check first: it is the connect's all the same.
        checked.map_err(|e| {
            if e.is_timeout() { StoreError::timeout(&place, "connect", Limit::Connect, limit) } else { e }
        })?;
        Ok(store)
    }

    /// The store, without checking its table (which [`DynamoStoreBuilder::create_table`] creates).
    pub(crate) async fn client(self) -> Result<DynamoStore, StoreError> {
        let timeouts = self.timeouts.checked()?;
        table::check_name(&self.table)?;
        if let Some(endpoint) = &self.endpoint {
            check_endpoint(endpoint)?;
        }
        let place_of = |region: &str| match &self.endpoint {
            Some(endpoint) => format!("DynamoDB table {} in {region} at {}", self.table, redact_url_userinfo(endpoint)),
            None => format!("DynamoDB table {} in {region}", self.table),
        };
        let http = aws_smithy_http_client::Builder::new()
            .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
                aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
            ))
            .build_https();
        let shared = if let Some(config) = self.sdk_config {
            config
        } else {
            let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(http.clone());
            if let Some(region) = &self.region {
                loader = loader.region(aws_config::Region::new(region.clone()));
            }
            let place = place_of(self.region.as_deref().unwrap_or("the default region"));
            timeouts.connect(&place, Box::pin(async { Ok(quiet(loader.load()).await) })).await?
        };
        let mut config = aws_sdk_dynamodb::config::Builder::from(&shared)
            .retry_config(aws_config::retry::RetryConfig::standard().with_max_attempts(MAX_ATTEMPTS))
            .timeout_config(
                aws_config::timeout::TimeoutConfig::builder()
                    .connect_timeout(timeouts.connect)
                    .operation_attempt_timeout(timeouts.operation / MAX_ATTEMPTS)
                    .operation_timeout(timeouts.operation)
                    .build(),
            );
        if shared.http_client().is_none() {
            config = config.http_client(http);
        }
        if let Some(region) = self.region {
            config = config.region(aws_config::Region::new(region));
        }
        if let Some(endpoint) = &self.endpoint {
            config = config.endpoint_url(endpoint);
        }
        let config = config.build();
        let region = config.region().map(ToString::to_string).ok_or_else(|| {
            StoreError::new("no AWS region: set AWS_REGION, a profile's region, or ?region= in the store URL")
        })?;
        let place: Arc<str> = place_of(&region).into();
        Ok(DynamoStore { client: DynamoClient::from_conf(config), table: self.table.into(), place, timeouts })
    }
}

/// What a store error suggests when no credentials were found.
const NO_CREDENTIALS: &str = "no AWS credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or \
     AWS_PROFILE, or run where a role provides them (Lambda, ECS, EC2)";
/// What it suggests when AWS refused the credentials or their permissions.
const REFUSED: &str = "AWS refused the credentials or their permissions: check the key, the region, and that the \
     policy allows the table's actions (docs/deploying.md lists them)";
/// What it suggests when the endpoint answered with an error DynamoDB never gives.
const NOT_DYNAMODB: &str = "the answer is not DynamoDB's: is the endpoint (or the region) right?";

/// What went wrong in a call, in a line: the service's error code and message, or the
/// transport's chain of errors (never the raw response, whose body may quote an item).
fn reason<E>(error: &SdkError<E, HttpResponse>) -> String
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    if let SdkError::ServiceError(failure) = error {
        let status = failure.raw().status().as_u16();
        return match (failure.err().code(), failure.err().message()) {
            (Some(code), Some(message)) => format!("{code}: {message}"),
            (Some(code), None) => code.to_owned(),
            _ => format!("HTTP {status} with no DynamoDB error code"),
        };
    }
    let mut parts: Vec<String> = vec![error.to_string()];
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source.filter(|_| parts.len() < 8) {
        let text = cause.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// `call` with the SDK's own logs silenced: at the trace level they print each request's and
/// response's body, whose items hold recipients' full numbers, and at every level they would
/// escape the library's redaction. A failed call's reason reaches its [`StoreError`] instead.
pub(crate) fn quiet<F: Future>(call: F) -> tracing::instrument::WithDispatch<F> {
    use tracing::instrument::WithSubscriber as _;
    call.with_subscriber(tracing::subscriber::NoSubscriber::default())
}

/// Refuses an endpoint that is not an `http://` or `https://` URL, or that holds a user or
/// password (AWS signs every request; a secret in the URL would only end up in logs).
fn check_endpoint(endpoint: &str) -> Result<(), StoreError> {
    let bad = |why: &str| Err(StoreError::new(format!("the DynamoDB endpoint {why}")));
    let Some(rest) = endpoint.strip_prefix("https://").or_else(|| endpoint.strip_prefix("http://")) else {
        return bad("must start with http:// or https:// (http://127.0.0.1:8000, say)");
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return bad("takes no user or password: AWS signs each request with the credentials of its chain");
    }
    if authority.is_empty() {
        return bad("has no host");
    }
    Ok(())
}

/// A conditional write's answer: written, or the item as it was when the condition failed
/// (`None`: it was absent).
pub(crate) enum Written {
    Yes,
    No(Option<Item>),
}

impl DynamoStore {
    /// Runs a conditional write (`what`) whose request asked for the old item on a failed
    /// condition; `old` takes it out of the service error.
    pub(crate) async fn conditional<T, E>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, SdkError<E, HttpResponse>>>,
        old: impl FnOnce(E) -> Option<HashMap<String, AttributeValue>>,
    ) -> Result<Written, StoreError>
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        let work = Box::pin(async {
            match quiet(call).await {
                Ok(_) => Ok(Written::Yes),
                Err(SdkError::ServiceError(failure))
                    if failure.err().code() == Some("ConditionalCheckFailedException") =>
                {
                    Ok(Written::No(old(failure.into_err()).map(Item)))
                }
                Err(error) => Err(self.error(what, &error)),
            }
        });
        self.timeouts.operation(&self.place, what, work).await
    }
}

/// The item a failed `PutItem` condition found.
pub(crate) fn old_put(error: PutItemError) -> Option<HashMap<String, AttributeValue>> {
    if let PutItemError::ConditionalCheckFailedException(failed) = error { failed.item } else { None }
}

/// The item a failed `UpdateItem` condition found.
fn old_update(error: UpdateItemError) -> Option<HashMap<String, AttributeValue>> {
    if let UpdateItemError::ConditionalCheckFailedException(failed) = error { failed.item } else { None }
}

/// The item a failed `DeleteItem` condition found.
fn old_delete(error: DeleteItemError) -> Option<HashMap<String, AttributeValue>> {
    if let DeleteItemError::ConditionalCheckFailedException(failed) = error { failed.item } else { None }
}

/// The condition under which an item with an `until` (a dedupe key, an applied suppression
/// event) may be written: absent, or past its time. Over `#until` and `:now`.
pub(crate) const FREE: &str = "attribute_not_exists(pk) OR #until <= :now";

/// The condition under which `reserve` may take a key, over `#s`, `#f`, `#e`, `:now`,
/// `:rejected` and `:fp`.
const CLAIMABLE: &str = "attribute_not_exists(pk) OR #e <= :now OR (#s = :rejected AND #f = :fp)";

/// The condition under which `resolve` may settle a key: unknown, or reserved before the cutoff.
const UNRESOLVED: &str = "#s = :unknown OR (#s = :reserved AND #r < :cutoff)";

impl IdempotencyStore for DynamoStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        Box::pin(async move {
            let now = millis(SystemTime::now());
            let Some(item) = self.item("get", key).await? else { return Ok(None) };
            let row = row(key, &item).map_err(|e| e.at(&self.place))?;
            if !row.is_live(now) {
                return Ok(None);
            }
            row.record().map(Some).map_err(|e| e.at(&self.place))
        })
    }

    fn reserve<'a>(
        &'a self,
        key: &'a str,
        claim: Claim<'a>,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        Box::pin(async move {
            let id = ReservationId::new();
            let item = record_item(key, claim, &id, now);
            let put = self
                .client
                .put_item()
                .table_name(&*self.table)
                .set_item(Some(item))
                .condition_expression(CLAIMABLE)
                .expression_attribute_names("#s", "state")
                .expression_attribute_names("#f", "fingerprint")
                .expression_attribute_names("#e", "expires_at")
                .expression_attribute_values(":now", number(millis(now)))
                .expression_attribute_values(":rejected", attr(State::Rejected.as_str()))
                .expression_attribute_values(":fp", attr(claim.fingerprint.as_str()))
                .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
            let written = self.conditional("reserve", put.send(), old_put).await?;
            let old = match written {
                Written::Yes => return Ok(Reservation::Acquired(id)),
                Written::No(old) => {
                    old.ok_or_else(|| StoreError::new("reserve: the condition failed on no item").at(&self.place))?
                }
            };
            let record = row(key, &old).and_then(|row| row.record()).map_err(|e| e.at(&self.place))?;
            // The SDK re-sent this very call after a lost reply: the reservation is ours.
            if let Record::Reserved { reservation_id, .. } = &record
                && *reservation_id == id
            {
                return Ok(Reservation::Acquired(id));
            }
            Ok(Reservation::Existing(Box::new(record)))
        })
    }

    fn finalize<'a>(
        &'a self,
        key: &'a str,
        reservation: &'a ReservationId,
        record: FinalRecord,
        ttl: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Finalized, StoreError>> {
        Box::pin(async move {
            let json = payload_to(&record, None)?;
            let state = record.state();
            let expires = expiry(&record, ttl, now);
            let mut update = self
                .client
                .update_item()
                .table_name(&*self.table)
                .key("pk", attr(format!("{RECORD}{key}")))
                .condition_expression("#s = :reserved AND #id = :id")
                .expression_attribute_names("#s", "state")
                .expression_attribute_names("#id", "reservation_id")
                .expression_attribute_names("#rec", "record")
                .expression_attribute_values(":reserved", attr(State::Reserved.as_str()))
                .expression_attribute_values(":id", attr(reservation.as_str()))
                .expression_attribute_values(":state", attr(state.as_str()))
                .expression_attribute_values(":rec", attr(json.clone()))
                .return_values(ReturnValue::None)
                .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
            update = match expires {
                // Settled: out of the unresolved index, with an expiry.
                Some(at) => update
                    .update_expression("SET #s = :state, #rec = :rec, #e = :e, #ttl = :ttl REMOVE #u")
                    .expression_attribute_names("#e", "expires_at")
                    .expression_attribute_names("#ttl", "ttl")
                    .expression_attribute_names("#u", "unresolved")
                    .expression_attribute_values(":e", number(at))
                    .expression_attribute_values(":ttl", number(item::ttl_seconds(at))),
                // Unknown: stays in the index, never expires.
                None => update.update_expression("SET #s = :state, #rec = :rec"),
            };
            let written = self.conditional("finalize", update.send(), old_update).await?;
            Ok(match written {
                Written::Yes => Finalized::Written,
                // The SDK re-sent this very call after a lost reply: the record is ours.
                Written::No(Some(old))
                    if old.text("state") == Some(state.as_str())
                        && old.text("reservation_id") == Some(reservation.as_str())
                        && old.text("record") == Some(json.as_str()) =>
                {
                    Finalized::Written
                }
                Written::No(_) => Finalized::NotOwner,
            })
        })
    }

    fn references(&self) -> Option<&dyn crate::store::ReferenceIndex> {
        Some(self)
    }
}

impl Operator for DynamoStore {
    fn list(&self, filter: Filter, now: SystemTime, page: Page) -> BoxFuture<'_, Result<Listing, StoreError>> {
        Box::pin(list::page(self, filter, now, page))
    }

    fn resolve<'a>(
        &'a self,
        key: &'a str,
        resolution: Resolution,
        stale_after: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Resolved, StoreError>> {
        Box::pin(async move {
            let pk = attr(format!("{RECORD}{key}"));
            // What the condition names, set first on either write (which then adds its own).
            let names = Some(HashMap::from([("#s".into(), "state".into()), ("#r".into(), "reserved_at".into())]));
            let values = Some(HashMap::from([
                (":unknown".into(), attr(State::Unknown.as_str())),
                (":reserved".into(), attr(State::Reserved.as_str())),
                (":cutoff".into(), number(stale_cutoff(now, stale_after))),
            ]));
            let written = match resolution {
                Resolution::NotSent => {
                    let delete = self
                        .client
                        .delete_item()
                        .table_name(&*self.table)
                        .key("pk", pk)
                        .condition_expression(UNRESOLVED)
                        .set_expression_attribute_names(names)
                        .set_expression_attribute_values(values)
                        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
                    self.conditional("resolve", delete.send(), old_delete).await?
                }
                Resolution::Sent { provider, provider_id, ttl, endpoint } => {
                    let result = FinalRecord::Accepted(resolved_receipt(provider, provider_id));
                    let at = expiry(&result, ttl, now).unwrap_or_else(|| millis(now));
                    let update = self
                        .client
                        .update_item()
                        .table_name(&*self.table)
                        .key("pk", pk)
                        .condition_expression(UNRESOLVED)
                        .set_expression_attribute_names(names)
                        .set_expression_attribute_values(values)
                        .update_expression("SET #s = :accepted, #rec = :rec, #e = :e, #ttl = :ttl REMOVE #u, #id")
                        .expression_attribute_names("#rec", "record")
                        .expression_attribute_names("#e", "expires_at")
                        .expression_attribute_names("#ttl", "ttl")
                        .expression_attribute_names("#u", "unresolved")
                        .expression_attribute_names("#id", "reservation_id")
                        .expression_attribute_values(":accepted", attr(State::Accepted.as_str()))
                        .expression_attribute_values(":rec", attr(payload_to(&result, endpoint.as_deref())?))
                        .expression_attribute_values(":e", number(at))
                        .expression_attribute_values(":ttl", number(item::ttl_seconds(at)))
                        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
                    self.conditional("resolve", update.send(), old_update).await?
                }
            };
            let old = match written {
                Written::Yes => return Ok(Resolved::Done),
                Written::No(None) => return Ok(Resolved::NotFound),
                Written::No(Some(old)) => old,
            };
            let row = row(key, &old).map_err(|e| e.at(&self.place))?;
            if !row.is_live(millis(now)) {
                return Ok(Resolved::NotFound);
            }
            Ok(Resolved::Refused(Box::new(row.record().map_err(|e| e.at(&self.place))?)))
        })
    }
}
