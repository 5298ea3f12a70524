//! The store servers the library's tests start for themselves (TLS-only PostgreSQL and Redis, a
//! Redis Cluster), shared by path with `crates/sms-sdk/tests/it/stores/servers.rs`.

/// A suffix that keeps the folders of concurrent tests apart.
pub(crate) fn uuid_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{nanos:x}{:x}{}", std::process::id(), COUNT.fetch_add(1, Ordering::Relaxed))
}

// This crate's tests use a part of it.
#[allow(dead_code, unused_imports, unreachable_pub)]
#[path = "../../../sms-sdk/tests/it/stores/servers.rs"]
pub(crate) mod store;
