//! A local emulator of the Twilio, Telnyx, Plivo and Vonage send APIs, with fault injection and
//! signed status webhooks, for tests and offline runs.
//!
//! Not built yet: this crate is a placeholder in the workspace so the layout is stable.
