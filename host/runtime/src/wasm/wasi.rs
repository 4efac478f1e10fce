//! The WASI a plugin gets: every WASI 0.2 interface linked, so components built with any
//! toolchain's defaults load and run, and none of them granting anything.
//!
//! Python's and JavaScript's component toolchains, and Rust's `std`, call WASI while they
//! start and whenever a guest reads the time or hashes a map. Linking those imports to traps
//! (as sluice once did) made their default builds fault on the first call; linking the real
//! thing would hand a plugin the daemon's environment, files and network. What is linked here
//! is `wasmtime-wasi` with a context that holds nothing:
//!
//! * no environment variables, arguments, working directory or preopened directories, so every
//!   path fails to resolve;
//! * no network: TCP, UDP and name lookup are refused;
//! * stdin is empty, stdout and stderr are discarded (the `host` interface's `log` is how a
//!   plugin speaks);
//! * the clocks stand still at the Unix epoch and randomness comes from a generator with a fixed
//!   seed, so a fresh instance sees exactly what the last one saw and a replay stays reproducible;
//! * sleeping traps: a clock subscription would block the scheduling thread on real time, which
//!   no fuel budget measures.
//!
//! WASI 0.2 imports of any patch version resolve to these definitions (wasmtime matches
//! semver-compatible versions). Any other import (JavaScript toolchains' default builds import
//! `wasi:http`, for instance) is linked to a trap, so the component loads and faults only if it
//! calls one; stubbing the WASI ones too would shadow the semver match, so they are left out.

use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker, ResourceTable, ResourceType};
use wasmtime_wasi::clocks::{HostMonotonicClock, HostWallClock};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder};

/// The WASI package version this host defines; guests importing any 0.2.x resolve to it.
const WASI_VERSION: &str = "0.2.12";

/// Resources (streams, pollables) a plugin may hold at once. Each costs host memory the
/// memory cap does not see, so a guest minting them in a loop is stopped here.
const MAX_RESOURCES: usize = 1024;

/// Bytes of randomness one call may ask for.
const MAX_RANDOM_BYTES: u64 = 64 << 10;

/// The seed of every instance's randomness: fixed, so fresh instances and replays agree.
const SEED: u64 = 0x5_1u64 << 56 | 0x1ce;

/// A context that grants nothing (see the module's note).
pub(crate) fn context() -> WasiCtx {
    WasiCtxBuilder::new()
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .secure_random(StdRng::seed_from_u64(SEED))
        .insecure_random(StdRng::seed_from_u64(SEED))
        .insecure_random_seed(u128::from(SEED))
        .max_random_size(MAX_RANDOM_BYTES)
        .wall_clock(StillClock)
        .monotonic_clock(StillClock)
        .build()
}

/// The table a plugin's WASI resources live in, bounded.
pub(crate) fn table() -> ResourceTable {
    let mut table = ResourceTable::new();
    table.set_max_capacity(MAX_RESOURCES);
    table
}

/// Links every WASI 0.2 interface into `linker`, with sleeping replaced by a trap.
pub(crate) fn add_to_linker<T: wasmtime_wasi::WasiView + 'static>(
    linker: &mut Linker<T>,
) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_sync(linker)?;
    linker.allow_shadowing(true);
    let mut clock = linker.instance(&format!("wasi:clocks/monotonic-clock@{WASI_VERSION}"))?;
    for name in ["subscribe-duration", "subscribe-instant"] {
        clock.func_new(name, |_, _, _, _| {
            Err(wasmtime::Error::msg(
                "a plugin may not sleep: it would block the scheduling thread",
            ))
        })?;
    }
    linker.allow_shadowing(false);
    Ok(())
}

/// The WASI 0.2 packages [`add_to_linker`] defines.
const LINKED_PACKAGES: &[&str] = &["cli", "clocks", "filesystem", "io", "random", "sockets"];

/// Whether the import `name` is a WASI 0.2 interface of a package this host links.
fn is_linked_wasi(name: &str) -> bool {
    let Some((path, version)) = name.split_once('@') else {
        return false;
    };
    let package = path
        .strip_prefix("wasi:")
        .and_then(|p| p.split_once('/'))
        .map(|(package, _)| package);
    version.starts_with("0.2.") && package.is_some_and(|p| LINKED_PACKAGES.contains(&p))
}

/// Links every import of `component` that is neither WASI 0.2 nor already defined to a trap
/// (functions) or an empty host resource (resource types), as wasmtime's
/// `define_unknown_imports_as_traps` does, but leaving WASI 0.2 to the semver match.
pub(crate) fn trap_other_imports<T: 'static>(
    linker: &mut Linker<T>,
    component: &Component,
) -> wasmtime::Result<()> {
    let engine = component.engine().clone();
    // Another package's import may re-export a WASI resource (`wasi:http/types` uses
    // `wasi:io/streams`' `input-stream`): its stub must be the type WASI is linked with.
    let mut wasi_resources = Vec::new();
    for (name, item) in component.component_type().imports(&engine) {
        if let ComponentItem::ComponentInstance(instance) = item.ty
            && is_linked_wasi(name)
        {
            let interface = name.split_once('@').map_or(name, |(i, _)| i);
            for (export, item) in instance.exports(&engine) {
                if let (ComponentItem::Resource(ty), Some(host)) =
                    (item.ty, wasi_resource(interface, export))
                {
                    wasi_resources.push((ty, host));
                }
            }
        }
    }
    for (name, item) in component.component_type().imports(&engine) {
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            continue;
        };
        if is_linked_wasi(name) || name.starts_with("sluice:policy/") {
            continue;
        }
        let mut stubs = linker.instance(name)?;
        for (export, item) in instance.exports(&engine) {
            match item.ty {
                ComponentItem::ComponentFunc(_) => {
                    let what = format!("{name}#{export}");
                    stubs.func_new(export, move |_, _, _, _| {
                        Err(wasmtime::Error::msg(format!(
                            "{what}: this import is not granted to plugins"
                        )))
                    })?;
                }
                ComponentItem::Resource(ty) => {
                    let host = wasi_resources
                        .iter()
                        .find(|(t, _)| *t == ty)
                        .map_or(ResourceType::host::<()>(), |(_, h)| *h);
                    stubs.resource(export, host, |_, _| Ok(()))?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The host type WASI's resource `interface#resource` is linked with, for those other
/// packages re-export.
fn wasi_resource(interface: &str, resource: &str) -> Option<ResourceType> {
    use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable, IoError};
    Some(match (interface, resource) {
        ("wasi:io/poll", "pollable") => ResourceType::host::<DynPollable>(),
        ("wasi:io/streams", "input-stream") => ResourceType::host::<DynInputStream>(),
        ("wasi:io/streams", "output-stream") => ResourceType::host::<DynOutputStream>(),
        ("wasi:io/error", "error") => ResourceType::host::<IoError>(),
        _ => return None,
    })
}

/// A clock that always reads zero: the Unix epoch, or the monotonic origin.
struct StillClock;

impl HostWallClock for StillClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for StillClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }

    fn now(&self) -> u64 {
        0
    }
}
