//! Private PostgreSQL and Redis servers that a test starts for itself (so that it may freeze
//! them), found on PATH or in Debian's folders. Without the programs, tests fail and say what to
//! install: they never skip.
//!
//! The command's tests use this file too, by path (`crates/sms-sdk-cli/tests/cli/servers.rs`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A folder for one server, removed on drop.
fn temp_dir(kind: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sms-sdk-{kind}-{}", super::uuid_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout.trim_ascii() == b"0")
}

/// The first folder of PATH, then of `extra`, that holds every program of `names`.
fn find_programs(names: &[&str], extra: Vec<PathBuf>) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).chain(extra).find(|dir| names.iter().all(|name| dir.join(name).is_file()))
}

/// Runs `program` with `args` (as the `postgres` user when `as_postgres`), and panics with its
/// output when it fails.
fn run(as_postgres: bool, program: &Path, args: &[&str]) {
    let mut command = if as_postgres { Command::new("runuser") } else { Command::new(program) };
    if as_postgres {
        command.args(["-u", "postgres", "--"]).arg(program);
    }
    let output = command.args(args).stdin(Stdio::null()).output().unwrap();
    assert!(
        output.status.success(),
        "{} {args:?} failed: {}{}",
        program.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Sends `signal` (`STOP`, `CONT`) to `pids`; false when one of them could not get it (it
/// exited meanwhile, say).
fn signal(signal: &str, pids: &[u32]) -> bool {
    if pids.is_empty() {
        return true;
    }
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    let status = Command::new("sh")
        .args(["-c", &format!("kill -s {signal} \"$@\""), "sh"])
        .args(&pids)
        .stderr(Stdio::null())
        .status();
    status.is_ok_and(|s| s.success())
}

/// The processes whose parent is `parent`, from /proc.
fn children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // `pid (comm) state ppid …`: the name may hold spaces and parentheses.
            let fields = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            fields.split_whitespace().nth(1).and_then(|ppid| ppid.parse::<u32>().ok()) == Some(parent)
        })
        .collect()
}

/// The openssl script that makes every certificate and key in the current folder.
const MAKE_CERTIFICATES: &str = r#"
set -e
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.crt -days 30 -subj /CN=sms-sdk-test-ca \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
openssl req -x509 $ec -keyout other-ca.key -out other-ca.crt -days 30 -subj /CN=sms-sdk-other-ca \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
openssl req $ec -keyout server.key -out server.csr -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' >server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile server.ext -out server.crt 2>/dev/null
openssl req $ec -keyout client.key -out client.csr -subj /CN=certuser 2>/dev/null
printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n' >client.ext
openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile client.ext -out client.crt 2>/dev/null
printf 'not a certificate\n' >garbage.pem
"#;

/// The certificates of one test, removed on drop.
pub(crate) struct Certificates(PathBuf);

impl Certificates {
    pub(crate) fn make() -> Self {
        let dir = std::env::temp_dir().join(format!("sms-sdk-tls-{}", super::uuid_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let output = Command::new("sh").args(["-c", MAKE_CERTIFICATES]).current_dir(&dir).output().unwrap();
        assert!(output.status.success(), "openssl failed: {}", String::from_utf8_lossy(&output.stderr));
        Self(dir)
    }

    pub(crate) fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_owned()
    }

    pub(crate) fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.0.join(name)).unwrap()
    }
}

impl Drop for Certificates {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the test `test` of this test binary again as a child process whose platform trust store
/// (`SSL_CERT_FILE`) is `certificates`' CA, with `vars` set (the variable is the whole
/// process's, so it is not set in this one); fails unless the child passed and printed `done`.
pub(crate) async fn with_ca_as_platform_store(
    test: &str,
    certificates: &Certificates,
    vars: &[(&str, &str)],
    done: &str,
) {
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .envs(vars.iter().copied())
        .env("SSL_CERT_FILE", certificates.path("ca.crt"))
        .env_remove("SSL_CERT_DIR");
    let output = tokio::task::spawn_blocking(move || child.output()).await.unwrap().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(done),
        "the child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A PostgreSQL server of the test's own, on a free loopback port.
pub(crate) struct PgServer {
    dir: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
    pub(crate) port: u16,
    pub(crate) url: String,
}

impl PgServer {
    pub(crate) fn start() -> Self {
        Self::start_with(&[], "", None)
    }

    /// A server whose data folder also holds `files` (readable by the server only: certificates
    /// and keys), whose `postgresql.conf` ends with `conf`, and whose `pg_hba.conf` is `hba` when
    /// given.
    pub(crate) fn start_with(files: &[(&str, &[u8])], conf: &str, hba: Option<&str>) -> Self {
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let entry = e.ok()?;
                Some((entry.file_name().to_str()?.parse().ok()?, entry.path().join("bin")))
            })
            .collect();
        versions.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
        let bin = find_programs(&["initdb", "pg_ctl"], versions.into_iter().map(|(_, bin)| bin).collect())
            .unwrap_or_else(|| {
                panic!(
                    "the PostgreSQL server programs (initdb, pg_ctl) are neither on PATH nor in \
                     /usr/lib/postgresql/*/bin: install them (Debian: `apt-get install postgresql`, as \
                     scripts/test.sh does)"
                )
            });
        // initdb refuses to run as root: the server then runs as the `postgres` user.
        let as_postgres = is_root();
        let dir = temp_dir("pg");
        if as_postgres {
            let chown = Command::new("chown").args(["postgres"]).arg(&dir).status();
            assert!(
                chown.is_ok_and(|s| s.success()),
                "running as root, the test server runs as the `postgres` user, which is missing: \
                 install the postgresql package (it creates the user) or `useradd --system postgres`"
            );
        }
        let data = dir.join("data");
        run(as_postgres, &bin.join("initdb"), &["-D", data.to_str().unwrap(), "-A", "trust", "-U", "postgres", "-N"]);
        for (name, content) in files {
            let path = data.join(name);
            std::fs::write(&path, content).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
            if as_postgres {
                assert!(Command::new("chown").arg("postgres").arg(&path).status().is_ok_and(|s| s.success()));
            }
        }
        if !conf.is_empty() {
            let mut all = std::fs::read_to_string(data.join("postgresql.conf")).unwrap();
            all.push_str(conf);
            std::fs::write(data.join("postgresql.conf"), all).unwrap();
        }
        if let Some(hba) = hba {
            std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        }
        let port = free_port();
        let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
        let server = Self { dir, bin, as_postgres, port, url };
        server.start_again();
        server
    }

    /// Runs `sql` with psql over the server's Unix socket as the `postgres` user (`pg_hba.conf`
    /// needs a `local` line), and panics with its output when it fails.
    pub(crate) fn psql(&self, sql: &str) {
        let (port, socket) = (self.port.to_string(), self.dir.to_str().unwrap());
        let args = [
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            socket,
            "-p",
            &port,
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            sql,
        ];
        // psql sits beside the server programs, which PATH may hold as links elsewhere.
        let server_bin = std::fs::canonicalize(self.bin.join("pg_ctl")).unwrap();
        run(self.as_postgres, &server_bin.with_file_name("psql"), &args);
    }

    /// Runs `pg_ctl -D <data> args…`, and panics with its output when it fails.
    fn pg_ctl(&self, args: &[&str]) {
        let data = self.dir.join("data");
        let all: Vec<&str> = ["-D", data.to_str().unwrap()].into_iter().chain(args.iter().copied()).collect();
        run(self.as_postgres, &self.bin.join("pg_ctl"), &all);
    }

    /// Starts the server (again) on its port and data folder, and waits until it accepts
    /// connections.
    pub(crate) fn start_again(&self) {
        let (port, socket) = (self.port, self.dir.to_str().unwrap());
        let options = format!("-p {port} -c listen_addresses=127.0.0.1 -k {socket} -c fsync=off");
        let log = self.dir.join("server.log");
        self.pg_ctl(&["-l", log.to_str().unwrap(), "-w", "-t", "30", "-o", &options, "start"]);
    }

    /// Stops the server the way an operator does (`pg_ctl stop -m fast`: open connections are
    /// ended), and waits until it is down.
    pub(crate) fn stop(&self) {
        self.pg_ctl(&["-m", "fast", "-w", "-t", "30", "stop"]);
    }

    /// The postmaster and its children (the backends of open connections).
    fn processes(&self) -> Vec<u32> {
        let pid_file = std::fs::read_to_string(self.dir.join("data/postmaster.pid")).unwrap_or_default();
        let Some(postmaster) = pid_file.lines().next().and_then(|l| l.trim().parse::<u32>().ok()) else {
            return Vec::new();
        };
        std::iter::once(postmaster).chain(children(postmaster)).collect()
    }

    /// Stops the postmaster, then every backend (SIGSTOP); a backend that exits meanwhile needs
    /// no stopping.
    pub(crate) fn freeze(&self) {
        let postmaster = self.processes().first().copied().expect("the test's PostgreSQL server is not running");
        assert!(signal("STOP", &[postmaster]), "could not stop the postmaster {postmaster}");
        signal("STOP", &self.processes());
    }

    /// Lets every process of the server run again (SIGCONT).
    pub(crate) fn thaw(&self) {
        signal("CONT", &self.processes());
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        signal("CONT", &self.processes());
        let data = self.dir.join("data");
        let pg_ctl = self.bin.join("pg_ctl");
        let mut command = if self.as_postgres { Command::new("runuser") } else { Command::new(&pg_ctl) };
        if self.as_postgres {
            command.args(["-u", "postgres", "--"]).arg(&pg_ctl);
        }
        let _ = command.arg("-D").arg(&data).args(["-m", "immediate", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a Redis server keeps on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Persistence {
    /// Nothing (`--save '' --appendonly no`): a restart starts empty.
    None,
    /// Every write in the append-only file, fsynced before the reply (`--appendonly yes
    /// --appendfsync always`).
    AofAlways,
}

/// A Redis server of the test's own, on a free loopback port.
pub(crate) struct RedisServer {
    child: Mutex<Child>,
    bin: PathBuf,
    args: Vec<String>,
    tls: bool,
    dir: PathBuf,
    pub(crate) port: u16,
    pub(crate) url: String,
}

/// The folder that holds `redis-server` and `redis-cli`.
fn redis_bin() -> PathBuf {
    let extra = vec![PathBuf::from("/usr/bin"), PathBuf::from("/usr/local/bin")];
    find_programs(&["redis-server", "redis-cli"], extra).unwrap_or_else(|| {
        panic!(
            "redis-server and redis-cli are not on PATH: install them (Debian: `apt-get install redis-server`, \
             as scripts/test.sh does)"
        )
    })
}

impl RedisServer {
    /// A server that keeps nothing on disk.
    pub(crate) fn start() -> Self {
        Self::start_with(Persistence::None)
    }

    pub(crate) fn start_with(persistence: Persistence) -> Self {
        let keeps: &[&str] = match persistence {
            Persistence::None => &["--appendonly", "no"],
            Persistence::AofAlways => &["--appendonly", "yes", "--appendfsync", "always"],
        };
        Self::start_args(|port, _| {
            let mut args = vec!["--bind".into(), "127.0.0.1".into(), "--port".into(), port.to_string()];
            args.extend(keeps.iter().map(|a| (*a).to_owned()));
            args
        })
    }

    /// A server that takes TLS connections only (`--port 0 --tls-port`), on 127.0.0.1 and
    /// 127.0.0.2, with a certificate for `localhost` and 127.0.0.1 signed by `certificates`' CA;
    /// clients must present a certificate of that CA too when `client_certificates`.
    pub(crate) fn start_tls(certificates: &Certificates, client_certificates: bool) -> Self {
        let mut server = Self::start_args(|port, _| {
            let mut args: Vec<String> = ["--bind", "127.0.0.1", "127.0.0.2", "--port", "0", "--tls-port"]
                .iter()
                .map(|a| (*a).to_owned())
                .collect();
            args.push(port.to_string());
            for (flag, file) in [("--tls-cert-file", "server.crt"), ("--tls-key-file", "server.key")] {
                args.extend([flag.to_owned(), certificates.path(file)]);
            }
            args.extend(["--tls-ca-cert-file".to_owned(), certificates.path("ca.crt")]);
            let auth = if client_certificates { "yes" } else { "no" };
            args.extend(["--tls-auth-clients".to_owned(), auth.to_owned(), "--appendonly".into(), "no".into()]);
            args
        });
        server.url = format!("rediss://localhost:{}/0?sslrootcert={}", server.port, certificates.path("ca.crt"));
        server
    }

    /// A server with the arguments `args(port, folder)` (besides `--save '' --dir`), started and
    /// ready.
    pub(crate) fn start_args(args: impl FnOnce(u16, &Path) -> Vec<String>) -> Self {
        let bin = redis_bin();
        let (dir, port) = (temp_dir("redis"), free_port());
        let args = args(port, &dir);
        let tls = args.iter().any(|a| a == "--tls-port");
        let child = Mutex::new(spawn_redis(&bin, &args, &dir));
        let server = Self { child, bin, args, tls, dir, port, url: format!("redis://127.0.0.1:{port}/0") };
        server.wait_until_ready();
        server
    }

    /// Waits until the server answers PING (after loading its append-only file, if any); a TLS
    /// server, until it takes connections.
    fn wait_until_ready(&self) {
        use std::io::{Read, Write};
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                if self.tls {
                    return;
                }
                let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
                let mut reply = [0; 5];
                if stream.write_all(b"PING\r\n").is_ok() && stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG"
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the test's Redis server on port {} did not start", self.port);
    }

    /// `redis-cli -p <port> <args>`'s output (a plain-text server's).
    pub(crate) fn cli(&self, args: &[&str]) -> String {
        let output = Command::new(self.bin.join("redis-cli"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(output.status.success(), "redis-cli {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Stops the server (SIGSTOP).
    pub(crate) fn freeze(&self) {
        assert!(signal("STOP", &[self.pid()]), "could not stop the test's Redis server");
    }

    /// Lets the server run again (SIGCONT).
    pub(crate) fn thaw(&self) {
        signal("CONT", &[self.pid()]);
    }

    fn pid(&self) -> u32 {
        self.child.lock().unwrap_or_else(PoisonError::into_inner).id()
    }

    /// Kills the server (SIGKILL: no chance to save anything) and waits until it is gone.
    pub(crate) fn kill(&self) {
        self.thaw();
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Starts the server again on its port and folder (after [`kill`](Self::kill)), and waits
    /// until it has loaded what it kept.
    pub(crate) fn start_again(&self) {
        *self.child.lock().unwrap_or_else(PoisonError::into_inner) = spawn_redis(&self.bin, &self.args, &self.dir);
        self.wait_until_ready();
    }
}

fn spawn_redis(bin: &Path, args: &[String], dir: &Path) -> Child {
    Command::new(bin.join("redis-server"))
        .args(args)
        .args(["--save", ""])
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A Redis Cluster of the test's own: masters without replicas on free loopback ports, every
/// slot assigned (`redis-cli --cluster create`), each master answering for its slots alone when
/// another fails (`cluster-require-full-coverage no`, a node timeout of one second).
pub(crate) struct RedisCluster {
    pub(crate) nodes: Vec<RedisServer>,
    /// `redis-cluster://127.0.0.1:<first>?node=127.0.0.1:<second>`.
    pub(crate) url: String,
}

/// The arguments of a cluster node on `port`, announcing `announce` as its port to clients.
fn cluster_node(port: u16, dir: &Path, announce: Option<u16>) -> Vec<String> {
    let mut args: Vec<String> = vec!["--bind".into(), "127.0.0.1".into(), "--port".into(), port.to_string()];
    let config = dir.join("nodes.conf").to_str().unwrap().to_owned();
    args.extend(["--cluster-enabled".into(), "yes".into(), "--cluster-config-file".into(), config]);
    // The bus port is the port + 10000 unless set, which a high free port cannot have.
    args.extend(["--cluster-port".into(), free_port().to_string(), "--cluster-node-timeout".into(), "1000".into()]);
    args.extend(["--cluster-require-full-coverage".into(), "no".into(), "--appendonly".into(), "no".into()]);
    if let Some(announce) = announce {
        args.extend(["--cluster-announce-ip".into(), "127.0.0.1".into()]);
        args.extend(["--cluster-announce-port".into(), announce.to_string()]);
    }
    args
}

impl RedisCluster {
    /// A cluster of `masters` masters, ready.
    pub(crate) fn start(masters: usize) -> Self {
        let nodes: Vec<RedisServer> =
            (0..masters).map(|_| RedisServer::start_args(|port, dir| cluster_node(port, dir, None))).collect();
        let addresses: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
        let mut args: Vec<&str> = vec!["--cluster", "create"];
        args.extend(addresses.iter().map(String::as_str));
        args.extend(["--cluster-replicas", "0", "--cluster-yes"]);
        nodes[0].cli(&args);
        let cluster =
            Self { url: format!("redis-cluster://{}?node={}", addresses[0], addresses[1..].join("&node=")), nodes };
        cluster.wait_until_ok();
        cluster
    }

    /// A cluster of one master that owns every slot and tells clients it is at `announce` (the
    /// port of a proxy in front of it), ready.
    pub(crate) fn start_behind(announce: u16) -> Self {
        let node = RedisServer::start_args(|port, dir| cluster_node(port, dir, Some(announce)));
        node.cli(&["cluster", "addslotsrange", "0", "16383"]);
        let cluster = Self { url: format!("redis-cluster://127.0.0.1:{announce}"), nodes: vec![node] };
        cluster.wait_until_ok();
        cluster
    }

    /// Waits until every node says the cluster is up with every slot assigned.
    fn wait_until_ok(&self) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            let ok = self.nodes.iter().all(|node| {
                let info = node.cli(&["cluster", "info"]);
                info.contains("cluster_state:ok") && info.contains("cluster_slots_assigned:16384")
            });
            if ok {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the test's Redis Cluster did not come up");
    }

    /// The node that holds `key`'s slot.
    pub(crate) fn node_of(&self, key: &str) -> &RedisServer {
        let slot: u16 = self.nodes[0].cli(&["cluster", "keyslot", key]).trim().parse().unwrap();
        self.nodes.iter().find(|node| node_owns(node, slot)).unwrap()
    }
}

/// Whether `node` serves `slot` (its own line of `CLUSTER NODES`, `myself`, lists it).
fn node_owns(node: &RedisServer, slot: u16) -> bool {
    let nodes = node.cli(&["cluster", "nodes"]);
    let Some(myself) = nodes.lines().find(|line| line.contains("myself")) else { return false };
    myself.split_whitespace().skip(8).any(|range| match range.split_once('-') {
        Some((from, to)) => from.parse::<u16>().is_ok_and(|f| f <= slot) && to.parse::<u16>().is_ok_and(|t| slot <= t),
        None => range.parse::<u16>().is_ok_and(|s| s == slot),
    })
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A PgBouncer of the test's own in transaction pooling mode, taking TLS connections only
/// (`client_tls_sslmode = require`, the certificate of `certificates` for `localhost`) and
/// reaching `upstream` (a server on loopback) over TLS verified against the same CA.
pub(crate) struct PgBouncer {
    child: Child,
    dir: PathBuf,
    pub(crate) port: u16,
}

impl PgBouncer {
    pub(crate) fn start_tls(certificates: &Certificates, upstream: u16) -> Self {
        let extra = vec![PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")];
        let bin = find_programs(&["pgbouncer"], extra).unwrap_or_else(|| {
            panic!("pgbouncer is not on PATH nor in /usr/sbin: install it (Debian: `apt-get install pgbouncer`)")
        });
        let (dir, port) = (temp_dir("pgbouncer"), free_port());
        for file in ["server.crt", "server.key", "ca.crt"] {
            std::fs::write(dir.join(file), certificates.read(file)).unwrap();
        }
        std::fs::set_permissions(dir.join("server.key"), std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        std::fs::write(dir.join("userlist.txt"), "\"postgres\" \"\"\n").unwrap();
        let at = |file: &str| dir.join(file).to_str().unwrap().to_owned();
        let ini = format!(
            "[databases]\n* = host=localhost port={upstream}\n\n[pgbouncer]\nlisten_addr = 127.0.0.1\n\
             listen_port = {port}\nunix_socket_dir =\nauth_type = trust\nauth_file = {users}\n\
             pool_mode = transaction\nmax_client_conn = 100\ndefault_pool_size = 10\n\
             client_tls_sslmode = require\nclient_tls_cert_file = {crt}\nclient_tls_key_file = {key}\n\
             server_tls_sslmode = verify-full\nserver_tls_ca_file = {ca}\nlogfile = {log}\n",
            users = at("userlist.txt"),
            crt = at("server.crt"),
            key = at("server.key"),
            ca = at("ca.crt"),
            log = at("pgbouncer.log"),
        );
        std::fs::write(dir.join("pgbouncer.ini"), ini).unwrap();
        let as_postgres = is_root();
        let mut command = if as_postgres { Command::new("runuser") } else { Command::new(bin.join("pgbouncer")) };
        if as_postgres {
            let chown = Command::new("chown").args(["-R", "postgres"]).arg(&dir).status();
            assert!(chown.is_ok_and(|s| s.success()), "running as root, PgBouncer runs as the `postgres` user");
            command.args(["-u", "postgres", "--"]).arg(bin.join("pgbouncer"));
        }
        let child = command.arg(dir.join("pgbouncer.ini")).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(10), "the test's PgBouncer did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, dir, port }
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        // runuser passes the signal on to PgBouncer.
        signal("TERM", &[self.child.id()]);
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
