//! Builds the plugin components and native libraries for tests, benches and the demo
