//! Importing the common subset of slurm.conf (plus gres.conf and resources.yaml) as a sluice cluster
//! file, listing every line or key not carried over and why.

mod nodes;
mod params;
mod values;

use crate::config::{ConfigFile, GresTable, parse_config_file};
use crate::gres::parse_gres_conf;
use crate::keyvalue::{Line, parse_lines};
use crate::{Cluster, ConfigError, Location, Source};

/// Something in the input that the sluice file does not carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Where it is.
    pub at: Location,
    /// The key (or the line's first key).
    pub key: String,
    /// Why it was not carried over.
    pub reason: String,
}

/// The result of an import: the cluster file, the cluster it loads as, and what was left behind.
#[derive(Debug, Clone)]
pub struct Import {
    /// The sluice cluster file.
    pub file: ConfigFile,
    /// The cluster the file describes (proof that it loads).
    pub cluster: Cluster,
    /// Lines and keys not carried over.
    pub skipped: Vec<Skipped>,
}

impl Import {
    /// The cluster file as TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string(&self.file)
            .unwrap_or_else(|err| format!("# cannot print the configuration: {err}\n"))
    }
}

/// State built up while reading slurm.conf lines.
pub(crate) struct Importer {
    pub file: ConfigFile,
    pub skipped: Vec<Skipped>,
    pub node_defaults: Vec<crate::keyvalue::Pair>,
    pub partition_defaults: Vec<crate::keyvalue::Pair>,
    /// Node names the `NodeName=` lines so far name, against the import's total cap.
    pub node_names: u64,
}

impl Importer {
    /// The QOS a partition key names, as a `[[qos]]` table: QOS live in the accounting
    /// database, so one named here that no table defines yet is added with no limits (and
    /// listed), for `import-accounts` or the admin to fill in.
    pub fn qos_named(&mut self, pair: &crate::keyvalue::Pair) -> toml::Spanned<String> {
        let name = pair.value.trim().to_owned();
        if !self.file.qos.iter().any(|q| q.name.get_ref() == &name) {
            self.file.qos.push(crate::config::QosSpec::named(&name));
            self.skip(
                &pair.at,
                &format!("{}={}", pair.key, pair.value),
                format!("QOS `{name}` is defined with no limits; its limits live in the accounting database (sluice config import-accounts)"),
            );
        }
        toml::Spanned::new(0..0, name)
    }

    pub fn skip(&mut self, at: &Location, key: &str, reason: impl Into<String>) {
        self.skipped.push(Skipped {
            at: at.clone(),
            key: key.to_owned(),
            reason: reason.into(),
        });
    }
}

/// Imports slurm.conf, with gres.conf device detail and resources.yaml HRES when given.
///
/// `resources_file` is what the written file's `HresFile` key should say (the path a later load will
/// read); the resources text itself is validated now against the imported nodes and licenses.
pub fn import_slurm_conf(
    slurm_conf: Source<'_>,
    gres_conf: Option<Source<'_>>,
    resources: Option<Source<'_>>,
    resources_file: Option<&str>,
) -> Result<Import, ConfigError> {
    let mut empty = parse_config_file(Source::new(slurm_conf.name, ""))?;
    // slurm.conf's default: nothing enforced, unknown accounts accepted.
    empty.enforce = Some(toml::Spanned::new(0..0, Vec::new()));
    let mut importer = Importer {
        file: empty,
        skipped: Vec::new(),
        node_defaults: Vec::new(),
        partition_defaults: Vec::new(),
        node_names: 0,
    };
    for line in parse_lines(slurm_conf)? {
        import_line(&mut importer, &line)?;
    }
    if let Some(gres_conf) = gres_conf {
        for line in parse_gres_conf(gres_conf)? {
            importer.file.gres.push(gres_table(&line));
        }
    }
    importer.file.hres_file = resources_file.map(|f| toml::Spanned::new(0..0, f.to_owned()));
    let text = toml::to_string(&importer.file).map_err(|err| ConfigError::Syntax {
        at: Location::new(slurm_conf.name, 1, 1),
        message: format!("cannot write the imported configuration: {err}"),
    })?;
    let label = format!("{} (imported)", slurm_conf.name);
    let cluster = Cluster::from_toml(Source::new(&label, &text), resources)?;
    Ok(Import {
        file: importer.file,
        cluster,
        skipped: importer.skipped,
    })
}

fn import_line(importer: &mut Importer, line: &Line) -> Result<(), ConfigError> {
    let first = &line.pairs[0];
    match first.key.to_ascii_lowercase().as_str() {
        "nodename" => nodes::node_line(importer, line),
        "partitionname" => nodes::partition_line(importer, line),
        "nodeset" | "downnodes" | "frontendname" => {
            importer.skip(
                &first.at,
                &first.key,
                "node sets and front ends are not modelled",
            );
            Ok(())
        }
        _ => {
            for pair in &line.pairs {
                params::global_pair(importer, pair)?;
            }
            Ok(())
        }
    }
}

fn gres_table(line: &crate::gres::GresConfLine) -> GresTable {
    let join = |v: Vec<String>| (!v.is_empty()).then(|| v.join(","));
    GresTable {
        node_name: line.node_name.clone(),
        name: toml::Spanned::new(0..0, line.name.clone()),
        gres_type: line.gres_type.clone(),
        file: (!line.files.is_empty()).then(|| sluice_hostlist::compress(&line.files)),
        count: line
            .files
            .is_empty()
            .then_some(crate::config::CountValue::Number(line.count)),
        cores: join(line.cores.iter().map(u32::to_string).collect()),
        links: join(line.links.iter().map(i32::to_string).collect()),
        flags: join(line.flags.iter().map(|f| f.as_str().to_owned()).collect()),
    }
}
