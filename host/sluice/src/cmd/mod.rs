//! One module per subcommand; each has an `Args` and a `run`.

pub mod acct;
pub mod cancel;
pub mod clock;
pub mod config;
pub mod daemon_client;
pub mod demo;
pub mod hold;
pub mod hostlist;
pub mod info;
pub mod install_links;
pub mod job_arrays;
pub mod options;
pub mod plugin;
pub mod prio;
pub mod queue;
pub mod reconfigure;
pub mod register;
pub mod reservation;
pub mod resource_query;
pub mod run;
pub mod salloc;
pub mod sbatch;
pub mod scontrol;
pub mod sdiag;
pub mod serve;
pub mod share;
pub mod show;
pub mod show_layout;
pub mod sim;
pub mod slurm_names;
pub mod srun;
pub mod submit;
pub mod supervise;
pub mod update;

/// A plain table for output whose columns are sluice's own (Slurm's views keep their exact
/// layouts): a header row, no borders, columns as wide as their contents.
pub fn table<const N: usize>(header: [&str; N]) -> comfy_table::Table {
    let mut table = comfy_table::Table::new();
    table
        .load_preset(comfy_table::presets::NOTHING)
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled)
        .set_header(header);
    table
}

/// Right-aligns the given columns of `table` (numbers).
pub fn align_right(table: &mut comfy_table::Table, columns: impl IntoIterator<Item = usize>) {
    for i in columns {
        if let Some(column) = table.column_mut(i) {
            column.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
}
