//! Boxed types of the object-safe traits: the future adapters (as the client stores them) and
//! stores return, and the error sources they pass on.

use std::future::Future;
use std::pin::Pin;

/// A boxed, `Send` future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A boxed error, as sources are passed in.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
