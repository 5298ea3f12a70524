//! Private PostgreSQL and Redis servers that a test starts for itself (so that it may freeze
//! them), found on PATH or in Debian's folders. Without the programs, tests fail and say what to
//! install: they never skip.
// Each server is used by the tests of its own store feature.
#![cfg_attr(not(all(feature = "postgres", feature = "redis")), allow(dead_code, unused_imports))]

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
    let status = Command::new("sh").args(["-c", &format!("kill -s {signal} \"$@\""), "sh"]).args(&pids).status();
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
    persistence: Persistence,
    dir: PathBuf,
    pub(crate) port: u16,
    pub(crate) url: String,
}

impl RedisServer {
    /// A server that keeps nothing on disk.
    pub(crate) fn start() -> Self {
        Self::start_with(Persistence::None)
    }

    pub(crate) fn start_with(persistence: Persistence) -> Self {
        let extra = vec![PathBuf::from("/usr/bin"), PathBuf::from("/usr/local/bin")];
        let bin = find_programs(&["redis-server"], extra).unwrap_or_else(|| {
            panic!(
                "redis-server is not on PATH: install it (Debian: `apt-get install redis-server`, as \
                 scripts/test.sh does)"
            )
        });
        let (dir, port) = (temp_dir("redis"), free_port());
        let child = Mutex::new(spawn_redis(&bin, persistence, &dir, port));
        let server = Self { child, bin, persistence, dir, port, url: format!("redis://127.0.0.1:{port}/0") };
        server.wait_until_ready();
        server
    }

    /// Waits until the server answers PING (after loading its append-only file, if any).
    fn wait_until_ready(&self) {
        use std::io::{Read, Write};
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
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
        *self.child.lock().unwrap_or_else(PoisonError::into_inner) =
            spawn_redis(&self.bin, self.persistence, &self.dir, self.port);
        self.wait_until_ready();
    }
}

fn spawn_redis(bin: &Path, persistence: Persistence, dir: &Path, port: u16) -> Child {
    let keeps: &[&str] = match persistence {
        Persistence::None => &["--appendonly", "no"],
        Persistence::AofAlways => &["--appendonly", "yes", "--appendfsync", "always"],
    };
    Command::new(bin.join("redis-server"))
        .args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", ""])
        .args(keeps)
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
