//! What can go wrong loading a plugin, and how a call into one can fault.

use std::path::PathBuf;

use sluice_policy::ContractError;

/// A plugin that could not be loaded, checked or smoke-called; the previous one stays.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{path}: cannot read plugin: {source}")]
    Read {
        /// The plugin file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A plugin file refused before anything in it was loaded or run: a symlink, not a regular
    /// file, too big, or a native library not as trusted as the daemon.
    #[error("{path}: refused before loading: {reason}")]
    Refused {
        /// The plugin file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A file whose first bytes are neither a component's nor a native library's.
    #[error("{path}: not a valid component or native library: {reason}")]
    Format {
        /// The plugin file.
        path: PathBuf,
        /// What its first bytes are.
        reason: String,
    },
    /// Not a component wasmtime accepts.
    #[error("{origin}: not a valid component: {reason}")]
    Compile {
        /// Where the plugin came from.
        origin: String,
        /// Wasmtime's reason.
        reason: String,
    },
    /// The component targets another world or an unsupported version.
    #[error("{origin}: {reason}")]
    World {
        /// Where the plugin came from.
        origin: String,
        /// What it exports and what was expected.
        reason: String,
    },
    /// Instantiation failed (unsatisfied imports, start trap).
    #[error("{origin}: cannot instantiate: {reason}")]
    Instantiate {
        /// Where the plugin came from.
        origin: String,
        /// Why.
        reason: String,
    },
    /// A native library that cannot be used.
    #[error("{origin}: {reason}")]
    Native {
        /// The library path.
        origin: String,
        /// Why.
        reason: String,
    },
    /// The smoke call faulted or broke the contract.
    #[error("{origin}: smoke call failed: {fault}")]
    Smoke {
        /// Where the plugin came from.
        origin: String,
        /// The fault.
        fault: Fault,
    },
    /// A plugin name that is neither a bundled policy nor a file.
    #[error(
        "unknown {kind} plugin {name}: expected one of {known} or a path to a .wasm or native library"
    )]
    Unknown {
        /// Plugin kind.
        kind: &'static str,
        /// The name given.
        name: String,
        /// Names of the bundle for that kind.
        known: String,
    },
}

/// A call into a plugin that did not produce a usable answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Fault {
    /// The guest trapped (unreachable, out-of-bounds, a capability it is not granted…).
    #[error("trap: {0}")]
    Trap(String),
    /// The per-call fuel budget ran out (an endless or too long computation).
    #[error("budget exhausted: more than {0} fuel units in one call")]
    Budget(u64),
    /// The guest tried to grow its memory past the cap.
    #[error("memory cap of {0} bytes exceeded")]
    Memory(usize),
    /// A native or built-in policy panicked.
    #[error("panic: {0}")]
    Panic(String),
    /// The answer broke the contract of the function.
    #[error("answer breaks the contract: {0}")]
    Contract(#[from] ContractError),
}
