//! Colour: whether a stream gets it (`--color`, `NO_COLOR`, and whether the stream is a
//! terminal), and painting a word. When colour is off, text passes through unchanged.

use std::borrow::Cow;

use clap::ColorChoice;

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
/// styles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Output {
    /// `--json`.
    pub(crate) json: bool,
    /// The text's styles.
    pub(crate) streams: Streams,
}

/// The `--color` the arguments ask for (the last one before `--`), read ahead of parsing so
/// that clap's own help and errors follow it; anything unreadable counts as `auto` (clap then
/// reports it).
pub(crate) fn requested(args: &[String]) -> ColorChoice {
    let mut choice = ColorChoice::Auto;
    let mut words = args.iter().take_while(|a| *a != "--");
    while let Some(word) = words.next() {
        let value = match word.strip_prefix("--color") {
            Some("") => words.next().map(String::as_str),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        if let Some(value) = value {
            choice = match value {
                "always" => ColorChoice::Always,
                "never" => ColorChoice::Never,
                _ => ColorChoice::Auto,
            };
        }
    }
    choice
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
    }
}
