//! Containment: the generations of one plugin kind, which of them answers, and what a fault
//! does. Written once for every kind against the backend traits.
//!
//! A slot holds the active generation, the previous one (kept for rollback and as the "last
//! good" answerer) and the built-in default. A call goes to the first of them that is not
//! backing off; a fault is logged, counted and the next one answers the same call. A generation
//! that faults again and again backs off for 1, 2, 4 … 64 passes and is quarantined after
//! [`QUARANTINE_AFTER`] faults in a row, until it is swapped or rolled back in again.

use std::sync::atomic::{AtomicU64, Ordering};

use sluice_policy::PluginKind;

use crate::error::Fault;

/// Consecutive faults after which a generation stops being tried at all.
pub const QUARANTINE_AFTER: u32 = 8;

static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

/// How a generation has behaved.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Health {
    /// Calls answered.
    pub answered: u64,
    /// Calls that faulted.
    pub faults: u64,
    /// Faults since the last good answer.
    pub consecutive: u32,
    /// Pass number before which this generation is not tried.
    pub skip_until: u64,
    /// The most recent fault.
    pub last_fault: Option<String>,
    /// Given up on until swapped or rolled back in.
    pub quarantined: bool,
}

/// One loaded version of a plugin.
pub struct Generation<B: ?Sized> {
    /// Process-unique id, increasing with every load and numbered again when published, so
    /// that a slot's published generations count up in the order they became active.
    pub id: u64,
    /// Where it came from, for logs and `sluice plugin list`.
    pub origin: String,
    /// The code that answers.
    pub backend: Box<B>,
    /// Its record.
    pub health: Health,
}

impl<B: ?Sized> Generation<B> {
    /// Wraps a freshly loaded backend.
    pub fn new(origin: impl Into<String>, backend: Box<B>) -> Self {
        Self {
            id: NEXT_GENERATION.fetch_add(1, Ordering::Relaxed),
            origin: origin.into(),
            backend,
            health: Health::default(),
        }
    }
}

/// Which generation of a slot, in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The published generation.
    Active,
    /// The one before it.
    Previous,
    /// The built-in default.
    Fallback,
}

impl Role {
    /// The role as `sluice plugin list` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Previous => "previous",
            Self::Fallback => "fallback",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// What `sluice plugin list` shows about one generation.
#[derive(Clone, Debug, PartialEq)]
pub struct GenerationStatus {
    /// Its role in the slot.
    pub role: Role,
    /// Generation id.
    pub id: u64,
    /// Where it came from.
    pub origin: String,
    /// Its record.
    pub health: Health,
}

/// The generations of one plugin kind.
pub struct Slot<B: ?Sized> {
    kind: PluginKind,
    active: Generation<B>,
    previous: Option<Generation<B>>,
    fallback: Generation<B>,
    pass: u64,
    answering: Option<Role>,
}

impl<B: ?Sized> Slot<B> {
    /// A slot answering with `active`, falling back to `fallback`.
    pub fn new(kind: PluginKind, active: Generation<B>, fallback: Generation<B>) -> Self {
        Self {
            kind,
            active,
            previous: None,
            fallback,
            pass: 0,
            answering: None,
        }
    }

    /// The kind of plugin this slot holds.
    pub fn kind(&self) -> PluginKind {
        self.kind
    }

    /// Marks the start of a scheduling pass (backoff is counted in passes).
    pub fn next_pass(&mut self) {
        self.pass += 1;
    }

    /// Publishes a new generation; the current one becomes the previous, kept for rollback.
    pub fn publish(&mut self, mut generation: Generation<B>) {
        generation.id = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed);
        let old = std::mem::replace(&mut self.active, generation);
        tracing::info!(kind = %self.kind, new = self.active.id, origin = %self.active.origin, "published plugin generation");
        self.previous = Some(old);
    }

    /// Makes the previous generation active again (and the active one previous).
    pub fn rollback(&mut self) -> Result<u64, &'static str> {
        let previous = self
            .previous
            .as_mut()
            .ok_or("no previous generation to roll back to")?;
        std::mem::swap(&mut self.active, previous);
        self.active.health.quarantined = false;
        self.active.health.consecutive = 0;
        self.active.health.skip_until = 0;
        tracing::info!(kind = %self.kind, active = self.active.id, "rolled back plugin generation");
        Ok(self.active.id)
    }

    /// Id of the active generation.
    pub fn active_id(&self) -> u64 {
        self.active.id
    }

    /// Every generation with its role and record.
    pub fn status(&self) -> Vec<GenerationStatus> {
        let mut out = vec![status(Role::Active, &self.active)];
        if let Some(p) = &self.previous {
            out.push(status(Role::Previous, p));
        }
        out.push(status(Role::Fallback, &self.fallback));
        out
    }

    /// The roles that may answer now, in order; the fallback always may.
    pub fn answerers(&self) -> Vec<Role> {
        let mut roles = Vec::with_capacity(3);
        if self.available(&self.active) {
            roles.push(Role::Active);
        }
        if let Some(p) = &self.previous
            && self.available(p)
        {
            roles.push(Role::Previous);
        }
        roles.push(Role::Fallback);
        roles
    }

    /// The roles that may answer now and come after `role` in the order of trying.
    pub fn answerers_after(&self, role: Role) -> Vec<Role> {
        let order = [Role::Active, Role::Previous, Role::Fallback];
        let after: Vec<Role> = order
            .into_iter()
            .skip_while(|r| *r != role)
            .skip(1)
            .collect();
        self.answerers()
            .into_iter()
            .filter(|r| after.contains(r))
            .collect()
    }

    fn available(&self, g: &Generation<B>) -> bool {
        !g.health.quarantined && g.health.skip_until <= self.pass
    }

    /// The generation in `role` (the fallback if there is no previous).
    pub fn get_mut(&mut self, role: Role) -> &mut Generation<B> {
        match role {
            Role::Active => &mut self.active,
            Role::Previous => self.previous.as_mut().unwrap_or(&mut self.fallback),
            Role::Fallback => &mut self.fallback,
        }
    }

    /// Records the outcome of a call answered (or not) by `role`.
    pub fn record<R>(&mut self, role: Role, outcome: &Result<R, Fault>) {
        let pass = self.pass;
        let kind = self.kind;
        let g = self.get_mut(role);
        match outcome {
            Ok(_) => {
                g.health.answered += 1;
                g.health.consecutive = 0;
            }
            Err(fault) => {
                g.health.faults += 1;
                g.health.consecutive += 1;
                g.health.last_fault = Some(fault.to_string());
                let backoff = 1u64 << (g.health.consecutive - 1).min(6);
                g.health.skip_until = pass + backoff;
                if g.health.consecutive >= QUARANTINE_AFTER && role != Role::Fallback {
                    g.health.quarantined = true;
                }
                tracing::warn!(
                    kind = %kind,
                    generation = g.id,
                    origin = %g.origin,
                    consecutive = g.health.consecutive,
                    quarantined = g.health.quarantined,
                    "plugin fault contained: {fault}"
                );
            }
        }
    }

    /// For kinds whose guest keeps the pass's state (selection, HRES): hands the pass to the first
    /// answerer whose `begin_pass` succeeds; it answers the rest of the pass.
    pub fn begin(&mut self, begin_pass: impl FnMut(&mut B) -> Result<(), Fault>) {
        let roles = self.answerers();
        self.begin_with(&roles, begin_pass);
    }

    /// After the answering generation faulted mid-pass: hands the pass so far (through
    /// `begin_pass`, with the host's own state) to the next generation in line.
    pub fn fail_over(&mut self, begin_pass: impl FnMut(&mut B) -> Result<(), Fault>) {
        let rest = self
            .answering
            .map(|current| self.answerers_after(current))
            .unwrap_or_default();
        self.begin_with(&rest, begin_pass);
    }

    /// The generation answering this pass, if any took it.
    pub fn answering(&self) -> Option<Role> {
        self.answering
    }

    fn begin_with(
        &mut self,
        roles: &[Role],
        mut begin_pass: impl FnMut(&mut B) -> Result<(), Fault>,
    ) {
        self.answering = None;
        for &role in roles {
            let outcome = begin_pass(&mut *self.get_mut(role).backend);
            self.record(role, &outcome);
            if outcome.is_ok() {
                self.answering = Some(role);
                return;
            }
        }
    }

    /// Calls `f` on each answerer in turn until one answers.
    pub fn call<R>(&mut self, mut f: impl FnMut(&mut B) -> Result<R, Fault>) -> Result<R, Fault> {
        let mut last = None;
        for role in self.answerers() {
            let outcome = f(&mut *self.get_mut(role).backend);
            self.record(role, &outcome);
            match outcome {
                Ok(r) => return Ok(r),
                Err(fault) => last = Some(fault),
            }
        }
        Err(last.expect("the fallback is always an answerer"))
    }
}

fn status<B: ?Sized>(role: Role, g: &Generation<B>) -> GenerationStatus {
    GenerationStatus {
        role,
        id: g.id,
        origin: g.origin.clone(),
        health: g.health.clone(),
    }
}
