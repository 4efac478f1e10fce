//! The RFC 14 jobspec as Fluxion's libjobspec accepts it, read from YAML with line:column errors.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::interner::Interner;
use crate::jobspec_count::Count;

/// Why a jobspec could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JobspecError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The jobspec file.
        file: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The text is not a valid jobspec; line and column are 1-based.
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        /// The jobspec file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Where in the document, e.g. `resources[0].with[1]` (empty at the top).
        path: String,
        /// What was expected (libjobspec's text where it has one).
        message: String,
    },
    /// The text is not a valid jobspec and the parser gave no position.
    #[error("{file}: {message}")]
    Unplaced {
        /// The jobspec file.
        file: PathBuf,
        /// Where in the document, e.g. `resources[0].with[1]` (empty at the top).
        path: String,
        /// What was expected (libjobspec's text where it has one).
        message: String,
    },
}

impl JobspecError {
    /// What was wrong, without the place: libjobspec's text, which resource-query prints.
    pub fn message(&self) -> String {
        match self {
            Self::Io { source, .. } => source.to_string(),
            Self::Invalid { message, .. } | Self::Unplaced { message, .. } => message.clone(),
        }
    }

    /// Where it was wrong: `file:line:column`, or the file when the parser gave no position.
    pub fn place(&self) -> String {
        match self {
            Self::Io { file, .. } | Self::Unplaced { file, .. } => file.display().to_string(),
            Self::Invalid {
                file, line, column, ..
            } => format!("{}:{line}:{column}", file.display()),
        }
    }
}

thread_local! {
    /// Resource types the jobspec being read may name; set only while [`Jobspec::parse`] runs,
    /// so that the refusal carries the position of the offending `type`.
    static KNOWN_TYPES: RefCell<Option<HashSet<String>>> = const { RefCell::new(None) };
}

/// Clears the known types when parsing ends, even on an early return.
struct KnownTypesGuard;

impl Drop for KnownTypesGuard {
    fn drop(&mut self) {
        KNOWN_TYPES.with(|k| k.borrow_mut().take());
    }
}

/// A resource type a jobspec names, checked against the graph's types while reading.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct ResourceType(pub String);

impl TryFrom<String> for ResourceType {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        let known = KNOWN_TYPES.with(|k| k.borrow().as_ref().is_none_or(|set| set.contains(&name)));
        if known {
            Ok(ResourceType(name))
        } else {
            Err("Value of \"type\" must be a resource type known to fluxion".into())
        }
    }
}

/// The jobspec format version: 1 or, as the test suite mostly uses, 9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "u64")]
pub struct Version(pub u32);

impl TryFrom<u64> for Version {
    type Error = String;

    fn try_from(v: u64) -> Result<Self, String> {
        match u32::try_from(v) {
            Ok(v @ 1..=9999) => Ok(Version(v)),
            _ => Err("Only jobspec \"version\" 1-9999 is supported".into()),
        }
    }
}

/// One resource request: a type, a count and the resources requested inside it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawResource")]
pub struct Resource {
    /// Resource type (`slot` for a task slot).
    pub kind: String,
    /// How many.
    pub count: Count,
    /// Unit of the count, e.g. `GB`.
    pub unit: Option<String>,
    /// `Some(true)` asks for the whole subtree exclusively; `Some(false)` is refused under a slot
    /// at match time.
    pub exclusive: Option<bool>,
    /// Resources requested inside each of these.
    pub with: Vec<Resource>,
    /// The slot's label (required for slots).
    pub label: Option<String>,
    /// An explicit id (kept, not used in matching).
    pub id: Option<String>,
}

/// `exclusive` as libjobspec reads it: the scalar text `true` or `false`.
#[derive(Deserialize)]
#[serde(try_from = "String")]
struct Exclusive(bool);

impl TryFrom<String> for Exclusive {
    type Error = &'static str;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        match text.as_str() {
            "true" => Ok(Exclusive(true)),
            "false" => Ok(Exclusive(false)),
            _ => Err("Value of \"exclusive\" must be either \"true\" or \"false\""),
        }
    }
}

#[derive(Deserialize)]
struct RawResource {
    #[serde(rename = "type")]
    kind: Option<ResourceType>,
    count: Option<Count>,
    unit: Option<String>,
    exclusive: Option<Exclusive>,
    with: Option<Vec<Resource>>,
    label: Option<String>,
    id: Option<String>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_norway::Value>,
}

impl TryFrom<RawResource> for Resource {
    type Error = &'static str;

    fn try_from(raw: RawResource) -> Result<Self, Self::Error> {
        // The order of refusals is libjobspec's, and so are the texts.
        let kind = raw.kind.ok_or("Key \"type\" missing from resource")?.0;
        let count = raw.count.ok_or("Key \"count\" missing from resource")?;
        if kind == "slot" && raw.label.is_none() {
            return Err("All slots must be labeled");
        }
        if !raw.other.is_empty() {
            return Err("Unrecognized key in resource mapping");
        }
        Ok(Resource {
            kind,
            count,
            unit: raw.unit,
            exclusive: raw.exclusive.map(|e| e.0),
            with: raw.with.unwrap_or_default(),
            label: raw.label,
            id: raw.id,
        })
    }
}

/// A task: the command run in each slot and how many per slot.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawTask")]
pub struct Task {
    /// The command and its arguments.
    pub command: Vec<String>,
    /// The slot label the task runs in (not cross-checked, as in Fluxion).
    pub slot: String,
    /// How many tasks: one entry such as `per_slot: 1`.
    pub count: Option<BTreeMap<String, serde_norway::Value>>,
    /// Task distribution hint.
    pub distribution: Option<String>,
    /// Task attributes, kept as given.
    pub attributes: Option<serde_norway::Value>,
}

#[derive(Deserialize)]
struct RawTask {
    command: Option<Vec<String>>,
    slot: Option<String>,
    count: Option<BTreeMap<String, serde_norway::Value>>,
    distribution: Option<String>,
    attributes: Option<serde_norway::Value>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_norway::Value>,
}

impl TryFrom<RawTask> for Task {
    type Error = &'static str;

    fn try_from(raw: RawTask) -> Result<Self, Self::Error> {
        let command = raw.command.ok_or("Key \"command\" missing from task")?;
        let slot = raw.slot.ok_or("Key \"slot\" missing from task")?;
        if raw.count.as_ref().is_some_and(|c| c.len() != 1) {
            return Err("\"count\" in task must have exactly one entry");
        }
        // libjobspec only counts a task's keys, so an unknown key fits beside the optional ones.
        let entries = 2
            + usize::from(raw.count.is_some())
            + usize::from(raw.distribution.is_some())
            + usize::from(raw.attributes.is_some())
            + raw.other.len();
        if !(3..=5).contains(&entries) {
            return Err("impossible number of entries in task mapping");
        }
        Ok(Task {
            command,
            slot,
            count: raw.count,
            distribution: raw.distribution,
            attributes: raw.attributes,
        })
    }
}

/// `attributes.system`: the duration and the keys Fluxion reads, other keys kept.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct SystemAttributes {
    /// Requested duration in seconds; 0 or absent means the whole graph duration.
    pub duration: Option<f64>,
    /// Queue name.
    pub queue: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Environment, kept as given.
    pub environment: Option<serde_norway::Value>,
    /// RFC 31 constraints, kept as given.
    pub constraints: Option<serde_norway::Value>,
    /// Any other system attribute.
    #[serde(flatten)]
    pub optional: BTreeMap<String, serde_norway::Value>,
}

/// The jobspec's `attributes`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(try_from = "RawAttributes")]
pub struct Attributes {
    /// User attributes, kept as given.
    pub user: Option<serde_norway::Value>,
    /// System attributes.
    pub system: Option<SystemAttributes>,
}

#[derive(Deserialize)]
struct RawAttributes {
    user: Option<serde_norway::Value>,
    system: Option<SystemAttributes>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_norway::Value>,
}

impl TryFrom<RawAttributes> for Attributes {
    type Error = &'static str;

    fn try_from(raw: RawAttributes) -> Result<Self, Self::Error> {
        if !raw.other.is_empty() {
            return Err("Unknown key in \"attributes\"");
        }
        Ok(Attributes {
            user: raw.user,
            system: raw.system,
        })
    }
}

/// An RFC 14 jobspec.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawJobspec")]
pub struct Jobspec {
    /// Format version (1…9999; no difference in meaning).
    pub version: Version,
    /// The resource request tree.
    pub resources: Vec<Resource>,
    /// Tasks.
    pub tasks: Vec<Task>,
    /// Attributes (null is allowed, absence is not).
    pub attributes: Option<Attributes>,
}

/// The top-level mapping before libjobspec's checks; `attributes: null` is told apart from
/// an absent `attributes`.
#[derive(Deserialize)]
struct RawJobspec {
    version: Option<Version>,
    resources: Option<Vec<Resource>>,
    tasks: Option<Vec<Task>>,
    #[serde(default, deserialize_with = "present")]
    attributes: Option<Option<Attributes>>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_norway::Value>,
}

/// Marks a field as present even when its value is null.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

impl TryFrom<RawJobspec> for Jobspec {
    type Error = &'static str;

    fn try_from(raw: RawJobspec) -> Result<Self, Self::Error> {
        // libjobspec's texts, including its "resource" for the missing `resources` key.
        let version = raw
            .version
            .ok_or("Missing key \"version\" in top level mapping")?;
        let resources = raw
            .resources
            .ok_or("Missing key \"resource\" in top level mapping")?;
        let tasks = raw
            .tasks
            .ok_or("Missing key \"tasks\" in top level mapping")?;
        let attributes = raw
            .attributes
            .ok_or("Missing key \"attributes\" in top level mapping")?;
        if !raw.other.is_empty() {
            return Err("Top mapping in jobspec must have exactly four entries");
        }
        Ok(Jobspec {
            version,
            resources,
            tasks,
            attributes,
        })
    }
}

impl Jobspec {
    /// Reads a jobspec file, refusing resource types not in `types`.
    pub fn from_file(path: &Path, types: &Interner) -> Result<Self, JobspecError> {
        let text = std::fs::read_to_string(path).map_err(|source| JobspecError::Io {
            file: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path, types)
    }

    /// Reads a jobspec from YAML (or JSON) text, refusing resource types not in `types`;
    /// `file` names it in errors.
    pub fn parse(text: &str, file: &Path, types: &Interner) -> Result<Self, JobspecError> {
        let known = (0..types.len() as u32)
            .map(|i| types.name(i).to_string())
            .collect();
        KNOWN_TYPES.with(|k| *k.borrow_mut() = Some(known));
        let _guard = KnownTypesGuard;
        serde_norway::from_str(text).map_err(|e| locate(e, file))
    }

    /// The requested duration in seconds, if one was given.
    pub fn duration(&self) -> Option<f64> {
        self.attributes.as_ref()?.system.as_ref()?.duration
    }
}

/// Splits serde's `resources[0].with[1]: ` prefix from the message, so the message is
/// libjobspec's text alone.
fn split_path(text: &str) -> (String, String) {
    match text.split_once(": ") {
        Some((path, message)) if !path.is_empty() && !path.contains(' ') => {
            (path.to_string(), message.to_string())
        }
        _ => (String::new(), text.to_string()),
    }
}

/// Turns a YAML error into one that names the file, line and column once.
fn locate(error: serde_norway::Error, file: &Path) -> JobspecError {
    let text = error.to_string();
    match error.location() {
        Some(at) => {
            let suffix = format!(" at line {} column {}", at.line(), at.column());
            let (path, message) = split_path(&text.replace(&suffix, ""));
            JobspecError::Invalid {
                file: file.to_path_buf(),
                line: at.line(),
                column: at.column(),
                path,
                message,
            }
        }
        None => {
            let (path, message) = split_path(&text);
            JobspecError::Unplaced {
                file: file.to_path_buf(),
                path,
                message,
            }
        }
    }
}
