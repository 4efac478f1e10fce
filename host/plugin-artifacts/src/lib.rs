//! Paths of the plugin components and native libraries that `build.rs` compiled from this
//! repository, for tests, benchmarks and the demo.

include!(concat!(env!("OUT_DIR"), "/artifacts.rs"));

/// Path of the component built from package `name`.
pub fn component(name: &str) -> &'static str {
    lookup(COMPONENTS, name)
}

/// Path of the native library built from package `name`.
pub fn native_library(name: &str) -> &'static str {
    lookup(NATIVE_LIBRARIES, name)
}

fn lookup(table: &[(&'static str, &'static str)], name: &str) -> &'static str {
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, p)| *p)
        .unwrap_or_else(|| panic!("no plugin artifact named {name}"))
}

/// Bytes of the embedded default-bundle component built from package `name`, if it is one.
pub fn embedded(name: &str) -> Option<&'static [u8]> {
    EMBEDDED_BUNDLE
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| *b)
}

/// Path of the test guest component `name` (a file stem of `tests/guests/examples`). Test
/// builds only: the crate must be built with feature `test-guests`.
pub fn test_guest(name: &str) -> &'static str {
    lookup(TEST_GUESTS, name)
}

/// Path of the test guest `name` built as a native library (feature `test-guests`).
pub fn test_guest_native(name: &str) -> &'static str {
    lookup(TEST_GUESTS_NATIVE, name)
}
