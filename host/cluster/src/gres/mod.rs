//! GRES as Slurm writes it: node `Gres=` strings and gres.conf lines, and merging the two.

mod conf;
mod count;
mod merge;
mod spec;

pub use conf::{GresConfLine, parse_gres_conf};
pub use count::parse_count;
pub use merge::apply_gres_conf;
pub use spec::{GresSpec, parse_gres_spec};
