//! A spinner on standard error for the waits of the command that may last over a second (the
//! embedded emulator's start, a send and its rate-limit backoff, the delivery webhooks,
//! provider lookups).
//!
//! It is drawn only when standard error is a terminal and the output is not JSON, and only once
//! the wait has lasted [`SHOW_AFTER`]: a quick wait draws nothing. It is cleared as soon as the
//! wait ends, before the command prints anything else, so what the command prints is the same
//! with or without it.

use std::borrow::Cow;
use std::future::Future;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::Env;

/// How long a wait lasts before its spinner is drawn.
pub(crate) const SHOW_AFTER: Duration = Duration::from_secs(1);
/// The message while a store connects.
pub(crate) const CONNECTING: &str = "connecting to the store";
/// How often the spinner turns.
const TICK: Duration = Duration::from_millis(100);

/// Whether the command may draw spinners: standard error is a terminal and the output is not
/// JSON.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spinners {
    enabled: bool,
}

impl Spinners {
    /// Spinners for a command run in `env`, printing JSON when `json`.
    pub(crate) fn new(env: &Env, json: bool) -> Self {
        Self { enabled: env.stderr_is_terminal() && !json }
    }

    /// Whether anything may be drawn on standard error (a batch's progress bar too).
    pub(crate) fn enabled(self) -> bool {
        self.enabled
    }

    /// A spinner saying `message`, not drawn yet.
    pub(crate) fn spinner(self, message: impl Into<Cow<'static, str>>) -> Spinner {
        let bar = ProgressBar::hidden();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message);
        Spinner { bar, enabled: self.enabled }
    }

    /// Awaits `future`, with a spinner saying `message` once it has lasted [`SHOW_AFTER`].
    pub(crate) async fn during<F: Future>(self, message: impl Into<Cow<'static, str>>, future: F) -> F::Output {
        self.spinner(message).during(future).await
    }
}

/// One wait's spinner. Its message can change while it waits ([`Spinner::handle`]); it is
/// cleared when the wait ends or the spinner is dropped.
#[derive(Debug)]
pub(crate) struct Spinner {
    bar: ProgressBar,
    enabled: bool,
}

impl Spinner {
    /// A handle to change the message from elsewhere (a client hook), cheap to clone.
    pub(crate) fn handle(&self) -> SpinnerMessage {
        SpinnerMessage(self.bar.clone())
    }

    /// Awaits `future`, drawing the spinner once it has lasted [`SHOW_AFTER`], and clears it.
    pub(crate) async fn during<F: Future>(self, future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        if !self.enabled {
            return future.await;
        }
        tokio::select! {
            biased;
            output = &mut future => return output,
            () = tokio::time::sleep(SHOW_AFTER) => {}
        }
        self.bar.set_draw_target(ProgressDrawTarget::stderr());
        self.bar.enable_steady_tick(TICK);
        future.await
        // Dropping `self` clears the spinner.
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Changes a spinner's message.
#[derive(Debug, Clone)]
pub(crate) struct SpinnerMessage(ProgressBar);

impl SpinnerMessage {
    /// Sets the message.
    pub(crate) fn set(&self, message: impl Into<Cow<'static, str>>) {
        self.0.set_message(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn off_the_terminal_the_wait_is_only_awaited() {
        let spinners = Spinners::new(&Env::default(), false);
        assert!(!spinners.enabled);
        let spinner = spinners.spinner("waiting");
        let bar = spinner.bar.clone();
        let value = spinner.during(async {
            tokio::time::sleep(SHOW_AFTER * 3).await;
            7
        });
        assert_eq!(value.await, 7);
        assert!(bar.is_hidden());
    }

    #[test]
    fn never_with_json() {
        let terminal = Env::default().with_terminals(true, true);
        assert!(Spinners::new(&terminal, false).enabled);
        assert!(!Spinners::new(&terminal, true).enabled);
    }

    #[tokio::test(start_paused = true)]
    async fn a_quick_wait_draws_nothing() {
        let spinner = Spinners { enabled: true }.spinner("waiting");
        let bar = spinner.bar.clone();
        spinner.during(tokio::time::sleep(SHOW_AFTER / 2)).await;
        assert!(bar.is_hidden(), "never moved to standard error");
    }
}
