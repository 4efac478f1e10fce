//! The scheduling engine: job lifecycle, queue order, main loop and backfill on a given clock
