//! The emulator's tests, in one test binary (one link instead of one per file), each module over
//! real HTTP on loopback.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

mod common;

mod agreement;
mod aws;
mod bounds;
mod examples;
mod http;
mod infobip_bandwidth;
mod lifecycle;
mod observe;
mod send;
mod webhooks;
