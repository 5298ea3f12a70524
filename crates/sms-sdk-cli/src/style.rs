//! Colour: whether a stream gets it (`--color`, `NO_COLOR`, and whether the stream is a
//! terminal), and painting a word. When colour is off, text passes through unchanged.

use std::borrow::Cow;

use clap::{ColorChoice, ValueEnum as _};

use crate::Env;

/// The colours the command uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Colour {
    /// Accepted, supported, verified.
    Green,
    /// Rejected, failed, not supported.
    Red,
    /// Unknown: the message may have been sent.
    Yellow,
}

impl Colour {
    fn code(self) -> &'static str {
        match self {
            Self::Green => "\x1b[32m",
            Self::Red => "\x1b[31m",
            Self::Yellow => "\x1b[33m",
        }
    }
}

/// Whether one output stream is coloured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Style {
    on: bool,
}

impl Style {
    /// The style of a stream: `always` and `never` decide; `auto` colours a terminal unless
    /// `NO_COLOR` is set to anything (<https://no-color.org>).
    pub(crate) fn decide(when: ColorChoice, env: &Env, terminal: bool) -> Self {
        let on = match when {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && !env.is_set("NO_COLOR"),
        };
        Self { on }
    }

    /// Whether the stream is coloured.
    pub(crate) fn is_on(self) -> bool {
        self.on
    }

    /// `text` in `colour`, or unchanged when colour is off.
    pub(crate) fn paint(self, text: &str, colour: Colour) -> Cow<'_, str> {
        if self.on { Cow::Owned(format!("{}{text}\x1b[0m", colour.code())) } else { Cow::Borrowed(text) }
    }
}

/// The styles of standard output and standard error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Streams {
    /// Standard output's.
    pub(crate) out: Style,
    /// Standard error's.
    pub(crate) err: Style,
}

/// How a command prints its result: one JSON object (never coloured), or text in the streams'
/// styles. A command's flags flatten it: `--json`, and the styles the dispatch sets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args)]
pub(crate) struct Output {
    /// Print exactly one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
    /// How the output is styled (set by the dispatch, not a flag).
    #[arg(skip)]
    pub(crate) streams: Streams,
}

/// A `--color` flag at the start of `words` (`--color WHEN` or `--color=WHEN`): its value, when
/// it has one, and the words after the flag; `None` when `words` does not start with one.
fn colour_flag(words: &[String]) -> Option<(Option<&str>, &[String])> {
    let (first, rest) = words.split_first()?;
    match first.strip_prefix("--color")? {
        "" => Some(match rest.split_first() {
            Some((when, after)) => (Some(when.as_str()), after),
            None => (None, rest),
        }),
        tail => tail.strip_prefix('=').map(|when| (Some(when), rest)),
    }
}

/// The colour choice `when` names (`auto`, `always` or `never`, as clap reads them).
fn choice(when: &str) -> Option<ColorChoice> {
    ColorChoice::from_str(when, false).ok()
}

/// The arguments after the `--color WHEN` flags that come before a command's name (only those
/// with a valid `WHEN`: clap reports an invalid one).
pub(crate) fn after_leading_flags(args: &[String]) -> &[String] {
    let mut words = args;
    while let Some((Some(when), rest)) = colour_flag(words)
        && choice(when).is_some()
    {
        words = rest;
    }
    words
}

/// The `--color` the arguments ask for (the last one before `--`), read ahead of parsing so
/// that clap's own help and errors follow it; anything unreadable counts as `auto` (clap then
/// reports it).
pub(crate) fn requested(args: &[String]) -> ColorChoice {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let mut words = args.get(..end).unwrap_or_default();
    let mut requested = ColorChoice::Auto;
    while !words.is_empty() {
        words = match colour_flag(words) {
            Some((when, after)) => {
                if let Some(when) = when {
                    requested = choice(when).unwrap_or(ColorChoice::Auto);
                }
                after
            }
            None => words.get(1..).unwrap_or_default(),
        };
    }
    requested
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn auto_colours_terminals_unless_no_color() {
        let plain = Env::default();
        let no_color: Env = [("NO_COLOR", "1")].into_iter().collect();
        assert!(Style::decide(ColorChoice::Auto, &plain, true).is_on());
        assert!(!Style::decide(ColorChoice::Auto, &plain, false).is_on());
        assert!(!Style::decide(ColorChoice::Auto, &no_color, true).is_on());
        assert!(Style::decide(ColorChoice::Always, &no_color, false).is_on());
        assert!(!Style::decide(ColorChoice::Never, &plain, true).is_on());
        let empty: Env = [("NO_COLOR", "")].into_iter().collect();
        assert!(Style::decide(ColorChoice::Auto, &empty, true).is_on());
    }

    #[test]
    fn plain_text_is_unchanged() {
        assert_eq!(Style::default().paint("accepted", Colour::Green), "accepted");
        assert_eq!(Style { on: true }.paint("accepted", Colour::Green), "\x1b[32maccepted\x1b[0m");
    }

    #[test]
    fn the_requested_colour_is_read_ahead() {
        assert_eq!(requested(&strings(&["send", "--color", "never"])), ColorChoice::Never);
        assert_eq!(requested(&strings(&["--color=always", "send"])), ColorChoice::Always);
        assert_eq!(requested(&strings(&["--color=always", "--color", "never"])), ColorChoice::Never);
        assert_eq!(requested(&strings(&["send", "--", "--color", "never"])), ColorChoice::Auto);
        assert_eq!(requested(&strings(&["--color"])), ColorChoice::Auto);
        assert_eq!(requested(&strings(&["--color=always", "--color"])), ColorChoice::Always);
        assert_eq!(requested(&strings(&["--color=always", "--color", "bogus"])), ColorChoice::Auto);
        assert_eq!(requested(&strings(&["--color", "--color=never"])), ColorChoice::Auto);
    }

    #[test]
    fn leading_colour_flags_are_skipped() {
        let after = |words: &[&str]| after_leading_flags(&strings(words)).to_vec();
        assert_eq!(after(&["--color", "never", "--color=always", "doctor", "x"]), strings(&["doctor", "x"]));
        assert_eq!(after(&["--color", "bogus", "doctor"]), strings(&["--color", "bogus", "doctor"]));
        assert_eq!(after(&["--color=", "doctor"]), strings(&["--color=", "doctor"]));
        assert_eq!(after(&["--color"]), strings(&["--color"]));
        assert_eq!(after(&["doctor", "--color", "never"]), strings(&["doctor", "--color", "never"]));
    }
}
