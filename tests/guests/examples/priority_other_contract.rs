//! A priority component built against another version of `sluice:policy` than the host's, as
//! a component built with an older SDK would be: the host must refuse it and say to rebuild.
//! Natively it is empty.

#[cfg(target_arch = "wasm32")]
mod component {
    wit_bindgen::generate!({
        inline: "
            package sluice:policy@0.6.0;
            interface priority {
                shares: func(now: s64, usage: list<f64>) -> list<u32>;
            }
            world priority-policy {
                export priority;
            }
        ",
        world: "priority-policy",
    });

    struct Old;

    impl exports::sluice::policy::priority::Guest for Old {
        fn shares(_now: i64, usage: Vec<f64>) -> Vec<u32> {
            vec![0; usage.len()]
        }
    }

    export!(Old);
}
