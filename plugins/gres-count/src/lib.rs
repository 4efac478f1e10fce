//! A count-only GRES (nic, license-like counts): the GRES interface is not GPU-shaped
