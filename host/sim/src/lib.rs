//! Workload replay: trace readers, virtual-clock simulation, metrics and reports
