//! Bandwidth wire tests (in progress).
