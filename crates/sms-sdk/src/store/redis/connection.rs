//! Where a Redis store or the shared rate limiter connects, and how: one server or a Redis
//! Cluster, in plain text or over TLS. Both read their URL here and share one connection type.
//!
//! | URL | what it reaches |
//! | --- | --- |
//! | `redis://[user:password@]host[:port][/db]` | one server, plain text |
//! | `rediss://…` | one server over TLS |
//! | `redis-cluster://[user:password@]host[:port][?node=host:port&node=…]` | a Redis Cluster (database 0), plain text |
//! | `rediss-cluster://…` | a Redis Cluster over TLS |
//!
//! A cluster URL's host and each `node=` are seed nodes: the client learns the others, and which
//! master holds which slot, from the cluster itself (the `fred` crate's convention).
//!
//! The TLS parameters of a `rediss` URL's query are named as libpq names them:
//! - `sslrootcert`: a PEM file of CA certificates to verify the server against, or `system`
//!   (the default) for the platform's trust store, which honours `SSL_CERT_FILE` and
//!   `SSL_CERT_DIR`;
//! - `sslcert` and `sslkey`: a PEM client certificate (chain) and its key, for mutual TLS.
//!
//! The builders take the same as bytes ([`RedisTls`]), which win over the URL's. The files are
//! read once, when the store connects. `#insecure` at the end of a `rediss` URL turns every
//! check of the server's certificate off; it is honoured only when written, and the store's
//! place (in `Debug` and in every error) then says `certificate NOT verified`.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo, SingleNodeRoutingInfo};
use redis::io::tcp::TcpSettings;
use redis::{ClientTlsConfig, TlsCertificates};
use redis::{Cmd, ConnectionInfo, IntoConnectionInfo, Pipeline, RedisError, RedisFuture, RedisResult, Value};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::store::StoreError;
use crate::store::timeouts::Timeouts;

/// How many times the cluster client tries a command again after a dropped connection, a
/// `MOVED`/`ASK` redirect or a `TRYAGAIN`, before it answers an error. Every try is within the
/// store's operation timeout, whatever this number.
const CLUSTER_RETRIES: u32 = 3;
/// The longest wait between two tries of the cluster client, in milliseconds.
const CLUSTER_MAX_RETRY_WAIT_MS: u64 = 500;
/// The URL parameters read here; any other goes on to the `redis` crate (`protocol=resp3`, say).
const TLS_PARAMETERS: [&str; 3] = ["sslrootcert", "sslcert", "sslkey"];

/// TLS material for a `rediss` URL, given to a builder instead of (or over) the URL's
/// `sslrootcert`, `sslcert` and `sslkey` files. `Debug` never shows it.
///
/// ```
/// use sms_sdk::store::redis::{RedisStore, RedisTls};
///
/// # let (ca_pem, cert_pem, key_pem) = (Vec::new(), Vec::new(), Vec::new());
/// let builder = RedisStore::builder("rediss://cache.internal:6380/0")
///     .tls(RedisTls::new().root_certificates(ca_pem).client_certificate(cert_pem, key_pem));
/// # let _ = builder;
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct RedisTls {
    roots: Option<Vec<u8>>,
    client: Option<(Vec<u8>, Vec<u8>)>,
}

impl RedisTls {
    /// Nothing set: the platform's trust store, no client certificate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Verifies the server against these CA certificates (PEM) instead of the platform's store.
    pub fn root_certificates(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.roots = Some(pem.into());
        self
    }

    /// Presents this client certificate (PEM, the chain) with its private key (PEM).
    pub fn client_certificate(mut self, certificate: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        self.client = Some((certificate.into(), key.into()));
        self
    }
}

impl fmt::Debug for RedisTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTls")
            .field("root_certificates", &self.roots.as_ref().map(|_| "<set>"))
            .field("client_certificate", &self.client.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// What a URL and a builder's TLS settings say to connect to.
pub(crate) struct Target {
    /// The server, or a cluster's seed nodes.
    nodes: Vec<ConnectionInfo>,
    cluster: bool,
    secure: bool,
    /// The CA certificates and client certificate of a TLS connection, when not the defaults.
    certificates: Option<TlsCertificates>,
    insecure: bool,
    /// How errors and `Debug` name it: `Redis at host:port/0 (TLS)`.
    pub(crate) place: Arc<str>,
}

impl Target {
    /// Reads `url` (see the module's table), with `tls` over the URL's TLS parameters.
    pub(crate) fn parse(url: &str, tls: Option<&RedisTls>) -> Result<Self, StoreError> {
        let malformed = |what: &dyn fmt::Display| StoreError::new(format!("Redis URL: {what}"));
        let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
        let (cluster, secure) = match scheme {
            "redis" => (false, false),
            "rediss" => (false, true),
            "redis-cluster" => (true, false),
            "rediss-cluster" => (true, true),
            _ => {
                return Err(malformed(&format_args!(
                    "the scheme must be redis, rediss, redis-cluster or rediss-cluster, not {:?}",
                    scheme.chars().take(32).collect::<String>()
                )));
            }
        };
        // `url` errors name what is wrong, never the input (which may hold a password).
        let parsed = url::Url::parse(url).map_err(|e| malformed(&e))?;
        let host = parsed.host_str().filter(|h| !h.is_empty()).ok_or_else(|| malformed(&"no host"))?;
        let mut seeds = vec![format!("{host}:{}", parsed.port().unwrap_or(6379))];
        let (mut files, mut passed) = (Files::default(), url::form_urlencoded::Serializer::new(String::new()));
        for (name, value) in parsed.query_pairs() {
            match name.as_ref() {
                "node" if cluster => seeds.push(node(&value).map_err(|e| malformed(&e))?),
                "sslrootcert" => files.roots = Some(value.into_owned()),
                "sslcert" => files.certificate = Some(value.into_owned()),
                "sslkey" => files.key = Some(value.into_owned()),
                _ => {
                    passed.append_pair(&name, &value);
                }
            }
        }
        if !secure && (files.any() || tls.is_some()) {
            return Err(malformed(&format_args!(
                "{} set on a plain-text URL: TLS needs rediss:// or rediss-cluster://",
                if tls.is_some() { "TLS settings" } else { "sslrootcert, sslcert or sslkey" }
            )));
        }
        let insecure = match parsed.fragment() {
            None => false,
            Some("insecure") if secure => true,
            Some(_) => return Err(malformed(&"the only fragment is #insecure, on a rediss URL")),
        };
        let path = parsed.path();
        if cluster && !matches!(path, "" | "/" | "/0") {
            return Err(malformed(&"a Redis Cluster has database 0 only: drop the path"));
        }
        let certificates = if secure { files.certificates(tls)? } else { None };
        let userinfo = match (parsed.username(), parsed.password()) {
            ("", None) => String::new(),
            (user, None) => format!("{user}@"),
            (user, Some(password)) => format!("{user}:{password}@"),
        };
        let query = passed.finish();
        let query = if query.is_empty() { query } else { format!("?{query}") };
        let (node_scheme, fragment) =
            (if secure { "rediss" } else { "redis" }, if insecure { "#insecure" } else { "" });
        let nodes = seeds
            .iter()
            .map(|seed| {
                let node_url = format!("{node_scheme}://{userinfo}{seed}{path}{query}{fragment}");
                node_url.as_str().into_connection_info().map_err(|e| StoreError::new(e).at("Redis"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let security = match (secure, insecure) {
            (false, _) => "",
            (true, false) => " (TLS)",
            (true, true) => " (TLS, certificate NOT verified: #insecure)",
        };
        let place = match (cluster, nodes.first()) {
            (false, Some(info)) => format!("Redis at {}/{}{security}", info.addr(), info.redis_settings().db()),
            _ => format!("Redis Cluster at {}{security}", seeds.join(",")),
        };
        Ok(Self { nodes, cluster, secure, certificates, insecure, place: Arc::from(place) })
    }

    /// Connects within the connect timeout: to the server (a connection that reconnects by
    /// itself), or to the cluster (one connection per master, which follows the slots as they move).
    pub(crate) async fn connect(&self, timeouts: Timeouts) -> Result<Connection, StoreError> {
        if self.secure {
            use_ring_unless_chosen();
        }
        if self.insecure {
            tracing::warn!(place = %self.place, "Redis TLS without verifying the server's certificate (#insecure)");
        }
        // Without TCP_NODELAY, a call written while another one's bytes are unacknowledged waits
        // for that acknowledgement (Nagle): concurrent calls on one connection would queue.
        let tcp = TcpSettings::default().set_nodelay(true);
        let connecting = async {
            if self.cluster {
                let mut builder = ClusterClientBuilder::new(self.nodes.clone())
                    .connection_timeout(timeouts.connect)
                    .response_timeout(timeouts.operation)
                    .overall_response_timeout(Some(timeouts.operation))
                    .retries(CLUSTER_RETRIES)
                    .max_retry_wait(CLUSTER_MAX_RETRY_WAIT_MS)
                    .tcp_settings(tcp);
                if let Some(certificates) = &self.certificates {
                    builder = builder.certs(certificates.clone());
                }
                let client = builder.build()?;
                return Ok(Connection::Cluster(client.get_async_connection().await?));
            }
            let info = self.nodes.first().cloned().ok_or_else(|| StoreError::new("no Redis server"))?;
            let info = info.set_tcp_settings(tcp);
            let client = match &self.certificates {
                Some(certificates) => redis::Client::build_with_tls(info, certificates.clone())?,
                None => redis::Client::open(info)?,
            };
            // Every command runs within the store's own operation timeout, so the connection
            // sets no response timeout of its own: one timer per call, not two. (A response
            // timeout does not make the connection reconnect either way; only I/O errors do.)
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(timeouts.connect))
                .set_response_timeout(None)
                .set_number_of_retries(1);
            let mut manager = ConnectionManager::new_with_config(client, config).await?;
            refuse_a_cluster_node(&mut manager).await?;
            Ok(Connection::Single(manager))
        };
        timeouts.connect(&self.place, connecting).await.map_err(|error| match scheme_hint(self.secure, &error) {
            Some(hint) => error.hint(hint),
            None => error,
        })
    }
}

/// What a `redis://` URL that names one node of a cluster gets: its keys would go to that node
/// alone, and those of other masters' slots fail with `MOVED` one by one.
pub(crate) const CLUSTER_NODE: &str = "this server is a node of a Redis Cluster: use a redis-cluster:// URL";

/// Refuses a server that runs in cluster mode (`INFO cluster` says `cluster_enabled:1`). A server
/// that does not let this client run `INFO` is taken as it is.
async fn refuse_a_cluster_node(manager: &mut ConnectionManager) -> Result<(), StoreError> {
    let info: RedisResult<String> = redis::cmd("INFO").arg("cluster").query_async(manager).await;
    match info {
        Ok(info) if info.lines().any(|line| line.trim() == "cluster_enabled:1") => {
            Err(StoreError::new("the server runs in cluster mode").hint(CLUSTER_NODE))
        }
        Err(error) if error.is_io_error() || error.is_timeout() => Err(StoreError::from(error)),
        Ok(_) | Err(_) => Ok(()),
    }
}

/// What a failed connect suggests about the URL's scheme: a TLS URL that timed out may be
/// waiting for a handshake from a plain-text server; a plain-text connection that the server
/// dropped at once may have reached a TLS-only port.
fn scheme_hint(secure: bool, error: &StoreError) -> Option<&'static str> {
    let mut redis = None;
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        redis = redis.or_else(|| cause.downcast_ref::<RedisError>());
        source = cause.source();
    }
    let timed_out = error.is_timeout() || redis.is_some_and(RedisError::is_timeout);
    // Dropped once connected (reset, closed), not refused: nothing listens on a refused port.
    let dropped = redis.is_some_and(|error| error.is_connection_dropped() && !error.is_connection_refusal());
    match (secure, timed_out, dropped) {
        (true, true, _) => {
            Some("a plain-text server never answers the TLS handshake: if this port is not TLS, use redis://")
        }
        (false, _, true) => {
            Some("a TLS-only server drops plain-text connections: if this port takes TLS, use rediss://")
        }
        _ => None,
    }
}

/// The TLS files a URL names.
#[derive(Default)]
struct Files {
    roots: Option<String>,
    certificate: Option<String>,
    key: Option<String>,
}

impl Files {
    fn any(&self) -> bool {
        self.roots.is_some() || self.certificate.is_some() || self.key.is_some()
    }

    /// The certificates to give the `redis` crate (`None`: its defaults, the platform's trust
    /// store and no client certificate), `tls` over the files.
    fn certificates(self, tls: Option<&RedisTls>) -> Result<Option<TlsCertificates>, StoreError> {
        let roots = match (tls.and_then(|t| t.roots.clone()), self.roots.as_deref()) {
            (Some(pem), _) => Some(pem),
            (None, None | Some("system")) => None,
            (None, Some(path)) => Some(read(path, TLS_PARAMETERS[0])?),
        };
        if let Some(pem) = &roots
            && CertificateDer::pem_slice_iter(pem).find_map(Result::ok).is_none()
        {
            let given = match (tls.and_then(|t| t.roots.as_ref()), self.roots.as_deref()) {
                (Some(_), _) | (None, None) => "the root certificates given to RedisTls".to_owned(),
                (None, Some(path)) => format!("sslrootcert {path}"),
            };
            return Err(StoreError::new(format!("{given} holds no PEM certificate")));
        }
        let client = match (tls.and_then(|t| t.client.clone()), self.certificate, self.key) {
            (Some((certificate, key)), _, _) => Some((certificate, key)),
            (None, Some(certificate), Some(key)) => {
                Some((read(&certificate, TLS_PARAMETERS[1])?, read(&key, TLS_PARAMETERS[2])?))
            }
            (None, None, None) => None,
            (None, _, _) => return Err(StoreError::new("sslcert and sslkey go together: give both or neither")),
        };
        let client_tls = client.map(|(client_cert, client_key)| ClientTlsConfig { client_cert, client_key });
        Ok((roots.is_some() || client_tls.is_some()).then_some(TlsCertificates { client_tls, root_cert: roots }))
    }
}

/// The bytes of the file a TLS parameter names.
fn read(path: &str, parameter: &str) -> Result<Vec<u8>, StoreError> {
    std::fs::read(Path::new(path)).map_err(|e| StoreError::new(format!("{parameter} {path}: {e}")))
}

/// A `node=` parameter's `host:port` (the port is required; an IPv6 host in brackets).
fn node(value: &str) -> Result<String, String> {
    let bad = || format!("node={value:?} is not host:port");
    let (host, port) = value.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() || port.parse::<u16>().is_err() || host.contains(['/', '@', '?', '#']) {
        return Err(bad());
    }
    Ok(value.to_owned())
}

/// The `redis` crate builds its TLS configurations on rustls's process-wide default provider:
/// when the program chose none, this crate's (ring) becomes it, rather than rustls panicking in
/// a build where two providers are compiled in.
fn use_ring_unless_chosen() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one meanwhile: theirs stays, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A connection to one server or to a cluster. Cheap to clone (a handle); reconnects by itself.
#[derive(Clone)]
pub(crate) enum Connection {
    /// One server.
    Single(ConnectionManager),
    /// A Redis Cluster: each command goes to the master of its key's slot.
    Cluster(ClusterConnection),
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(connection) => connection.req_packed_command(cmd),
            Self::Cluster(connection) => connection.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(connection) => connection.req_packed_commands(pipeline, offset, count),
            Self::Cluster(connection) => connection.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(connection) => connection.get_db(),
            Self::Cluster(connection) => connection.get_db(),
        }
    }
}

impl Connection {
    /// Runs every command of `pipe` and answers each one's reply or server error, in order: one
    /// pipeline on one server; on a cluster, whose pipelines must keep to one slot, every
    /// command on its own, all at once, each routed by its keys (a command without keys, such
    /// as `SCRIPT LOAD`, runs on every master). Only a failure of the connection fails the call.
    pub(crate) async fn each(&self, mut pipe: Pipeline) -> Result<Vec<RedisResult<Value>>, RedisError> {
        match self {
            Self::Single(connection) => {
                let replies: Vec<Value> = pipe.ignore_errors().query_async(&mut connection.clone()).await?;
                Ok(replies.into_iter().map(Value::extract_error).collect())
            }
            Self::Cluster(connection) => {
                let calls = pipe.cmd_iter().map(|command| {
                    let mut connection = connection.clone();
                    async move { command.query_async::<Value>(&mut connection).await }
                });
                let mut replies = futures_util::future::join_all(calls).await;
                // An error that is not the server's answer to the command: the connection failed.
                let failed = |reply: &RedisResult<Value>| matches!(reply, Err(error) if !matches!(error.kind(), redis::ErrorKind::Server(_)));
                if let Some(at) = replies.iter().position(failed)
                    && let Err(error) = replies.swap_remove(at)
                {
                    return Err(error);
                }
                Ok(replies)
            }
        }
    }

    /// The nodes a `SCAN` must walk to see every key, in a fixed order: `None` for one server,
    /// else every master's `host:port`, sorted.
    pub(crate) async fn scan_nodes(&self) -> Result<Vec<Option<String>>, RedisError> {
        let Self::Cluster(connection) = self else { return Ok(vec![None]) };
        let every_master = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
        let reply = connection.clone().route_command(redis::cmd("PING"), every_master).await?;
        let Value::Map(answers) = reply else {
            return Err(RedisError::from((redis::ErrorKind::UnexpectedReturnType, "no list of masters")));
        };
        let mut masters: Vec<Option<String>> =
            answers.into_iter().map(|(address, _)| redis::from_redis_value::<String>(address).ok()).collect();
        masters.retain(Option::is_some);
        masters.sort_unstable();
        Ok(masters)
    }

    /// Runs `command` on `node` (one of [`scan_nodes`](Self::scan_nodes)).
    pub(crate) async fn on_node<T: redis::FromRedisValue>(&self, node: Option<&str>, command: Cmd) -> RedisResult<T> {
        match (self, node.and_then(|n| n.rsplit_once(':'))) {
            (Self::Cluster(connection), Some((host, port))) => {
                let port = port.parse().map_err(|_| RedisError::from((redis::ErrorKind::Client, "a bad port")))?;
                let node = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress { host: host.to_owned(), port });
                redis::from_redis_value(connection.clone().route_command(command, node).await?)
                    .map_err(RedisError::from)
            }
            _ => command.query_async(&mut self.clone()).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(url: &str) -> String {
        Target::parse(url, None).map_or_else(|e| format!("error: {e}"), |t| t.place.to_string())
    }

    #[test]
    fn urls_name_their_server_cluster_and_security() {
        assert_eq!(place("redis://127.0.0.1:6379/2"), "Redis at 127.0.0.1:6379/2");
        assert_eq!(place("rediss://u:secret@cache.internal/0"), "Redis at cache.internal:6379/0 (TLS)");
        assert_eq!(
            place("rediss://cache.internal:6380/0#insecure"),
            "Redis at cache.internal:6380/0 (TLS, certificate NOT verified: #insecure)"
        );
        assert_eq!(
            place("redis-cluster://a:7000?node=b:7001&node=%5B::1%5D:7002"),
            "Redis Cluster at a:7000,b:7001,[::1]:7002"
        );
        assert_eq!(place("rediss-cluster://u:p@cfg.example:6379"), "Redis Cluster at cfg.example:6379 (TLS)");
        let target = Target::parse("redis-cluster://u:secret@a:7000?node=b:7001", None).unwrap();
        assert_eq!(target.nodes.len(), 2);
        assert!(target.nodes.iter().all(|n| n.redis_settings().password() == Some("secret")));
    }

    #[test]
    fn bad_urls_are_errors_that_name_the_fault_not_the_password() {
        for (url, says) in [
            ("http://h", "scheme"),
            ("redis://h#insecure", "#insecure"),
            ("rediss://h#other", "#insecure"),
            ("redis://h?sslrootcert=/x", "plain-text"),
            ("redis-cluster://h/3", "database 0"),
            ("redis-cluster://h?node=nope", "host:port"),
            ("rediss://h?sslcert=/x", "go together"),
            ("rediss://h?sslrootcert=/nonexistent/ca.pem", "sslrootcert /nonexistent/ca.pem"),
            ("rediss://user:hunter2@:1", "URL"),
        ] {
            let error = place(url);
            assert!(error.starts_with("error: ") && error.contains(says), "{url}: {error}");
            assert!(!error.contains("hunter2"), "{error}");
        }
        let tls = RedisTls::new().root_certificates("not a certificate");
        let error = Target::parse("rediss://h", Some(&tls)).err().unwrap().to_string();
        assert!(error.contains("no PEM certificate"), "{error}");
        let error = Target::parse("redis://h", Some(&RedisTls::new())).err().unwrap().to_string();
        assert!(error.contains("TLS settings"), "{error}");
        assert!(!format!("{:?}", RedisTls::new().client_certificate("c", "KEY")).contains("KEY"));
    }

    #[test]
    fn other_parameters_go_on_to_the_redis_crate() {
        let target = Target::parse("redis://h:1/0?protocol=resp3", None).unwrap();
        assert_eq!(target.nodes[0].redis_settings().protocol(), redis::ProtocolVersion::RESP3);
    }
}
