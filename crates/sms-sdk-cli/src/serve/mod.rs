//! `sms-sdk serve`: the webhook receiver that closes the loop for command users. It verifies
//! each provider's webhooks, deduplicates them through the store, settles unknown sends from
//! their status callbacks, feeds STOP/START to the suppression list, and hands each event on
//! (JSON lines on stdout, or a Standard Webhooks POST to the application). A provider gets 2xx
//! only once all of that is done; otherwise 503, and the event's key stays free for its
//! redelivery.

mod forward;
mod pipeline;
mod routes;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueHint};
use sms_sdk::redact::redact_url;
use tokio::sync::mpsc;

use self::forward::{ForwardSecret, Forwarder};
use self::pipeline::{Outputs, Pipeline, StdoutLine};
use self::routes::{App, Verifiers};
use crate::flags::Provider;
use crate::store::StoreFlag;
use crate::{EXIT_CONFIGURATION, EXIT_OK, Env};

pub(crate) use self::forward::SECRET_VARIABLE as FORWARD_SECRET_VARIABLE;

/// The variable whose secret lets `send` and `batch` attach correlation references.
pub(crate) const CORRELATION_SECRET_VARIABLE: &str = "SMS_SDK_CORRELATION_SECRET";
/// How long, after SIGTERM or Ctrl-C, the requests in flight get to finish.
const DRAIN: Duration = Duration::from_secs(25);
/// How many stdout lines (and log lines) wait for the writer at most.
const LINE_BUFFER: usize = 1024;

/// `serve` flags.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on (any address: this is a production server; port 0 picks one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub(crate) listen: String,
    /// The public URL the providers call, up to the path prefix (`https://hooks.example.com`):
    /// a webhook's signed URL is this plus the request's path and query. Default: the URL as
    /// received (`http://`, the Host header, the path and query).
    #[arg(long, value_name = "URL", value_hint = ValueHint::Url, value_parser = crate::flags::http_url)]
    pub(crate) public_url: Option<String>,
    /// Rebuild the signed URL from `X-Forwarded-Proto`/`X-Forwarded-Host` or `Forwarded` (only
    /// behind a proxy you control, which sets them: clients can send them too).
    #[arg(long)]
    pub(crate) trust_forwarded: bool,
    /// POST each event to URL as JSON, signed per the Standard Webhooks specification with
    /// `SMS_SDK_FORWARD_SECRET` (`whsec_…`); the provider gets 2xx once URL answered 2xx.
    #[arg(long, value_name = "URL", value_hint = ValueHint::Url, value_parser = crate::flags::http_url)]
    pub(crate) forward: Option<String>,
    /// How many seconds all attempts to forward one event may take together (1 to 10): keep it
    /// under the providers' webhook timeouts, so that they get the 503 and deliver again.
    #[arg(long, value_name = "SECONDS", default_value_t = forward::DEFAULT_BUDGET.as_secs(), value_parser = clap::value_parser!(u64).range(1..=forward::MAX_BUDGET_SECS))]
    pub(crate) forward_budget: u64,
    /// Also write each event to stdout as a JSON line with --forward (without --forward, stdout is
    /// where events go).
    #[arg(long)]
    pub(crate) stdout: bool,
    /// The most webhooks handled at once; past it, 503 (the provider retries).
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub(crate) max_concurrency: u32,
    /// Do not log one line per request on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    #[command(flatten)]
    pub(crate) store: StoreFlag,
}

/// Each provider's verifier whose secret is set; an error names an unusable secret's variable
/// (never its value).
fn verifiers(env: &Env) -> Result<Verifiers, String> {
    let mut verifiers = Verifiers::default();
    for provider in Provider::ALL {
        let variable = crate::webhook::configured_variable(provider, env);
        let unusable = |e: String| crate::webhook::unusable(variable, e);
        if let Some(verifier) = crate::webhook::verifier(provider, env).map_err(unusable)? {
            // What the banner says: for AWS, also where its certificates come from.
            let shown = match provider {
                Provider::Aws if env.get(crate::webhook::AWS_CERTIFICATE_VARIABLE).is_some() => {
                    "AWS_SNS_TOPIC_ARN set; SNS certificate pinned by SMS_SDK_AWS_SNS_CERTIFICATE"
                }
                Provider::Aws => "AWS_SNS_TOPIC_ARN set; SNS certificates fetched from AWS",
                Provider::Twilio
                | Provider::Telnyx
                | Provider::Plivo
                | Provider::Vonage
                | Provider::Sinch
                | Provider::Infobip
                | Provider::Bandwidth => variable,
            };
            verifiers.insert(provider, shown, verifier);
        }
    }
    Ok(verifiers)
}

/// `sms-sdk serve`: runs until SIGTERM or Ctrl-C, then finishes the requests in flight (within
/// 25 s) and exits 0.
pub(crate) async fn run(args: ServeArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    // The handlers are installed now, before anything listens: a SIGTERM from the first moment
    // on stops the server gracefully instead of killing it.
    let stop = shutdown_signal();
    serve(args, env, out, err, stop).await
}

/// Installs the SIGTERM (on Unix) and Ctrl-C handlers at once, and returns the future that
/// completes on the first of them.
fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    // `ctrl_c` registers its handler when first polled: poll it once now, through a task.
    let (interrupted, interrupt) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = interrupted.send(());
        }
    });
    async move {
        #[cfg(unix)]
        let terminate = async move {
            match terminate {
                Some(mut signal) => {
                    signal.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let terminate = std::future::pending::<()>();
        let interrupt = async move {
            if interrupt.await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            () = interrupt => {}
            () = terminate => {}
        }
    }
}

/// A configuration problem: said on `err`, exit 7.
fn refuse(err: &mut dyn Write, message: &str) -> u8 {
    let _ = writeln!(err, "error: {message}");
    EXIT_CONFIGURATION
}

/// What the environment configures: the verifiers, the forward target, and whether the
/// correlation secret is set.
struct Configured {
    verifiers: Verifiers,
    forward: Option<Forwarder>,
    settles: bool,
}

/// Reads and checks the secrets `serve` needs, refusing on `err` (exit 7) what is missing or
/// unusable.
fn configure(args: &ServeArgs, env: &Env, err: &mut dyn Write) -> Result<Configured, u8> {
    let verifiers = match verifiers(env) {
        Ok(verifiers) if verifiers.is_empty() => {
            let names: Vec<String> = Provider::ALL.into_iter().map(crate::webhook::secret_variables).collect();
            return Err(refuse(err, &format!("no webhook secret is set: set at least one of {}", names.join(", "))));
        }
        Ok(verifiers) => verifiers,
        Err(message) => return Err(refuse(err, &message)),
    };
    let forward = match &args.forward {
        None => None,
        Some(url) => {
            let Some(secret) = env.get(FORWARD_SECRET_VARIABLE).filter(|s| !s.is_empty()) else {
                return Err(refuse(err, &format!("--forward needs {FORWARD_SECRET_VARIABLE} (whsec_ and base64)")));
            };
            match ForwardSecret::parse(secret)
                .and_then(|secret| Forwarder::new(url, secret, Duration::from_secs(args.forward_budget)))
            {
                Ok(forwarder) => Some(forwarder),
                Err(message) => return Err(refuse(err, &message)),
            }
        }
    };
    let settles = match env.get(CORRELATION_SECRET_VARIABLE).filter(|s| !s.is_empty()) {
        None => false,
        Some(secret) => match sms_sdk::correlation::CorrelationSecret::new(secret.to_owned()) {
            Ok(_) => true,
            Err(e) => return Err(refuse(err, &format!("{CORRELATION_SECRET_VARIABLE}: {e}"))),
        },
    };
    Ok(Configured { verifiers, forward, settles })
}

/// Runs the receiver until `stop` completes.
pub(crate) async fn serve(
    args: ServeArgs,
    env: &Env,
    out: &mut dyn Write,
    err: &mut dyn Write,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> u8 {
    let Configured { verifiers, forward, settles } = match configure(&args, env, err) {
        Ok(configured) => configured,
        Err(code) => return code,
    };
    // The store real sends use (never the embedded emulator's, whose sends post no webhooks here).
    let spinners = crate::spinner::Spinners::new(env, true);
    let (url, stores) = match args.store.open_stores(env, crate::paths::Sends::Real, spinners, err).await {
        Ok(opened) => opened,
        Err(error) => return refuse(err, &format!("store: {error}")),
    };
    let listener = match tokio::net::TcpListener::bind(&args.listen).await {
        Ok(listener) => listener,
        Err(error) => return refuse(err, &format!("cannot listen on {}: {error}", args.listen)),
    };
    let address = listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));

    let (lines, written) = mpsc::channel::<StdoutLine>(LINE_BUFFER);
    let (log, logged) = mpsc::channel::<String>(LINE_BUFFER);
    let to_stdout = args.forward.is_none() || args.stdout;
    let outputs = Outputs { stdout: to_stdout.then_some(lines), forward: forward.clone() };
    let app = App::new(
        verifiers.clone(),
        Pipeline::new(&stores, outputs),
        Arc::clone(&stores.records),
        routes::Signing { public_url: args.public_url.clone(), trust_forwarded: args.trust_forwarded },
        usize::try_from(args.max_concurrency).unwrap_or(256),
        (!args.quiet).then_some(log),
    );
    banner(err, address, &verifiers, &args, &url, settles, to_stdout);
    run_until(listener, app, stop, Channels { written, logged }, out, err).await
}

/// The receivers of the lines the requests write: stdout's, flushed on demand, and the log's.
struct Channels {
    written: mpsc::Receiver<StdoutLine>,
    logged: mpsc::Receiver<String>,
}

/// Serves `app` on `listener`, writing the requests' lines to `out` and `err`, until `stop`
/// completes and the requests in flight end (at most [`DRAIN`] later).
async fn run_until(
    listener: tokio::net::TcpListener,
    app: App,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
    channels: Channels,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let Channels { mut written, mut logged } = channels;
    let (stopping, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = sms_sdk::webhook::axum::serve(listener, routes::router(app))
        .header_read_timeout(routes::READ_TIMEOUT)
        .body_read_timeout(routes::READ_TIMEOUT)
        .with_graceful_shutdown(async {
            let _ = stopped.await;
        });
    let mut server = tokio::spawn(std::future::IntoFuture::into_future(server));
    let mut stop = std::pin::pin!(stop);
    let mut stop_sent = Some(stopping);
    let mut drain_until: Option<tokio::time::Instant> = None;
    loop {
        let drain = async {
            match drain_until {
                Some(until) => tokio::time::sleep_until(until).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            Some((line, flushed)) = written.recv() => {
                let ok = out.write_all(&line).and_then(|()| out.flush()).is_ok();
                let _ = flushed.send(ok);
            }
            Some(line) = logged.recv() => {
                let _ = writeln!(err, "{line}");
            }
            () = &mut stop, if stop_sent.is_some() => {
                let _ = writeln!(err, "stopping: finishing the requests in flight (at most {} s)", DRAIN.as_secs());
                if let Some(stopping) = stop_sent.take() {
                    let _ = stopping.send(());
                }
                drain_until = Some(tokio::time::Instant::now() + DRAIN);
            }
            _ = &mut server => break,
            () = drain => {
                let _ = writeln!(err, "stopping: requests still in flight after {} s were cut off", DRAIN.as_secs());
                server.abort();
                break;
            }
        }
    }
    // Lines the last requests left.
    while let Ok((line, flushed)) = written.try_recv() {
        let _ = flushed.send(out.write_all(&line).and_then(|()| out.flush()).is_ok());
    }
    while let Ok(line) = logged.try_recv() {
        let _ = writeln!(err, "{line}");
    }
    let _ = writeln!(err, "stopped");
    EXIT_OK
}

/// The start banner on `err`: where it listens, the routes mounted, the signed URL, the store,
/// whether it can settle, and where events go.
fn banner(
    err: &mut dyn Write,
    address: SocketAddr,
    verifiers: &Verifiers,
    args: &ServeArgs,
    store: &str,
    settles: bool,
    to_stdout: bool,
) {
    let _ = writeln!(err, "sms-sdk serve: listening on http://{address}");
    for provider in Provider::ALL {
        if let Some(variable) = verifiers.variable(provider) {
            let said = if variable.contains(" set") { variable.to_owned() } else { format!("{variable} set") };
            let _ = writeln!(err, "  POST /webhooks/{} ({said})", provider.as_str());
        } else {
            let variable = crate::webhook::secret_variables(provider);
            let _ = writeln!(err, "  (no route for {}: {variable} is not set)", provider.as_str());
        }
    }
    let _ = writeln!(err, "  GET /healthz, /readyz, /metrics");
    let signed = match (&args.public_url, args.trust_forwarded) {
        (Some(url), _) => format!("{} + the request's path and query", redact_url(url.trim_end_matches('/'))),
        (None, true) => "X-Forwarded-Proto/Host or Forwarded (trusted), else the Host header, + path and query".into(),
        (None, false) => "http:// + the Host header + path and query (behind a proxy, give --public-url)".into(),
    };
    let _ = writeln!(err, "signed URL: {signed}");
    let _ = writeln!(err, "store: {}", redact_url(store));
    let _ = if settles {
        writeln!(err, "settlement: on ({CORRELATION_SECRET_VARIABLE} is set; sends with it carry references)")
    } else {
        writeln!(
            err,
            "settlement: only sends that carried a reference ({CORRELATION_SECRET_VARIABLE} is not set here: set it for \
             send and batch, with a status callback URL)"
        )
    };
    let mut outputs = Vec::new();
    if to_stdout {
        outputs.push("stdout (JSON lines)".to_owned());
    }
    if let Some(url) = &args.forward {
        outputs.push(format!("{} (Standard Webhooks, {FORWARD_SECRET_VARIABLE})", redact_url(url)));
    }
    let _ = writeln!(err, "events to: {}", outputs.join(" and "));
}
