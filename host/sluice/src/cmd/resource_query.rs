//! `sluice resource-query`: flux-sched's resource-query over sluice's graph crate — load a GRUG
//! or JGF resource graph, then read `match`/`cancel`/… commands from stdin.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

use anyhow::{Context, bail};
use sluice_graph::{
    Flow, JgfLimits, MatchFormat, MatchPolicy, Matcher, MatcherError, Outputs, ResourceGraph,
    Session, TraverserPolicy, format_double, join_prune_filter_options, policy_by_name, read_grug,
    read_jgf,
};
use sluice_policy::{SettingValue, Settings};
use sluice_runtime::Limits;
use sluice_runtime::wasm::vertex_scoring::MatchComponent;

/// Arguments of `sluice resource-query` (resource-query's options).
#[derive(clap::Args)]
pub struct Args {
    /// Resource graph file (GRUG GraphML or JGF).
    #[arg(short = 'L', long = "load-file", default_value = "conf/default")]
    load_file: PathBuf,
    /// Format of the load file: grug or jgf.
    #[arg(short = 'f', long = "load-format", default_value = "grug")]
    load_format: String,
    /// Keep only these types (hwloc/JGF readers in resource-query; ignored for GRUG).
    #[arg(short = 'W', long = "load-allowlist")]
    load_allowlist: Option<String>,
    /// Predefined matcher: CA, IBA, IBBA, PA, PFS1BA, C+IBA, C+IBBA, C+PA, C+PFS1BA, IB+IBBA,
    /// C+P+IBA, V+PFS1BA, VA or ALL (lower case too): the first subsystem dominant, the others
    /// auxiliary.
    #[arg(short = 'S', long = "match-subsystems", default_value = "CA")]
    match_subsystems: String,
    /// Match policy: first, high, low, hinode, lonode, hinodex, lonodex, firstnodex, locality,
    /// variation, or a custom `policy=high|low node_centric=… node_exclusive=… stop_on_1_matches=…` string.
    #[arg(short = 'P', long = "match-policy", default_value = "first")]
    match_policy: String,
    /// A match policy component (`match-policy` world) in place of the built-in policies; it
    /// gets the setting `policy` = the -P value (the bundle's ID component serves first, high,
    /// low, hinode, lonode, hinodex, lonodex and firstnodex by it).
    #[arg(long = "match-policy-file")]
    match_policy_file: Option<PathBuf>,
    /// Output format of matched resources: simple, pretty_simple, jgf, rlite, rv1, rv1_nosched.
    #[arg(short = 'F', long = "match-format", default_value = "simple")]
    match_format: String,
    /// Traverser policy: simple, or flexible (or-slots and `xor_slot` alternatives).
    #[arg(short = 'T', long = "traverser-policy", default_value = "simple")]
    traverser_policy: String,
    /// Subtree aggregate filters, HL-type:LL-type[,…]; repeatable, blank values ignored
    /// (default ALL:core,ALL:node).
    #[arg(short = 'p', long = "prune-filters")]
    prune_filters: Vec<String>,
    /// Write match and find output to this file instead of stdout.
    #[arg(short = 't', long = "test-output")]
    test_output: Option<PathBuf>,
    /// Pre-reserve the vertex vector (accepted for compatibility; 0 to 2,000,000).
    #[arg(short = 'r', long = "reserve-vtx-vec")]
    reserve_vtx_vec: Option<String>,
    /// Graph dump format at exit (dead in resource-query; accepted and ignored).
    #[arg(short = 'g', long = "graph-format")]
    graph_format: Option<String>,
    /// Graph dump basename at exit (dead in resource-query; accepted and ignored).
    #[arg(short = 'o', long = "graph-output")]
    graph_output: Option<String>,
    /// Print the graph load time and sizes, and per match the time and visit counts.
    #[arg(short = 'e', long = "elapse-time")]
    elapse_time: bool,
    /// Do not print the `resource-query> ` prompt.
    #[arg(short = 'd', long = "disable-prompt")]
    disable_prompt: bool,
}

/// A matcher set-up error; a subsystem without a root is reported with resource-query's own
/// words first (its traverser refuses to initialise).
fn initialize(e: MatcherError) -> anyhow::Error {
    match e {
        MatcherError::NoRoot(_) => anyhow::anyhow!(
            "initialize_matchers_and_traversers: ERROR: can't initialize traverser: {e}"
        ),
        other => other.into(),
    }
}

/// The graph and, for JGF, the vertices' properties.
type Loaded = (ResourceGraph, BTreeMap<u32, BTreeMap<String, String>>);

fn load_graph(args: &Args) -> anyhow::Result<Loaded> {
    let path = &args.load_file;
    if !path.exists() {
        bail!(
            "[ERROR] file does not exist for --load-file: {}",
            path.display()
        );
    }
    if path.is_dir() {
        bail!(
            "[ERROR] path passed to --load-file is a directory: {}",
            path.display()
        );
    }
    match args.load_format.as_str() {
        "grug" => Ok((read_grug(path)?, BTreeMap::new())),
        "jgf" => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let jgf = read_jgf(&text, JgfLimits::default())
                .with_context(|| format!("{}", path.display()))?;
            Ok((jgf.graph, jgf.extras.properties))
        }
        other => bail!("[ERROR] unknown format for --load-format: {other} (grug or jgf)"),
    }
}

/// `-e`'s start-up report: load time, sizes and index sizes.
fn print_load_report(
    graph: &ResourceGraph,
    elapse: f64,
    stdout: &mut dyn Write,
) -> std::io::Result<()> {
    let n = graph.vertex_count() as u32;
    let edges: usize = (0..graph.subsystems().len())
        .map(|s| graph.edge_count(s as u16))
        .sum();
    let types: HashSet<&str> = (0..n).map(|v| graph.kind(v)).collect();
    let names: HashSet<String> = (0..n).map(|v| graph.name(v)).collect();
    let paths: HashSet<String> = (0..graph.subsystems().len() as u16)
        .flat_map(|s| (0..n).filter_map(move |v| graph.path(s, v)))
        .collect();
    let mut ranks: BTreeMap<i32, usize> = BTreeMap::new();
    for v in 0..n {
        *ranks.entry(graph.rank(v)).or_default() += 1;
    }
    writeln!(stdout, "INFO: Graph Load Time: {}", format_double(elapse))?;
    writeln!(stdout, "INFO: Vertex Count: {n}")?;
    writeln!(stdout, "INFO: Edge Count: {edges}")?;
    writeln!(stdout, "INFO: by_type Key-Value Pairs: {}", types.len())?;
    writeln!(stdout, "INFO: by_name Key-Value Pairs: {}", names.len())?;
    writeln!(stdout, "INFO: by_path Key-Value Pairs: {}", paths.len())?;
    for (rank, count) in ranks {
        writeln!(stdout, "INFO: number of vertices with rank {rank}: {count}")?;
    }
    Ok(())
}

/// A byte buffer two writers can append to in turn.
#[derive(Clone, Default)]
struct SharedBuffer(Rc<RefCell<Vec<u8>>>);

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The policy `-P` names, or the component `--match-policy-file` names with `-P` as its
/// `policy` setting (default limits: a table call is one call per graph).
fn match_policy(args: &Args) -> anyhow::Result<Box<dyn MatchPolicy>> {
    let Some(path) = &args.match_policy_file else {
        return policy_by_name(&args.match_policy)
            .with_context(|| format!("match policy {}", args.match_policy));
    };
    let settings =
        Settings::default().with("policy", SettingValue::Text(args.match_policy.clone()));
    let engine = sluice_runtime::compile::WasmEngine::new(Some(super::plugin::cache_dir()));
    let component = MatchComponent::open(&engine, path, settings, Limits::default())?;
    Ok(Box::new(component))
}

/// Where command lines come from: a line editor on a terminal (history, editing, as
/// resource-query's readline), the raw bytes of stdin otherwise.
enum CommandSource<R> {
    /// A terminal.
    Editor(Box<rustyline::DefaultEditor>),
    /// A pipe or a file.
    Piped(R),
}

/// The line editor when stdin is a terminal, plain reading of `input` otherwise (whose bytes
/// are then read exactly as they come).
fn command_source<R: BufRead>(interactive: bool, input: R) -> anyhow::Result<CommandSource<R>> {
    if interactive {
        let editor = rustyline::DefaultEditor::new().context("starting the line editor")?;
        Ok(CommandSource::Editor(Box::new(editor)))
    } else {
        Ok(CommandSource::Piped(input))
    }
}

impl<R: BufRead> CommandSource<R> {
    fn is_terminal(&self) -> bool {
        matches!(self, CommandSource::Editor(_))
    }

    /// The next command line after showing `prompt` (empty with `-d`); `None` at the end of
    /// input (or Ctrl-C/Ctrl-D at the editor).
    fn next_line(
        &mut self,
        prompt: &str,
        stdout: &mut dyn Write,
    ) -> anyhow::Result<Option<String>> {
        match self {
            CommandSource::Editor(editor) => {
                stdout.flush()?;
                match editor.readline(prompt) {
                    Ok(line) => {
                        if !line.trim().is_empty() {
                            let _ = editor.add_history_entry(line.as_str());
                        }
                        Ok(Some(line))
                    }
                    Err(
                        rustyline::error::ReadlineError::Eof
                        | rustyline::error::ReadlineError::Interrupted,
                    ) => Ok(None),
                    Err(e) => Err(e).context("reading commands from the terminal"),
                }
            }
            CommandSource::Piped(input) => {
                if !prompt.is_empty() {
                    write!(stdout, "{prompt}")?;
                    stdout.flush()?;
                }
                let mut raw = Vec::new();
                if input
                    .read_until(b'\n', &mut raw)
                    .context("reading commands from stdin")?
                    == 0
                {
                    return Ok(None);
                }
                // Bytes that are not UTF-8 become U+FFFD: such a word is then an unknown
                // command or a file that cannot be opened, as in resource-query, rather than
                // the end of the session.
                let line = String::from_utf8_lossy(&raw);
                Ok(Some(line.trim_end_matches(['\n', '\r']).to_owned()))
            }
        }
    }
}

/// Runs `sluice resource-query`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let format = MatchFormat::from_name(&args.match_format).with_context(|| {
        format!(
            "[ERROR] unknown format for --match-format: {} (simple, pretty_simple, jgf, rlite, rv1 or rv1_nosched)",
            args.match_format
        )
    })?;
    let traverser = TraverserPolicy::from_name(&args.traverser_policy).with_context(|| {
        format!(
            "[ERROR] unknown traverser policy: {} (simple or flexible)",
            args.traverser_policy
        )
    })?;
    if let Some(r) = &args.reserve_vtx_vec {
        let n: i64 = r.trim().parse().unwrap_or(0);
        if !(0..=2_000_000).contains(&n) {
            eprintln!("WARN: out of range specified for --reserve-vtx-vec: {r}");
        }
    }
    let subsystems = sluice_graph::predefined_subsystems(&args.match_subsystems)?;
    let (dominant, auxiliary) = subsystems
        .split_first()
        .expect("every predefined matcher names a subsystem");
    let policy = match_policy(&args)?;
    let filters = join_prune_filter_options(args.prune_filters.iter().map(String::as_str));
    let start = Instant::now();
    let (graph, properties) = load_graph(&args)?;
    let mut matcher = Matcher::new(graph, dominant.name, policy, &filters).map_err(initialize)?;
    matcher.set_traverser(traverser);
    let auxiliary: Vec<&str> = auxiliary.iter().map(|s| s.name).collect();
    matcher
        .set_auxiliary_subsystems(&auxiliary)
        .map_err(initialize)?;
    for (v, props) in &properties {
        for (key, value) in props {
            matcher.set_property(*v, key, value);
        }
    }
    let load_time = start.elapsed().as_secs_f64();
    let stdout = std::io::stdout();
    let mut stdout = BufWriter::new(stdout.lock());
    if args.elapse_time {
        print_load_report(matcher.graph(), load_time, &mut stdout)?;
    }
    let mut out_file = match &args.test_output {
        Some(path) => Some(BufWriter::new(
            File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => None,
    };
    let mut session = Session::new(matcher, format, args.elapse_time);
    let stdin = std::io::stdin();
    let mut stderr = std::io::stderr();
    let prompt = if args.disable_prompt {
        ""
    } else {
        "resource-query> "
    };
    let mut source = command_source(stdin.is_terminal(), stdin.lock())?;
    loop {
        // resource-query loops forever at end of input; ending there is the one deviation.
        let Some(line) = source.next_line(prompt, &mut stdout)? else {
            break;
        };
        let line = line.as_str();
        let flow = match out_file.as_mut() {
            Some(out) => {
                let mut io = Outputs {
                    out,
                    stdout: &mut stdout,
                    stderr: &mut stderr,
                };
                session.execute(line, &mut io)?
            }
            None => {
                // Without -t both streams are stdout, interleaved in the order written.
                let shared = SharedBuffer::default();
                let (mut out, mut info) = (shared.clone(), shared.clone());
                let mut io = Outputs {
                    out: &mut out,
                    stdout: &mut info,
                    stderr: &mut stderr,
                };
                let flow = session.execute(line, &mut io)?;
                stdout.write_all(&shared.0.borrow())?;
                flow
            }
        };
        if source.is_terminal() {
            stdout.flush()?;
        }
        if flow == Flow::Quit {
            break;
        }
    }
    stdout.flush()?;
    if let Some(f) = out_file.as_mut() {
        f.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{CommandSource, command_source};

    #[test]
    fn piped_input_is_read_byte_for_byte_with_the_prompt_before_each_read() {
        let input: &[u8] = b"match allocate j.yaml\r\n\xffquit\nlast";
        let mut source = command_source(false, input).unwrap();
        assert!(matches!(source, CommandSource::Piped(_)));
        assert!(!source.is_terminal());
        let mut stdout = Vec::new();
        let mut lines = Vec::new();
        while let Some(line) = source.next_line("resource-query> ", &mut stdout).unwrap() {
            lines.push(line);
        }
        assert_eq!(lines, ["match allocate j.yaml", "\u{fffd}quit", "last"]);
        // One prompt per read, the read that found the end included.
        assert_eq!(stdout, "resource-query> ".repeat(4).as_bytes());
        let mut quiet = command_source(false, &b"a\n"[..]).unwrap();
        let mut stdout = Vec::new();
        assert_eq!(
            quiet.next_line("", &mut stdout).unwrap().as_deref(),
            Some("a")
        );
        assert!(stdout.is_empty());
    }
}
