//! The export macros: one per plugin kind, each making a policy type a component export on
//! `wasm32` and a `libloading` entry point in native builds with the `native` feature.

/// Exports a [`PriorityPolicy`](crate::PriorityPolicy) type as this crate's plugin.
#[macro_export]
macro_rules! export_priority {
    ($policy:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::wasm::priority::exports::sluice::policy::priority as w;
            struct SluiceExport;
            impl w::Guest for SluiceExport {
                fn set_cluster(cluster: w::Cluster) {
                    $crate::wasm::priority_glue::set_cluster(cluster)
                }
                fn add_associations(associations: ::std::vec::Vec<w::Association>) {
                    $crate::wasm::priority_glue::add_associations(associations)
                }
                fn compute(
                    now: i64,
                    usage: ::std::vec::Vec<f64>,
                    jobs: w::JobTable,
                    explain: bool,
                ) -> w::Priorities {
                    $crate::wasm::priority_glue::compute::<$policy>(now, usage, jobs, explain)
                }
                fn shares(now: i64, usage: ::std::vec::Vec<f64>) -> ::std::vec::Vec<w::Share> {
                    $crate::wasm::priority_glue::shares::<$policy>(now, usage)
                }
            }
            $crate::wasm::priority::export_priority_world!(SluiceExport with_types_in $crate::wasm::priority);
        };
        $crate::__export_native!(Priority, $policy);
    };
}

/// Exports a [`SelectionPolicy`](crate::SelectionPolicy) type as this crate's plugin.
#[macro_export]
macro_rules! export_selection {
    ($policy:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::wasm::selection::exports::sluice::policy::selection as w;
            struct SluiceExport;
            impl w::Guest for SluiceExport {
                fn set_nodes(nodes: w::NodeTable) {
                    $crate::wasm::selection_glue::set_nodes::<$policy>(nodes)
                }
                fn begin_pass(changes: ::std::vec::Vec<u64>) {
                    $crate::wasm::selection_glue::begin_pass::<$policy>(changes)
                }
                fn place(
                    req: w::JobRequest,
                    mode: w::Mode,
                    changes: ::std::option::Option<::std::vec::Vec<u64>>,
                ) -> ::std::option::Option<w::Placement> {
                    $crate::wasm::selection_glue::place::<$policy>(req, mode, changes)
                }
                fn release(job_id: u32, placement: w::Placement) {
                    $crate::wasm::selection_glue::release::<$policy>(job_id, placement)
                }
            }
            $crate::wasm::selection::export_selection_world!(SluiceExport with_types_in $crate::wasm::selection);
        };
        $crate::__export_native!(Selection, $policy);
    };
}

/// Exports a [`GresPolicy`](crate::GresPolicy) type as this crate's plugin.
#[macro_export]
macro_rules! export_gres {
    ($policy:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::wasm::gres::exports::sluice::policy::gres as w;
            struct SluiceExport;
            impl w::Guest for SluiceExport {
                fn validate(
                    nodes: ::std::vec::Vec<w::NodeConfig>,
                ) -> ::std::vec::Vec<::std::result::Result<(), ::std::string::String>> {
                    $crate::wasm::gres_glue::validate::<$policy>(nodes)
                }
                fn pick(
                    requests: ::std::vec::Vec<w::PickRequest>,
                ) -> ::std::vec::Vec<::std::vec::Vec<u32>> {
                    $crate::wasm::gres_glue::pick::<$policy>(requests)
                }
                fn env(
                    alloc: w::NodeDevices,
                    step: bool,
                ) -> ::std::vec::Vec<(::std::string::String, ::std::string::String)> {
                    $crate::wasm::gres_glue::env::<$policy>(alloc, step)
                }
            }
    $crate::wasm::gres::export_gres_world!(SluiceExport with_types_in $crate::wasm::gres);
        };
        $crate::__export_native!(Gres, $policy);
    };
}

/// Exports an [`HresPolicy`](crate::HresPolicy) type as this crate's plugin.
#[macro_export]
macro_rules! export_hres {
    ($policy:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::wasm::hres::exports::sluice::policy::hres as w;
            struct SluiceExport;
            impl w::Guest for SluiceExport {
                fn begin_pass(
                    resources: ::std::vec::Vec<w::Resource>,
                    layers: ::std::vec::Vec<w::Layer>,
                ) {
                    $crate::wasm::hres_glue::begin_pass::<$policy>(resources, layers)
                }
                fn eligible(
                    demands: ::std::vec::Vec<w::Demand>,
                    candidates: ::std::vec::Vec<u64>,
                ) -> ::std::vec::Vec<u64> {
                    $crate::wasm::hres_glue::eligible::<$policy>(demands, candidates)
                }
                fn charge(
                    demands: ::std::vec::Vec<w::Demand>,
                    nodes: ::std::vec::Vec<u32>,
                ) -> ::std::result::Result<::std::vec::Vec<w::LayerCharge>, ::std::string::String>
                {
                    $crate::wasm::hres_glue::charge::<$policy>(demands, nodes)
                }
            }
    $crate::wasm::hres::export_hres_world!(SluiceExport with_types_in $crate::wasm::hres);
        };
        $crate::__export_native!(Hres, $policy);
    };
}

/// Exports a [`VertexScoring`](crate::VertexScoring) type as this crate's graph-matching
/// component (`match-policy` world). Match policies are loaded as components or linked into the
/// host as crates; there is no `libloading` form of them.
#[macro_export]
macro_rules! export_vertex_scoring {
    ($policy:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            use $crate::wasm::matching::exports::sluice::policy::vertex_scoring as w;
            struct SluiceExport;
            impl w::Guest for SluiceExport {
                fn describe() -> ::std::result::Result<w::Traits, ::std::string::String> {
                    $crate::wasm::matching_glue::describe::<$policy>()
                }
                fn score(
                    vertices: w::VertexTable,
                ) -> ::std::result::Result<w::Scores, ::std::string::String> {
                    $crate::wasm::matching_glue::score::<$policy>(vertices)
                }
            }
            $crate::wasm::matching::export_match_world!(SluiceExport with_types_in $crate::wasm::matching);
        };
    };
}

/// The native entry points, emitted only when the plugin crate builds with feature `native`
/// (so that linking several plugins into one host as plain crates never clashes).
#[doc(hidden)]
#[macro_export]
macro_rules! __export_native {
    ($variant:ident, $policy:ty) => {
        #[cfg(all(not(target_arch = "wasm32"), feature = "native"))]
        const _: () = {
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn sluice_native_abi(len: *mut usize) -> *const u8 {
                let abi = $crate::__private::native::NATIVE_ABI;
                unsafe { *len = abi.len() };
                abi.as_ptr()
            }

            #[unsafe(no_mangle)]
            #[allow(improper_ctypes_definitions)]
            pub unsafe extern "C" fn sluice_native_new(
                settings: *const $crate::Settings,
                log: $crate::__private::native::LogFn,
            ) -> *mut $crate::__private::native::NativePlugin {
                $crate::__private::native::set_logger(log);
                let settings = unsafe { &*settings };
                match ::std::panic::catch_unwind(|| {
                    <$policy as $crate::FromSettings>::from_settings(settings)
                }) {
                    Ok(policy) => ::std::boxed::Box::into_raw(::std::boxed::Box::new(
                        $crate::__private::native::NativePlugin::$variant(::std::boxed::Box::new(
                            $crate::__private::native::Guarded(policy),
                        )),
                    )),
                    Err(_) => ::std::ptr::null_mut(),
                }
            }
        };
    };
}
