//! The cluster model and the readers of sluice and Slurm configuration files
