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
        /// What was expected.
        message: String,
    },
    /// The text is not a valid jobspec and the parser gave no position.
    #[error("{file}: {message}")]
    Unplaced {
        /// The jobspec file.
        file: PathBuf,
        /// What was expected.
        message: String,
    },
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
            Err(format!(
                "value of \"type\" must be a resource type known to fluxion, found `{name}`"
            ))
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
            _ => Err(format!(
                "version must be an integer from 1 to 9999, found {v}"
            )),
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
    /// The slot's label (present exactly for slots).
    pub label: Option<String>,
    /// An explicit id (kept, not used in matching).
    pub id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResource {
    #[serde(rename = "type")]
    kind: ResourceType,
    count: Count,
    unit: Option<String>,
    exclusive: Option<bool>,
    #[serde(default)]
    with: Vec<Resource>,
    label: Option<String>,
    id: Option<String>,
}

impl TryFrom<RawResource> for Resource {
    type Error = String;

    fn try_from(raw: RawResource) -> Result<Self, String> {
        let kind = raw.kind.0;
        match (kind.as_str(), &raw.label) {
            ("slot", None) => return Err("a slot must have a label".into()),
            (other, Some(_)) if other != "slot" => {
                return Err(format!(
                    "only a slot may have a label, found one on `{other}`"
                ));
            }
            _ => {}
        }
        Ok(Resource {
            kind,
            count: raw.count,
            unit: raw.unit,
            exclusive: raw.exclusive,
            with: raw.with,
            label: raw.label,
            id: raw.id,
        })
    }
}

/// A task: the command run in each slot and how many per slot.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// The command and its arguments.
    pub command: Vec<String>,
    /// The slot label the task runs in (not cross-checked, as in Fluxion).
    pub slot: String,
    /// How many tasks, e.g. `{per_slot: 1}`.
    pub count: Option<BTreeMap<String, u64>>,
    /// Task distribution hint.
    pub distribution: Option<String>,
    /// Task attributes, kept as given.
    pub attributes: Option<serde_norway::Value>,
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
#[serde(deny_unknown_fields)]
pub struct Attributes {
    /// User attributes, kept as given.
    pub user: Option<serde_norway::Value>,
    /// System attributes.
    pub system: Option<SystemAttributes>,
}

/// An RFC 14 jobspec.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Jobspec {
    /// Format version (1…9999; no difference in meaning).
    pub version: Version,
    /// The resource request tree.
    pub resources: Vec<Resource>,
    /// Tasks.
    pub tasks: Vec<Task>,
    /// Attributes (may be null).
    pub attributes: Option<Attributes>,
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
        let jobspec: Jobspec = serde_norway::from_str(text).map_err(|e| locate(e, file))?;
        if jobspec.resources.is_empty() {
            return Err(JobspecError::Unplaced {
                file: file.to_path_buf(),
                message: "resources must list at least one resource".into(),
            });
        }
        Ok(jobspec)
    }

    /// The requested duration in seconds, if one was given.
    pub fn duration(&self) -> Option<f64> {
        self.attributes.as_ref()?.system.as_ref()?.duration
    }
}

/// Turns a YAML error into one that names the file, line and column once.
fn locate(error: serde_norway::Error, file: &Path) -> JobspecError {
    let text = error.to_string();
    match error.location() {
        Some(at) => {
            let suffix = format!(" at line {} column {}", at.line(), at.column());
            JobspecError::Invalid {
                file: file.to_path_buf(),
                line: at.line(),
                column: at.column(),
                message: text.replace(&suffix, ""),
            }
        }
        None => JobspecError::Unplaced {
            file: file.to_path_buf(),
            message: text,
        },
    }
}
