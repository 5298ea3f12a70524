//! The DynamoDB store's table: its name, its check when the store connects, and its creation.

use std::time::Duration;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, IndexStatus, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, TableDescription, TableStatus, TimeToLiveSpecification, TimeToLiveStatus,
};

use super::{DynamoStore, DynamoStoreBuilder};
use crate::store::StoreError;

/// What a store error for a missing table suggests.
pub(super) const NOT_FOUND: &str = "create the table once with `sms-sdk store init` and the same store URL";

/// What a store error for a table of another shape suggests.
const OTHER_SHAPE: &str = "the table was not made by `sms-sdk store init`: name a table of its own, or give this one the \
     layout of the DynamoDB section of docs/deploying.md";

/// The store's two indexes and their partition keys (each sorts by `pk`).
const INDEXES: [(&str, &str); 2] = [("unresolved", "unresolved"), ("suppressed", "suppressed")];

/// How long `create_table` waits for a new table and its indexes to become active.
const CREATE_LIMIT: Duration = Duration::from_mins(5);
/// How often it looks.
const CREATE_POLL: Duration = Duration::from_millis(500);

/// What [`DynamoStoreBuilder::create_table`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableInit {
    /// It created the table (and its indexes and expiry).
    Created,
    /// The table was there already, of the store's shape (its expiry turned on if it was off).
    Existed,
}

/// Refuses a table name DynamoDB does not allow (3 to 255 of `a-z A-Z 0-9 _ - .`).
pub(super) fn check_name(table: &str) -> Result<(), StoreError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if (3..=255).contains(&table.len()) && table.chars().all(allowed) {
        return Ok(());
    }
    Err(StoreError::new("a DynamoDB table name is 3 to 255 characters of a-z, A-Z, 0-9, `_`, `-` and `.`"))
}

/// Checks that the store's table is there, active, keyed by `pk` and has both indexes.
pub(super) async fn check(store: &DynamoStore) -> Result<(), StoreError> {
    let described =
        store.call("describe the table", store.client.describe_table().table_name(&*store.table).send()).await?;
    let table = described.table.ok_or_else(|| StoreError::new("DescribeTable answered no table"))?;
    shape(&table).map_err(|why| StoreError::new(format!("the table {} {why}", store.table)).hint(OTHER_SHAPE))
}

/// What is wrong with the table's shape, if anything.
fn shape(table: &TableDescription) -> Result<(), String> {
    let keyed = table.key_schema().iter().any(|k| k.attribute_name() == "pk" && *k.key_type() == KeyType::Hash)
        && table.key_schema().len() == 1;
    if !keyed {
        return Err("is not keyed by the string `pk` alone".into());
    }
    for (name, _) in INDEXES {
        if !table.global_secondary_indexes().iter().any(|index| index.index_name() == Some(name)) {
            return Err(format!("has no index `{name}`"));
        }
    }
    Ok(())
}

/// Whether the table and its indexes are active.
fn active(table: &TableDescription) -> bool {
    table.table_status() == Some(&TableStatus::Active)
        && table.global_secondary_indexes().iter().all(|index| index.index_status() == Some(&IndexStatus::Active))
}

fn string_key(name: &str, kind: KeyType) -> Result<KeySchemaElement, StoreError> {
    KeySchemaElement::builder().attribute_name(name).key_type(kind).build().map_err(StoreError::new)
}

fn string_attribute(name: &str) -> Result<AttributeDefinition, StoreError> {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::S)
        .build()
        .map_err(StoreError::new)
}

impl DynamoStoreBuilder {
    /// Creates the store's table (on demand, `PAY_PER_REQUEST`), its two indexes and its expiry
    /// on `ttl`, and waits (at most 5 minutes) until they are active; a table already there is
    /// checked and its expiry turned on. Needs `dynamodb:CreateTable`, `DescribeTable`,
    /// `DescribeTimeToLive` and `UpdateTimeToLive`, which sending does not.
    ///
    /// # Errors
    /// A [`StoreError`] when a call fails, the table there is of another shape, or it is not
    /// active within the limit.
    pub async fn create_table(self) -> Result<(DynamoStore, TableInit), StoreError> {
        let store = Box::pin(self.client()).await?;
        let mut create = store
            .client
            .create_table()
            .table_name(&*store.table)
            .billing_mode(BillingMode::PayPerRequest)
            .attribute_definitions(string_attribute("pk")?)
            .key_schema(string_key("pk", KeyType::Hash)?);
        for (name, partition) in INDEXES {
            create = create.attribute_definitions(string_attribute(partition)?).global_secondary_indexes(
                GlobalSecondaryIndex::builder()
                    .index_name(name)
                    .key_schema(string_key(partition, KeyType::Hash)?)
                    .key_schema(string_key("pk", KeyType::Range)?)
                    .projection(Projection::builder().projection_type(ProjectionType::All).build())
                    .build()
                    .map_err(StoreError::new)?,
            );
        }
        let what = "create the table";
        let creating = async {
            match super::quiet(create.send()).await {
                Ok(_) => Ok(TableInit::Created),
                Err(error) if error.code() == Some("ResourceInUseException") => Ok(TableInit::Existed),
                Err(error) => Err(store.error(what, &error)),
            }
        };
        let init = store.timeouts.operation(&store.place, what, Box::pin(creating)).await?;
        wait_active(&store).await?;
        enable_expiry(&store).await?;
        check(&store).await?;
        Ok((store, init))
    }
}

async fn wait_active(store: &DynamoStore) -> Result<(), StoreError> {
    let deadline = tokio::time::Instant::now() + CREATE_LIMIT;
    loop {
        let described =
            store.call("describe the table", store.client.describe_table().table_name(&*store.table).send()).await?;
        if let Some(table) = described.table {
            shape(&table)
                .map_err(|why| StoreError::new(format!("the table {} {why}", store.table)).at(&store.place))?;
            if active(&table) {
                return Ok(());
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(
                StoreError::new(format!("the table {} was not active after 5 minutes", store.table)).at(&store.place)
            );
        }
        tokio::time::sleep(CREATE_POLL).await;
    }
}

async fn enable_expiry(store: &DynamoStore) -> Result<(), StoreError> {
    let described = store
        .call("describe the expiry", store.client.describe_time_to_live().table_name(&*store.table).send())
        .await?;
    let status = described.time_to_live_description.as_ref().and_then(|d| d.time_to_live_status());
    let attribute = described.time_to_live_description.as_ref().and_then(|d| d.attribute_name());
    match status {
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling) if attribute == Some("ttl") => Ok(()),
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling) => Err(StoreError::new(format!(
            "the table {} expires items on another attribute ({}); the store's is `ttl`",
            store.table,
            attribute.unwrap_or("?")
        ))
        .at(&store.place)),
        _ => {
            let spec = TimeToLiveSpecification::builder()
                .enabled(true)
                .attribute_name("ttl")
                .build()
                .map_err(StoreError::new)?;
            let update = store.client.update_time_to_live().table_name(&*store.table).time_to_live_specification(spec);
            store.call("turn the expiry on", update.send()).await?;
            Ok(())
        }
    }
}
