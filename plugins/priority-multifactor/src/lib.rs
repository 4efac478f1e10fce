//! priority/multifactor: Slurm's multifactor priority with Fair Tree fairshare
