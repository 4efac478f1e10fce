//! One sandboxed instance of a component: its store, memory cap, fuel budget and host imports.
//!
//! A trap poisons a component instance, so after any fault the next call starts from a fresh
//! store and instance (tens of microseconds with `InstancePre`); policies are stateless between
//! passes by contract, so nothing is lost that the host cannot hand the fresh instance again
//! (the priority world's cluster: see [`WasmInstance::live_incarnation`]).

use sluice_policy::Settings;
use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, ResourceLimiter, Store, Trap};

use crate::compile::Compiled;
use crate::error::{Fault, LoadError};
use crate::limits::Limits;
use crate::wasm::bindings::priority::sluice::policy::host;

/// What the host keeps per store: the plugin's identity for logs, its settings, the memory cap,
/// and the WASI context that grants nothing ([`super::wasi`]).
pub struct HostState {
    plugin: String,
    settings: Settings,
    cap: MemoryCap,
    wasi: wasmtime_wasi::WasiCtx,
    table: wasmtime::component::ResourceTable,
}

impl wasmtime_wasi::WasiView for HostState {
    fn ctx(&mut self) -> wasmtime_wasi::WasiCtxView<'_> {
        wasmtime_wasi::WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

struct MemoryCap {
    bytes: usize,
    exceeded: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Refusing the growth (rather than trapping here) lets the guest see an allocation
        // failure; it then aborts, and the flag tells the fault apart from any other trap.
        if desired > self.bytes {
            self.exceeded = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

/// The contract's `host` interface: a log and the plugin's settings.
impl host::Host for HostState {
    fn log(&mut self, level: host::Level, message: String, fields: Vec<(String, String)>) {
        let level = match level {
            host::Level::Error => tracing::Level::ERROR,
            host::Level::Warn => tracing::Level::WARN,
            host::Level::Info => tracing::Level::INFO,
            host::Level::Debug => tracing::Level::DEBUG,
            host::Level::Trace => tracing::Level::TRACE,
        };
        self.log_line(level, &message, &fields);
    }

    fn settings(&mut self) -> Vec<host::Setting> {
        use sluice_policy::SettingValue as V;
        self.settings
            .0
            .iter()
            .map(|s| host::Setting {
                key: s.key.clone(),
                value: match &s.value {
                    V::Boolean(b) => host::SettingValue::Boolean(*b),
                    V::Integer(i) => host::SettingValue::Integer(*i),
                    V::Float(f) => host::SettingValue::Float(*f),
                    V::Text(t) => host::SettingValue::Text(t.clone()),
                },
            })
            .collect()
    }
}

impl HostState {
    /// One guest log line as a `tracing` event tagged with the plugin.
    fn log_line(&self, level: tracing::Level, message: &str, fields: &[(String, String)]) {
        let fields: String = fields.iter().map(|(k, v)| format!(" {k}={v}")).collect();
        let plugin = self.plugin.as_str();
        // `tracing` macros need the level as a constant, hence one arm per level.
        match level {
            tracing::Level::ERROR => tracing::error!(plugin, "{message}{fields}"),
            tracing::Level::WARN => tracing::warn!(plugin, "{message}{fields}"),
            tracing::Level::INFO => tracing::info!(plugin, "{message}{fields}"),
            tracing::Level::DEBUG => tracing::debug!(plugin, "{message}{fields}"),
            _ => tracing::trace!(plugin, "{message}{fields}"),
        }
    }
}

/// A world's generated bindings, as the instance wrapper needs them.
pub trait World: Sized + Send + 'static {
    /// The generated pre-instantiated form.
    type Pre: Clone + Send;
    /// Links the host imports and pre-instantiates the component.
    fn pre(linker: &mut Linker<HostState>, component: &Component) -> wasmtime::Result<Self::Pre>;
    /// Instantiates into a store.
    fn instantiate(pre: &Self::Pre, store: &mut Store<HostState>) -> wasmtime::Result<Self>;
}

/// Implements [`World`] for a generated world type `$world` with pre-instantiated form `$pre`:
/// its own imports (the `host` interface) and WASI 0.2 ([`super::wasi`]) linked, any other
/// import linked to a trap.
macro_rules! impl_world {
    ($world:ty, $pre:ident) => {
        impl crate::wasm::instance::World for $world {
            type Pre = $pre<crate::wasm::instance::HostState>;
            fn pre(
                linker: &mut wasmtime::component::Linker<crate::wasm::instance::HostState>,
                component: &wasmtime::component::Component,
            ) -> wasmtime::Result<Self::Pre> {
                <$world>::add_to_linker::<_, wasmtime::component::HasSelf<_>>(linker, |s| s)?;
                crate::wasm::wasi::add_to_linker(linker)?;
                crate::wasm::wasi::trap_other_imports(linker, component)?;
                $pre::new(linker.instantiate_pre(component)?)
            }
            fn instantiate(
                pre: &Self::Pre,
                store: &mut wasmtime::Store<crate::wasm::instance::HostState>,
            ) -> wasmtime::Result<Self> {
                pre.instantiate(store)
            }
        }
    };
}
pub(crate) use impl_world;

/// A live instance of a component of world `W`, re-created after any fault.
pub struct WasmInstance<W: World> {
    engine: Engine,
    /// Keeps the compiled component in the engine's in-memory cache while this instance lives,
    /// so a swap to the same bytes shares it (`pre` holds it too, but not as the cache sees).
    _compiled: Compiled,
    pre: W::Pre,
    plugin: String,
    settings: Settings,
    limits: Limits,
    live: Option<(Store<HostState>, W)>,
    incarnation: u64,
}

impl<W: World> WasmInstance<W> {
    /// Links and pre-instantiates `component`: `sluice:policy/host`, a WASI that grants
    /// nothing, and a trap for any other import, so no capability leaks.
    pub fn new(
        engine: &Engine,
        component: &Compiled,
        plugin: &str,
        settings: Settings,
        limits: Limits,
    ) -> Result<Self, LoadError> {
        let mut linker = Linker::new(engine);
        let pre = W::pre(&mut linker, component).map_err(|e| LoadError::Instantiate {
            origin: plugin.to_string(),
            reason: format!("{e:#}"),
        })?;
        let mut instance = Self {
            engine: engine.clone(),
            _compiled: component.clone(),
            pre,
            plugin: plugin.to_string(),
            settings,
            limits,
            live: None,
            incarnation: 0,
        };
        instance.ensure_live().map_err(|f| LoadError::Instantiate {
            origin: plugin.to_string(),
            reason: f.to_string(),
        })?;
        Ok(instance)
    }

    fn ensure_live(&mut self) -> Result<(), Fault> {
        if self.live.is_none() {
            let state = HostState {
                plugin: self.plugin.clone(),
                settings: self.settings.clone(),
                cap: MemoryCap {
                    bytes: self.limits.memory_bytes,
                    exceeded: false,
                },
                wasi: crate::wasm::wasi::context(),
                table: crate::wasm::wasi::table(),
            };
            let mut store = Store::new(&self.engine, state);
            store.limiter(|s| &mut s.cap);
            store
                .set_fuel(self.limits.fuel_per_call)
                .map_err(|e| Fault::Trap(format!("{e:#}")))?;
            let bindings =
                W::instantiate(&self.pre, &mut store).map_err(|e| self.classify(&store, e))?;
            self.live = Some((store, bindings));
            self.incarnation += 1;
        }
        Ok(())
    }

    /// Makes sure an instance is live and says which one: the number changes whenever a fresh
    /// instance replaces one a fault discarded, so state the host handed the old one (the
    /// priority world's cluster) is known to be gone.
    pub fn live_incarnation(&mut self) -> Result<u64, Fault> {
        self.ensure_live()?;
        Ok(self.incarnation)
    }

    /// Runs one call with a fresh fuel budget; any error drops the instance and is classified.
    pub fn call<R>(
        &mut self,
        f: impl FnOnce(&W, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, Fault> {
        self.ensure_live()?;
        let (store, bindings) = self.live.as_mut().expect("instance is live");
        store
            .set_fuel(self.limits.fuel_per_call)
            .map_err(|e| Fault::Trap(format!("{e:#}")))?;
        store.data_mut().cap.exceeded = false;
        match f(bindings, store) {
            Ok(r) => Ok(r),
            Err(e) => {
                let (store, _) = self.live.take().expect("instance is live");
                Err(self.classify(&store, e))
            }
        }
    }

    fn classify(&self, store: &Store<HostState>, e: wasmtime::Error) -> Fault {
        if store.data().cap.exceeded {
            return Fault::Memory(self.limits.memory_bytes);
        }
        if e.downcast_ref::<Trap>() == Some(&Trap::OutOfFuel) {
            return Fault::Budget(self.limits.fuel_per_call);
        }
        Fault::Trap(format!("{e:#}").replace('\n', " "))
    }
}
