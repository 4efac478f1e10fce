//! gres/gpu: GPU device validation, picking and environment
