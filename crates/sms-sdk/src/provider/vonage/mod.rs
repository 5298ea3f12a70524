//! vonage
