//! telnyx
