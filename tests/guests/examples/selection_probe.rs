//! A selection component built with wit-bindgen straight against `wit/` that shows the
//! host's side of the protocol: what node copy it holds, and which calls brought it there.
//!
//! It keeps the copy of `sluice_test_guests::copy_selection`: `set-nodes` replaces it, the packed changes of
//! `begin-pass` or of a `place` that carries them are written into it (unpacked here by hand,
//! not with the host's code), `place` in allocate mode subtracts a first fit on free CPUs,
//! `release` adds back. Asked to place job [`COPY_JOB`] it answers its copy (every node, with
//! free CPUs, free memory and free GRES as the placement's columns); job `CALLS_JOB`, the
//! counts `[set-nodes calls, begin-pass calls, nodes changed by begin-pass, place calls that
//! carried changes, nodes changed by them]` as the placement's nodes; job `TRAP_JOB`, a trap; job `OVERSIZE_JOB`, a placement that
//! cannot fit.
//! A place applies the changes it carries before it answers, whatever the job (the ids are in
//! `sluice_test_guests::selection_probe`). Natively it is empty.

#[cfg(target_arch = "wasm32")]
mod component {
    use std::cell::RefCell;

    wit_bindgen::generate!({
        path: "../../wit",
        world: "selection-policy",
    });

    use exports::sluice::policy::selection::{Guest, JobRequest, Mode, NodeTable, Placement};

    use sluice_test_guests::copy_glue;
    use sluice_test_guests::copy_selection::{Answer, Copy};
    use sluice_test_guests::selection_probe::{CALLS_JOB, COPY_JOB, OVERSIZE_JOB, TRAP_JOB};

    /// What this instance was told.
    #[derive(Default)]
    struct Held {
        copy: Option<Copy>,
        set_nodes: u32,
        begin_pass: u32,
        begin_pass_changes: u32,
        changing_places: u32,
        place_changes: u32,
    }

    thread_local! {
        static HELD: RefCell<Held> = RefCell::new(Held::default());
    }

    copy_glue!(with counts);

    /// Writes packed changes (node, free CPUs, free memory, power, GRES counts) into the copy;
    /// answers how many nodes they changed.
    fn apply(h: &mut Held, packed: &[u64]) -> u32 {
        let copy = h.copy.as_mut().expect("set-nodes comes first");
        let width = 4 + copy.kinds;
        assert_eq!(packed.len() % width, 0, "whole changes only");
        for change in packed.chunks(width) {
            let gres: Vec<u32> = change[4..].iter().map(|&g| g as u32).collect();
            copy.set(change[0] as u32, change[1] as u32, change[2], &gres);
        }
        (packed.len() / width) as u32
    }

    struct Probe;

    impl Guest for Probe {
        fn set_nodes(t: NodeTable) {
            HELD.with_borrow_mut(|h| {
                h.set_nodes += 1;
                h.copy = Some(copy_of(t));
            });
        }

        fn begin_pass(changes: Vec<u64>) {
            HELD.with_borrow_mut(|h| {
                h.begin_pass += 1;
                h.begin_pass_changes += apply(h, &changes);
            });
        }

        fn place(r: JobRequest, mode: Mode, changes: Option<Vec<u64>>) -> Option<Placement> {
            HELD.with_borrow_mut(|h| {
                if let Some(changes) = changes {
                    h.changing_places += 1;
                    h.place_changes += apply(h, &changes);
                }
                match r.job_id {
                    TRAP_JOB => core::arch::wasm32::unreachable(),
                    CALLS_JOB => Some(counts(vec![
                        h.set_nodes,
                        h.begin_pass,
                        h.begin_pass_changes,
                        h.changing_places,
                        h.place_changes,
                    ])),
                    COPY_JOB => h.copy.as_ref().map(|c| placement(c.report())),
                    // Nine CPUs on node 0, which has eight: the host cannot apply it to its
                    // model of this copy (nor does this copy take it).
                    OVERSIZE_JOB => Some(Placement {
                        nodes: vec![0],
                        cpus: vec![9],
                        memory_mb: vec![0],
                        gres: vec![0; h.copy.as_ref().map_or(0, |c| c.kinds)],
                        rows: vec![],
                    }),
                    _ => fit(h.copy.as_mut(), &r, mode),
                }
            })
        }

        fn release(_job_id: u32, p: Placement) {
            HELD.with_borrow_mut(|h| give_back(h.copy.as_mut(), p));
        }
    }

    export!(Probe);
}
