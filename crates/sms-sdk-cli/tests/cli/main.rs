//! The command's tests, in one test binary (one link instead of one per file): each module tests
//! one part of the command in-process through `sms_sdk_cli::run` or as the built `sms-sdk` binary.
//! `tests/arguments.rs` stays a binary of its own: it counts allocations with its own global
//! allocator.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

mod common;

mod batch;
mod chaos;
mod commands;
mod completions;
mod doctor;
mod embedded;
mod emulator_command;
mod help;
mod operator;
mod opt_outs;
mod reconcile;
mod redaction;
mod safety;
mod serve;
mod servers;
mod stores;
mod suppression;
mod telling;
mod verify_emulator;
mod webhook_verify;
