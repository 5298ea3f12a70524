//! plivo
