//! A recording adapter around the engine's selection policy, so a shadow candidate can be asked
//! the same questions the active policy answered.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use sluice_policy::{JobRequest, NodeTable, PlaceMode, Placement, SelectionPolicy};

/// One call the engine made to the active selection policy, as far as a shadow needs it.
pub(super) enum SelectionCall {
    /// A pass began with this node table.
    Begin(NodeTable),
    /// The active policy placed this job (allocate mode).
    Placed(JobRequest, Placement),
    /// The engine gave back the allocate-mode placement of this job.
    Released(u32),
}

/// What the adapter recorded since the driver last took it; off unless a selection shadow runs.
#[derive(Default)]
pub(super) struct Recorder {
    on: AtomicBool,
    calls: Mutex<Vec<SelectionCall>>,
}

impl Recorder {
    /// Starts or stops recording; stopping drops what was not taken.
    pub(super) fn set(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
        if !on {
            self.lock().clear();
        }
    }

    /// The calls recorded since the last take, in order.
    pub(super) fn take(&self) -> Vec<SelectionCall> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SelectionCall>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push(&self, call: SelectionCall) {
        let mut calls = self.lock();
        // A pass that placed nothing tells a shadow nothing; keep only the latest table.
        if matches!(call, SelectionCall::Begin(_))
            && matches!(calls.last(), Some(SelectionCall::Begin(_)))
        {
            calls.pop();
        }
        calls.push(call);
    }
}

/// The engine's selection policy, forwarding every call and recording it while a shadow runs.
pub(super) struct RecordingSelection {
    pub(super) inner: Box<dyn SelectionPolicy + Send>,
    pub(super) recorder: Arc<Recorder>,
}

impl RecordingSelection {
    fn on(&self) -> bool {
        // Relaxed: the engine and the driver share one thread; the atomic only makes it Sync.
        self.recorder.on.load(Ordering::Relaxed)
    }
}

impl SelectionPolicy for RecordingSelection {
    fn begin_pass(&mut self, nodes: &NodeTable) {
        if self.on() {
            self.recorder.push(SelectionCall::Begin(nodes.clone()));
        }
        self.inner.begin_pass(nodes)
    }

    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Option<Placement> {
        let answer = self.inner.place(req, mode);
        if let (true, PlaceMode::Allocate, Some(p)) = (self.on(), mode, &answer) {
            self.recorder
                .push(SelectionCall::Placed(req.clone(), p.clone()));
        }
        answer
    }

    fn release(&mut self, job_id: u32, placement: &Placement) {
        if self.on() {
            self.recorder.push(SelectionCall::Released(job_id));
        }
        self.inner.release(job_id, placement)
    }
}
