//! Infobip wire tests (in progress).
