//! Who may hold a door's connections and how many requests each user has in service: the
//! per-user quotas daemon.toml sets ([`Quotas`]) and the [`Doorkeeper`] that admits, queues,
//! makes room for or refuses each connection, admins apart and never locked out.

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use hyper::body::{Frame, SizeHint};
use tokio::sync::{Notify, Semaphore};

use super::{MAX_CONNECTIONS, MAX_WAITING, MIN_IDLE, SLOT_WAIT};
use crate::config::DaemonConfig;

/// daemon.toml's per-user quotas and who is exempt from them (root, the daemon's user and
/// `admins`), shared by the listeners and the driver, which replaces them whenever it loads the
/// file. Admins' names are resolved to uids here, so admitting a connection needs no lookup.
#[derive(Clone)]
pub struct Quotas(Arc<RwLock<QuotaRules>>);

pub(super) struct QuotaRules {
    connections_per_user: usize,
    requests_per_user: usize,
    admins: HashSet<u32>,
}

impl Quotas {
    /// The quotas of `cfg`.
    pub fn new(cfg: &DaemonConfig) -> Self {
        Self(Arc::new(RwLock::new(QuotaRules::of(cfg))))
    }

    /// Puts `cfg`'s quotas and admins in effect for connections admitted from now on.
    pub fn apply(&self, cfg: &DaemonConfig) {
        let rules = QuotaRules::of(cfg);
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = rules;
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, QuotaRules> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `uid` is exempt from the per-user quotas.
    pub(super) fn is_admin(&self, uid: u32) -> bool {
        self.read().admins.contains(&uid)
    }
}

impl Default for Quotas {
    fn default() -> Self {
        Self::new(&DaemonConfig::default())
    }
}

impl QuotaRules {
    fn of(cfg: &DaemonConfig) -> Self {
        // SAFETY: plain system call.
        let mut admins: HashSet<u32> = [0, unsafe { libc::geteuid() }].into();
        admins.extend(cfg.admins.iter().filter_map(|name| {
            sluice_client::identity::uid_of(name).or_else(|| {
                // The driver knows a uid without a password entry by its digits.
                name.parse()
                    .ok()
                    .filter(|&uid| sluice_client::identity::user_name(uid).is_none())
            })
        }));
        Self {
            connections_per_user: cfg.max_connections_per_user.max(1),
            requests_per_user: cfg.max_requests_per_user.max(1),
            admins,
        }
    }
}

/// Who holds a door's slots: admins and other users apart, each of the other users within its
/// quota. A connection past a quota takes the place of an idle connection (its user's own, or,
/// when the class is full, one of the user holding the most), else waits for a slot within
/// [`SLOT_WAIT`], else is refused.
pub(super) struct Doorkeeper {
    classes: Mutex<[Slots; 2]>,
    quotas: Quotas,
    /// Woken whenever a connection ends.
    freed: Notify,
}

/// The two kinds of holders a door keeps apart.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    /// A user who is not an admin: held to the per-user quotas.
    User = 0,
    /// Root, the daemon's user, `admins`, and the TCP token holder.
    Admin = 1,
}

/// One class's slots of a door.
#[derive(Default)]
pub(super) struct Slots {
    holders: HashMap<u32, Holder>,
    /// Connections waiting for a slot.
    waiting: usize,
}

/// What one uid holds in a class.
pub(super) struct Holder {
    conns: Vec<Arc<Conn>>,
    waiting: usize,
    /// Its turns at being answered; `None` for admins, who wait for none.
    requests: Option<Arc<Semaphore>>,
}

/// An admitted connection as its door sees it.
pub(super) struct Conn {
    /// Requests in service, counted until their answer is written.
    pub(super) busy: AtomicUsize,
    /// Requests received.
    pub(super) received: AtomicU64,
    /// When it was admitted or last finished an answer.
    pub(super) idle_since: Mutex<Instant>,
    /// Set, under the door's lock, when its slot was given to another connection.
    pub(super) evicted: AtomicBool,
    /// Tells its task to close it.
    pub(super) close: Notify,
}

impl Conn {
    pub(super) fn new() -> Self {
        Self {
            busy: AtomicUsize::new(0),
            received: AtomicU64::new(0),
            idle_since: Mutex::new(Instant::now()),
            evicted: AtomicBool::new(false),
            close: Notify::new(),
        }
    }

    /// Since when it has had nothing to answer, if it has nothing.
    fn idle_since(&self) -> Option<Instant> {
        (self.busy.load(Ordering::Acquire) == 0)
            .then(|| *self.idle_since.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn live(&self) -> bool {
        !self.evicted.load(Ordering::Relaxed)
    }
}

/// What a connection's admission attempt came to.
pub(super) enum Admission {
    In(Arc<Conn>, Option<Arc<Semaphore>>),
    Queued,
    Refused(String),
}

impl Doorkeeper {
    pub(super) fn new(quotas: Quotas) -> Arc<Self> {
        Arc::new(Self {
            classes: Mutex::new(Default::default()),
            quotas,
            freed: Notify::new(),
        })
    }

    fn classes(&self) -> std::sync::MutexGuard<'_, [Slots; 2]> {
        self.classes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for a connection of `uid`, or why there is none.
    pub(super) async fn enter(self: &Arc<Self>, uid: u32, class: Class) -> Result<Ticket, String> {
        let deadline = tokio::time::Instant::now() + SLOT_WAIT;
        let mut queued = false;
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            let admission = {
                let rules = self.quotas.read();
                let (per_user, requests) = match class {
                    Class::User => (rules.connections_per_user, Some(rules.requests_per_user)),
                    Class::Admin => (MAX_CONNECTIONS, None),
                };
                drop(rules);
                let mut classes = self.classes();
                let slots = &mut classes[class as usize];
                if queued {
                    slots.unqueue(uid);
                }
                slots.admit(uid, per_user, requests)
            };
            match admission {
                Admission::In(conn, requests) => {
                    return Ok(Ticket {
                        door: self.clone(),
                        class,
                        uid,
                        conn,
                        requests,
                    });
                }
                Admission::Refused(why) => return Err(why),
                Admission::Queued => queued = true,
            }
            // Woken when a connection ends, or to look again for one that has become idle.
            let wake = tokio::time::Instant::now() + MIN_IDLE;
            if tokio::time::timeout_at(wake.min(deadline), freed)
                .await
                .is_err()
                && tokio::time::Instant::now() >= deadline
            {
                self.classes()[class as usize].unqueue(uid);
                return Err(format!(
                    "no connection slot within {} s: uid {uid}'s connections{} are all busy answering",
                    SLOT_WAIT.as_secs(),
                    if class == Class::User {
                        " (or the door's)"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
}

impl Slots {
    /// Admits a connection of `uid`, making room by closing an idle one if it must; else queues
    /// it, or refuses it when too many already wait.
    fn admit(&mut self, uid: u32, per_user: usize, requests: Option<usize>) -> Admission {
        let held = self.holders.get(&uid).map_or(0, Holder::live);
        let room = if held >= per_user {
            self.evict_idle_of(uid)
        } else if self.live() >= MAX_CONNECTIONS {
            self.evict_idle_of_largest()
        } else {
            true
        };
        let holder = self.holders.entry(uid).or_insert_with(|| Holder {
            conns: Vec::new(),
            waiting: 0,
            requests: requests.map(|n| Arc::new(Semaphore::new(n))),
        });
        if room {
            let conn = Arc::new(Conn::new());
            holder.conns.push(conn.clone());
            return Admission::In(conn, holder.requests.clone());
        }
        if holder.waiting >= per_user || self.waiting >= MAX_WAITING {
            let why = if held >= per_user {
                format!(
                    "uid {uid} holds {held} connections, the most one user may (max_connections_per_user), all busy answering"
                )
            } else {
                format!("all {MAX_CONNECTIONS} connections are busy answering")
            };
            self.forget_if_empty(uid);
            return Admission::Refused(why);
        }
        holder.waiting += 1;
        self.waiting += 1;
        Admission::Queued
    }

    fn unqueue(&mut self, uid: u32) {
        if let Some(h) = self.holders.get_mut(&uid) {
            h.waiting = h.waiting.saturating_sub(1);
        }
        self.waiting = self.waiting.saturating_sub(1);
        self.forget_if_empty(uid);
    }

    fn live(&self) -> usize {
        self.holders.values().map(Holder::live).sum()
    }

    /// Closes `uid`'s connection idle the longest, if one has been idle long enough.
    fn evict_idle_of(&mut self, uid: u32) -> bool {
        let Some(holder) = self.holders.get(&uid) else {
            return false;
        };
        let oldest = holder
            .conns
            .iter()
            .filter(|c| c.live())
            .filter_map(|c| Some((c.idle_since()?, c)))
            .filter(|(since, _)| since.elapsed() >= MIN_IDLE)
            .min_by_key(|(since, _)| *since);
        match oldest {
            Some((_, conn)) => {
                conn.evicted.store(true, Ordering::Relaxed);
                conn.close.notify_one();
                true
            }
            None => false,
        }
    }

    /// Closes an idle connection of the holder with the most connections that has one.
    fn evict_idle_of_largest(&mut self) -> bool {
        let mut by_size: Vec<(usize, u32)> = self
            .holders
            .iter()
            .map(|(&uid, h)| (h.live(), uid))
            .collect();
        by_size.sort_unstable_by(|a, b| b.cmp(a));
        by_size.into_iter().any(|(_, uid)| self.evict_idle_of(uid))
    }

    /// Drops `uid`'s entry once it holds and awaits nothing, so the map stays as small as the
    /// set of connected users.
    fn forget_if_empty(&mut self, uid: u32) {
        if self
            .holders
            .get(&uid)
            .is_some_and(|h| h.conns.is_empty() && h.waiting == 0)
        {
            self.holders.remove(&uid);
        }
    }
}

impl Holder {
    fn live(&self) -> usize {
        self.conns.iter().filter(|c| c.live()).count()
    }
}

/// An admitted connection's slot, given back when it drops.
pub(super) struct Ticket {
    pub(super) door: Arc<Doorkeeper>,
    pub(super) class: Class,
    pub(super) uid: u32,
    pub(super) conn: Arc<Conn>,
    pub(super) requests: Option<Arc<Semaphore>>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut classes = self.door.classes();
        let slots = &mut classes[self.class as usize];
        if let Some(h) = slots.holders.get_mut(&self.uid) {
            h.conns.retain(|c| !Arc::ptr_eq(c, &self.conn));
        }
        slots.forget_if_empty(self.uid);
        drop(classes);
        self.door.freed.notify_waiters();
    }
}

/// A request in service on a connection: from its head's arrival until its answer's body is
/// written (or abandoned), so a connection writing an answer is never taken for idle.
pub(super) struct Working(Arc<Conn>);

impl Working {
    pub(super) fn start(conn: &Arc<Conn>) -> Self {
        conn.busy.fetch_add(1, Ordering::AcqRel);
        conn.received.fetch_add(1, Ordering::Relaxed);
        Self(conn.clone())
    }
}

impl Drop for Working {
    fn drop(&mut self) {
        *self.0.idle_since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body that keeps its request counted as in service until it is written.
pub(super) struct Answer {
    pub(super) body: Body,
    pub(super) _working: Working,
}

impl hyper::body::Body for Answer {
    type Data = hyper::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
