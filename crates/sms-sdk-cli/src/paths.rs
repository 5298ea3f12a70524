//! Where the command keeps its state: the user's data directory, so that a key is the same key
//! wherever the command runs, with real and emulated sends in separate stores.

use std::path::PathBuf;

use crate::Env;

/// The variables that locate the data directory.
pub(crate) const VARIABLES: [&str; 4] = ["XDG_DATA_HOME", "HOME", "APPDATA", "LOCALAPPDATA"];

/// The store file of real sends.
const REAL_STORE: &str = "state.db";
/// The store file of sends through the embedded emulator.
const EMULATOR_STORE: &str = "emulator.db";

/// Which sends a store holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sends {
    /// Sends to real providers (or any configured endpoint).
    Real,
    /// Sends through the embedded emulator.
    Emulated,
}

/// The user's data directory for sms-sdk: `$XDG_DATA_HOME/sms-sdk`, else the platform's
/// (`~/.local/share/sms-sdk` on Linux, `~/Library/Application Support/sms-sdk` on macOS,
/// `%LOCALAPPDATA%\sms-sdk` on Windows). Only absolute paths count.
pub(crate) fn data_dir(env: &Env) -> Option<PathBuf> {
    let absolute = |name: &str| env.get(name).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(xdg) = absolute("XDG_DATA_HOME") {
        return Some(xdg.join("sms-sdk"));
    }
    let base = if cfg!(windows) {
        absolute("LOCALAPPDATA").or_else(|| absolute("APPDATA"))?
    } else if cfg!(target_os = "macos") {
        absolute("HOME")?.join("Library").join("Application Support")
    } else {
        absolute("HOME")?.join(".local").join("share")
    };
    Some(base.join("sms-sdk"))
}

/// The store URL for `sends` when none is named: `--store`, else `SMS_SDK_STORE`, else the
/// SQLite file in the data directory (`state.db`, or `emulator.db` for emulated sends).
///
/// # Errors
/// A message when no data directory can be found.
pub(crate) fn store_url(named: Option<&str>, env: &Env, sends: Sends) -> Result<String, String> {
    if let Some(url) = named.or_else(|| env.get("SMS_SDK_STORE")) {
        return Ok(url.to_owned());
    }
    let dir = data_dir(env).ok_or_else(|| {
        "no data directory for the default store: set XDG_DATA_HOME or HOME, or name a store with --store or \
         SMS_SDK_STORE"
            .to_owned()
    })?;
    let file = match sends {
        Sends::Real => REAL_STORE,
        Sends::Emulated => EMULATOR_STORE,
    };
    Ok(format!("sqlite:{}", dir.join(file).display()))
}

/// The store of sends through an emulator, `emulator.db` in the data directory: what the
/// standalone emulator's export lines name, so that its sends never share the real store.
pub(crate) fn emulator_store_url(env: &Env) -> Option<String> {
    data_dir(env).map(|dir| format!("sqlite:{}", dir.join(EMULATOR_STORE).display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_store_lives_in_the_data_directory() {
        let env: Env = [("HOME", "/home/ada")].into_iter().collect();
        let expected = if cfg!(target_os = "macos") {
            "sqlite:/home/ada/Library/Application Support/sms-sdk/state.db"
        } else {
            "sqlite:/home/ada/.local/share/sms-sdk/state.db"
        };
        if !cfg!(windows) {
            assert_eq!(store_url(None, &env, Sends::Real).unwrap(), expected);
        }
        let env: Env = [("HOME", "/home/ada"), ("XDG_DATA_HOME", "/data")].into_iter().collect();
        assert_eq!(store_url(None, &env, Sends::Real).unwrap(), "sqlite:/data/sms-sdk/state.db");
        assert_eq!(store_url(None, &env, Sends::Emulated).unwrap(), "sqlite:/data/sms-sdk/emulator.db");
        let env: Env = [("XDG_DATA_HOME", "/data"), ("SMS_SDK_STORE", "memory")].into_iter().collect();
        assert_eq!(store_url(None, &env, Sends::Emulated).unwrap(), "memory");
        assert_eq!(store_url(Some("redis://h/0"), &env, Sends::Real).unwrap(), "redis://h/0");
    }

    #[test]
    fn relative_directories_do_not_count() {
        let env: Env = [("XDG_DATA_HOME", "relative"), ("HOME", "also-relative")].into_iter().collect();
        assert!(store_url(None, &env, Sends::Real).is_err());
        assert!(store_url(None, &Env::default(), Sends::Real).is_err());
    }
}
