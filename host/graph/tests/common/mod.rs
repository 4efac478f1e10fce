//! Shared test helpers: wrapping recipe bodies in the standard GRUG key declarations, a
//! scratch directory of input files, and a resource-query session driven line by line.

#![allow(dead_code)]

use std::path::Path;

use sluice_graph::{
    Flow, GrugError, GrugLimits, MatchFormat, Matcher, Outputs, Recipe, ResourceGraph, Session,
    generate,
};

/// The 17 GRUG key declarations with the defaults every shipped recipe declares.
pub const KEYS: &str = include_str!("../data/keys.graphml.part");

/// A complete GraphML document around `body` (the `<node>` and `<edge>` elements).
pub fn document(body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n{KEYS}<graph id=\"g\" edgedefault=\"directed\">\n{body}</graph>\n</graphml>\n"
    )
}

/// Generates the graph of a recipe body under the default limits.
pub fn graph(body: &str) -> Result<ResourceGraph, GrugError> {
    let recipe = Recipe::parse(&document(body), Path::new("test.graphml"))?;
    generate(&recipe, GrugLimits::default())
}

/// A recipe `<node>` element.
pub fn node(id: &str, kind: &str, root: bool, extra: &str) -> String {
    let root = if root {
        "<data key=\"root\">1</data>"
    } else {
        ""
    };
    format!(
        "<node id=\"{id}\">{root}<data key=\"type\">{kind}</data><data key=\"basename\">{kind}</data>{extra}</node>\n"
    )
}

/// A recipe `<edge>` element with `<data>` entries given as `(key, value)`.
pub fn edge(source: &str, target: &str, data: &[(&str, &str)]) -> String {
    let data: String = data
        .iter()
        .map(|(k, v)| format!("<data key=\"{k}\">{v}</data>"))
        .collect();
    format!(
        "<edge id=\"{source}2{target}\" source=\"{source}\" target=\"{target}\">{data}</edge>\n"
    )
}

/// The path of the vertex named `name` in `subsystem`.
pub fn path_of(g: &ResourceGraph, subsystem: &str, name: &str) -> Option<String> {
    let s = g.subsystem_id(subsystem)?;
    let v = (0..g.vertex_count() as u32).find(|&v| g.name(v) == name)?;
    g.path(s, v)
}

/// Names of the vertices of `kind`, in creation order.
pub fn names(g: &ResourceGraph, kind: &str) -> Vec<String> {
    g.vertices_of_type(kind)
        .into_iter()
        .map(|v| g.name(v))
        .collect()
}

/// A directory of input files (jobspecs, R files) for one test, removed afterwards.
pub struct Workspace {
    /// Where the files are.
    pub dir: std::path::PathBuf,
}

impl Workspace {
    /// A fresh directory holding `files` (name, text).
    pub fn new(name: &str, files: &[(&str, &str)]) -> Self {
        let dir =
            std::env::temp_dir().join(format!("sluice-graph-{}-{}", std::process::id(), name));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let ws = Workspace { dir };
        for (file, text) in files {
            ws.write(file, text);
        }
        ws
    }

    /// Adds or replaces a file.
    pub fn write(&self, file: &str, text: &str) {
        std::fs::write(self.dir.join(file), text).unwrap();
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a session printed: the `-t` stream, stdout and stderr.
#[derive(Debug)]
pub struct Printed {
    /// The `-t` stream.
    pub out: String,
    /// Informational output.
    pub stdout: String,
    /// Errors.
    pub stderr: String,
}

/// Runs `commands` one line at a time in a session over `matcher`, whose files are read from
/// `base_dir`, until they end or one quits.
pub fn drive(
    matcher: Matcher,
    format: MatchFormat,
    elapse: bool,
    base_dir: &Path,
    commands: &str,
) -> Printed {
    let mut session = Session::new(matcher, format, elapse);
    session.set_base_dir(base_dir);
    let (mut out, mut stdout, mut stderr) = (Vec::new(), Vec::new(), Vec::new());
    for line in commands.lines() {
        let mut io = Outputs {
            out: &mut out,
            stdout: &mut stdout,
            stderr: &mut stderr,
        };
        if session.execute(line, &mut io).unwrap() == Flow::Quit {
            break;
        }
    }
    Printed {
        out: String::from_utf8(out).unwrap(),
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
    }
}
