//! When ended jobs' records leave the image: MinJobAge after their end, once the accounting
//! store has them (Slurm's MinJobAge purge), so the records kept stay bounded by MaxJobCount.

use super::Driver;
use crate::image::Record;

impl Driver {
    /// Journals the purge of every ended, accounted job older than MinJobAge, and removes its
    /// files and spool; jobs still in the engine leave it by its own purge (`purge_old`).
    pub(super) fn purge_records(&mut self) {
        let horizon = self.engine.now() - self.cfg.min_job_age as i64;
        let ids = self.store.purgeable(horizon);
        if ids.is_empty() {
            return;
        }
        for &id in &ids {
            // A job the engine no longer holds (ended before a restart) has no purge of its own.
            if self.ids.engine(id).is_none() {
                self.exec.forget(id);
            }
            self.accepted_at.remove(&id);
        }
        tracing::debug!("purged {} ended job records", ids.len());
        self.commit(Record::Purged { ids });
    }
}
