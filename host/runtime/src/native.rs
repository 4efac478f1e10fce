//! Trusted in-house plugins as native libraries, through `libloading`: no sandbox, no limits,
//! the same traits. Also the baseline the WebAssembly path is measured against.

use sluice_policy::Settings;
use sluice_policy::native::{AbiFn, NATIVE_ABI, NativePlugin, NewFn, SYMBOL_ABI, SYMBOL_NEW};

use crate::error::LoadError;
use crate::plugin_file::{PluginFile, PluginFormat};

/// Loads a native plugin library and builds its policy from `settings`.
///
/// `dlopen` runs a library's constructors, so the file is checked first (an ELF library for
/// this host, owned by root or the daemon's user, not writable by others, in a directory that
/// is not either) and then loaded through its open descriptor, so the file checked is the file
/// loaded even if its path is swapped in between.
///
/// The library is never unloaded: code of a library can be live in a call or a thread-local
/// long after its last object is dropped, and a process holds few such libraries.
pub fn load(file: PluginFile, settings: &Settings) -> Result<NativePlugin, LoadError> {
    let origin = file.path().display().to_string();
    if file.format() != PluginFormat::Native {
        return Err(LoadError::Native {
            origin,
            reason: "is a WebAssembly component, not a native library".into(),
        });
    }
    file.check_trusted()?;
    let native = |reason: String| LoadError::Native {
        origin: origin.clone(),
        reason,
    };
    // SAFETY: loading runs the library's initialisers; native plugins are trusted by
    // configuration, which is the documented contract of this path, and the file was checked
    // above to be as trusted as the daemon.
    let library = unsafe { libloading::Library::new(file.descriptor_path()) }
        .map_err(|e| native(format!("cannot load library: {e}")))?;
    file.keep_open();
    let library: &'static libloading::Library = Box::leak(Box::new(library));
    // SAFETY: the symbol's type is the one `sluice-sdk` exports it with.
    let abi = unsafe { library.get::<AbiFn>(SYMBOL_ABI) }
        .map_err(|_| native("not a sluice plugin library: no sluice_native_abi symbol".into()))?;
    let mut len = 0usize;
    // SAFETY: the function returns a pointer to a static string and its length.
    let theirs = unsafe {
        let ptr = abi(&mut len);
        std::str::from_utf8(std::slice::from_raw_parts(ptr, len)).unwrap_or("<not utf-8>")
    };
    if theirs != NATIVE_ABI {
        return Err(native(format!(
            "built for `{theirs}`, this host needs `{NATIVE_ABI}`; rebuild it with this sluice and rustc"
        )));
    }
    // SAFETY: the ABI strings match, so the library was built by this compiler against this
    // version of sluice-policy and `NativePlugin` has the same layout on both sides.
    let new = unsafe { library.get::<NewFn>(SYMBOL_NEW) }
        .map_err(|_| native("no sluice_native_new symbol".into()))?;
    let plugin = unsafe { new(settings, forward_log) };
    if plugin.is_null() {
        return Err(native(
            "the plugin panicked while reading its settings".into(),
        ));
    }
    // SAFETY: a non-null pointer from `sluice_native_new` is a leaked `Box<NativePlugin>`.
    Ok(*unsafe { Box::from_raw(plugin) })
}

/// The log sink native and built-in policies write to, forwarded into `tracing`.
extern "C" fn forward_log(level: u8, message: *const u8, len: usize) {
    // SAFETY: the SDK passes a pointer and length of a live `&str`.
    let text = unsafe { std::str::from_utf8(std::slice::from_raw_parts(message, len)) }
        .unwrap_or("<not utf-8>");
    match level {
        0 => tracing::error!(plugin = "native", "{text}"),
        1 => tracing::warn!(plugin = "native", "{text}"),
        2 => tracing::info!(plugin = "native", "{text}"),
        3 => tracing::debug!(plugin = "native", "{text}"),
        _ => tracing::trace!(plugin = "native", "{text}"),
    }
}
