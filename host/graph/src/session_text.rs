//! resource-query's fixed texts: the command table with its help notes, and numbers printed
//! and read as its C++ streams and `strtoll` do.

/// The commands, abbreviations and help notes, in resource-query's order.
pub(crate) const COMMANDS: [(&str, &str, &str); 18] = [
    (
        "match",
        "m",
        "Allocate or reserve matching resources (subcmd: allocate | allocate_with_satisfiability | allocate_orelse_reserve) | satisfiability | without_allocating | without_allocating_future: resource-query> match allocate jobspec",
    ),
    (
        "multi-match",
        "M",
        "Allocate or reserve for multiple jobspecs (subcmd: allocate | allocate_with_satisfiability | allocate_orelse_reserve | without_allocating | without_allocating_future): resource-query> multi-match allocate jobspec1 jobspec2 ...",
    ),
    (
        "update",
        "u",
        "Update resources with a JGF subgraph (subcmd: allocate | reserve), (reader: jgf | jgf_shorthand | rv1exec): resource-query> update allocate jgf jgf_file jobid starttime duration",
    ),
    (
        "attach",
        "j",
        "Attach a JGF subgraph to the resource graph: resource-query> attach jgf_file",
    ),
    (
        "remove",
        "j",
        "Remove a subgraph from the resource graph, specifying whether the target is a path (true) or idset (false): resource-query> remove (/path/to/node/ | idset) (true|false)",
    ),
    (
        "find",
        "f",
        "Find resources matched with criteria (predicates: status={up|down} sched-now={allocated|free} sched-future={reserved|free} agfilter={true|false} names=hostlist jobid-alloc=jobid jobid-span=jobid jobid-tag=jobid jobid-reserved=jobid property=name): resource-query> find status=down and sched-now=allocated",
    ),
    (
        "cancel",
        "c",
        "Cancel an allocation or reservation: resource-query> cancel jobid (optional subcmd: stats)",
    ),
    (
        "partial-cancel",
        "pc",
        "Partially release an allocation: resource-query> partial-cancel jobid (file format: jgf | rv1exec) R_to_cancel.file (optional subcmd: stats)",
    ),
    (
        "set-property",
        "p",
        "Add a property to a resource: resource-query> set-property resource PROPERTY=VALUE",
    ),
    (
        "get-property",
        "g",
        "Get all properties of a resource: resource-query> get-property resource",
    ),
    (
        "set-status",
        "t",
        "Set resource status on vertex: resource-query> set-status PATH_TO_VERTEX {up|down}",
    ),
    (
        "get-status",
        "e",
        "Get the graph resource vertex status: resource-query> get-status PATH_TO_VERTEX",
    ),
    ("list", "l", "List all jobs: resource-query> list"),
    (
        "info",
        "i",
        "Print info on a jobid: resource-query> info jobid",
    ),
    (
        "stat",
        "s",
        "Print overall stats: resource-query> stat jobid",
    ),
    (
        "cat",
        "a",
        "Print jobspec file: resource-query> cat jobspec",
    ),
    ("help", "h", "Print help message: resource-query> help"),
    ("quit", "q", "Quit the session: resource-query> quit"),
];

/// `strtoll`/`atoll` of a job id: leading digits, 0 when there are none.
pub(crate) fn parse_leading_int(s: &str) -> u64 {
    let digits: String = s
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().unwrap_or(0)
}

/// `strtoll (s, NULL, 10)`: an optional sign and the leading digits, saturating; 0 without
/// digits.
pub(crate) fn parse_leading_i64(s: &str) -> i64 {
    let s = s.trim_start();
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut n: i64 = 0;
    for b in rest.bytes().take_while(u8::is_ascii_digit) {
        let d = i64::from(b - b'0');
        n = if negative {
            n.saturating_mul(10).saturating_sub(d)
        } else {
            n.saturating_mul(10).saturating_add(d)
        };
    }
    n
}

/// A double as C++ streams print it by default (`%g` with six significant digits).
pub fn format_double(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if x == f64::MAX {
        return "1.79769e+308".into();
    }
    let exp = x.abs().log10().floor() as i32;
    if !(-5..6).contains(&exp) {
        let s = format!("{:.5e}", x);
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = trim_zeros(mantissa);
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{mantissa}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim_zeros(&format!("{:.*}", decimals, x)).to_owned()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}
