//! Importing the common subset of slurm.conf (plus gres.conf and resources.yaml) as a sluice cluster
//! file, listing every line or key not carried over and why.

mod accounts;
mod nodes;
mod origin;
mod params;
mod values;

pub use accounts::import_accounts;

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
    /// The cluster file as TOML text, opening with a comment for each line or key not carried
    /// over and why.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        if !self.skipped.is_empty() {
            out.push_str("# Not carried over from the Slurm configuration:\n");
            for s in &self.skipped {
                let line = format!("{}: {}: {}", s.at, s.key, s.reason);
                out.push_str(&format!("#   {}\n", line.replace('\n', " ")));
            }
            out.push('\n');
        }
        match toml::to_string(&self.file) {
            Ok(text) => out.push_str(&text),
            Err(err) => out.push_str(&format!("# cannot print the configuration: {err}\n")),
        }
        out
    }
}

/// Reads the file an `Include` line names: given the name as written, returns the name to
/// report and the text, or why it cannot be read.
pub type IncludeReader<'a> = &'a mut dyn FnMut(&str) -> Result<(String, String), String>;

/// Most nested `Include` levels followed (a file including itself stops here).
const MAX_INCLUDE_DEPTH: usize = 16;

/// State built up while reading slurm.conf lines.
pub(crate) struct Importer {
    pub file: ConfigFile,
    pub skipped: Vec<Skipped>,
    pub node_defaults: Vec<crate::keyvalue::Pair>,
    pub partition_defaults: Vec<crate::keyvalue::Pair>,
    /// Node names the `NodeName=` lines so far name, against the import's total cap.
    pub node_names: u64,
    /// Where each generated table came from.
    pub origins: origin::Origins,
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
///
/// `Include` lines are listed as not carried over; [`import_slurm_conf_with_includes`] follows them.
pub fn import_slurm_conf(
    slurm_conf: Source<'_>,
    gres_conf: Option<Source<'_>>,
    resources: Option<Source<'_>>,
    resources_file: Option<&str>,
) -> Result<Import, ConfigError> {
    import::<NoIncludes>(slurm_conf, gres_conf, resources, resources_file, None)
}

/// The reader type of an import that follows no `Include`.
type NoIncludes = fn(&str) -> Result<(String, String), String>;

/// [`import_slurm_conf`], reading each `Include`d file through `include` and importing its
/// lines where the `Include` line stands (nested up to 16 levels).
pub fn import_slurm_conf_with_includes(
    slurm_conf: Source<'_>,
    gres_conf: Option<Source<'_>>,
    resources: Option<Source<'_>>,
    resources_file: Option<&str>,
    include: IncludeReader<'_>,
) -> Result<Import, ConfigError> {
    import(
        slurm_conf,
        gres_conf,
        resources,
        resources_file,
        Some(include),
    )
}

fn import<F: FnMut(&str) -> Result<(String, String), String> + ?Sized>(
    slurm_conf: Source<'_>,
    gres_conf: Option<Source<'_>>,
    resources: Option<Source<'_>>,
    resources_file: Option<&str>,
    mut include: Option<&mut F>,
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
        origins: origin::Origins::default(),
    };
    for line in parse_lines(slurm_conf)? {
        import_line(&mut importer, &line, &mut include, 0)?;
    }
    if let Some(gres_conf) = gres_conf {
        for line in parse_gres_conf(gres_conf)? {
            importer.file.gres.push(gres_table(&line));
            importer.origins.gres.push(line.at.clone());
        }
    }
    importer.file.hres_file = resources_file.map(|f| toml::Spanned::new(0..0, f.to_owned()));
    let text = toml::to_string(&importer.file).map_err(|err| ConfigError::Syntax {
        at: Location::new(slurm_conf.name, 1, 1),
        message: format!("cannot write the imported configuration: {err}"),
    })?;
    let label = format!("{} (imported)", slurm_conf.name);
    let cluster = Cluster::from_toml(Source::new(&label, &text), resources).map_err(|e| {
        // Point at the slurm.conf line the generated value came from, not the generated file.
        let origin = e
            .location()
            .filter(|at| at.file == label)
            .and_then(|at| importer.origins.locate(&text, at));
        match origin {
            Some(at) => e.relocated(at),
            None => e,
        }
    })?;
    Ok(Import {
        file: importer.file,
        cluster,
        skipped: importer.skipped,
    })
}

fn import_line<F: FnMut(&str) -> Result<(String, String), String> + ?Sized>(
    importer: &mut Importer,
    line: &Line,
    include: &mut Option<&mut F>,
    depth: usize,
) -> Result<(), ConfigError> {
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
        "include" => match include {
            Some(read) => include_file(importer, first, &mut **read, depth),
            None => {
                importer.skip(
                    &first.at,
                    &first.key,
                    "included files are not followed here; import them separately",
                );
                Ok(())
            }
        },
        _ => {
            for pair in &line.pairs {
                importer.origins.globals.push(pair.clone());
                params::global_pair(importer, pair)?;
            }
            Ok(())
        }
    }
}

/// Imports the lines of the file an `Include` line names, where that line stands.
fn include_file<F: FnMut(&str) -> Result<(String, String), String> + ?Sized>(
    importer: &mut Importer,
    pair: &crate::keyvalue::Pair,
    read: &mut F,
    depth: usize,
) -> Result<(), ConfigError> {
    if depth >= MAX_INCLUDE_DEPTH {
        return Err(ConfigError::invalid(
            pair.value_at.clone(),
            format!(
                "Include {} nested {MAX_INCLUDE_DEPTH} levels deep",
                pair.value
            ),
            "includes that end (does a file include itself?)",
        ));
    }
    let (name, text) = read(&pair.value).map_err(|why| {
        ConfigError::invalid(
            pair.value_at.clone(),
            format!("Include {} that cannot be read ({why})", pair.value),
            "a readable file",
        )
    })?;
    let mut inner = Some(read);
    for line in parse_lines(Source::new(&name, &text))? {
        import_line(importer, &line, &mut inner, depth + 1)?;
    }
    Ok(())
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
