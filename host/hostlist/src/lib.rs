//! Slurm hostlist expressions: expand, compress and sort node names
