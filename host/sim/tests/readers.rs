//! Trace readers: SWF lines and headers, dropped-job counting, gzip, and bad input.

mod common;

use std::io::Write;

use sluice_sim::swf::SwfReader;
use sluice_sim::{JobSource, ReadError, Workload};

const HEADER: &str = "; Version: 2.2\n; Computer: test machine\n; MaxNodes: 338 (batch partition; 512 total)\n; Information: http://a.example/\n;              http://b.example/\n; UnixStartTime: 1000\n;\n";

fn read(
    text: &str,
) -> (
    Vec<Result<sluice_sim::WorkloadJob, ReadError>>,
    SwfReader<&[u8]>,
) {
    let mut reader = SwfReader::new(text.as_bytes(), "t.swf").expect("header reads");
    let jobs = reader.by_ref().collect();
    (jobs, reader)
}

#[test]
fn processors_and_requested_time_fall_back_as_documented() {
    let text = format!(
        "{HEADER}\
         1 0 5 100 4 -1 -1 8 200 -1 1 3 4 -1 -1 -1 -1 -1\n\
         2 10 5 100 4 -1 -1 -1 -1 -1 1 3 4 -1 -1 -1 -1 -1\n\
         3 20 5 100.6 -1 -1 -1 2 0 -1 1 3 4 -1 -1 -1 -1 -1\n"
    );
    let (jobs, reader) = read(&text);
    let jobs: Vec<_> = jobs.into_iter().map(Result::unwrap).collect();
    // Field 8 when positive, else field 5; field 9 when positive, else the run time.
    assert_eq!(jobs.iter().map(|j| j.procs).collect::<Vec<_>>(), [8, 4, 2]);
    assert_eq!(
        jobs.iter().map(|j| j.requested_time).collect::<Vec<_>>(),
        [200, 100, 101]
    );
    assert_eq!(jobs[2].run_time, 101);
    assert_eq!((jobs[0].swf.user, jobs[0].swf.group), (3, 4));
    assert_eq!(reader.header().max_nodes(), Some(338));
    assert_eq!(reader.header().unix_start_time(), Some(1000));
    assert_eq!(
        reader.header().get("Information"),
        Some("http://a.example/\nhttp://b.example/")
    );
}

#[test]
fn negative_run_times_and_missing_processors_are_dropped_and_counted() {
    let text = format!(
        "{HEADER}\
         1 0 5 -1 4 -1 -1 4 200 -1 0 1 1 -1 -1 -1 -1 -1\n\
         2 1 5 30 -1 -1 -1 -1 200 -1 1 1 1 -1 -1 -1 -1 -1\n\
         ; a comment between jobs\n\
         \n\
         3 2 5 30 0 -1 -1 0 200 -1 1 1 1 -1 -1 -1 -1 -1\n\
         4 3 5 30 1 -1 -1 1 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
    );
    let (jobs, reader) = read(&text);
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].as_ref().unwrap().id, 4);
    assert_eq!(reader.dropped().negative_run_time, 1);
    assert_eq!(reader.dropped().no_processors, 2);
    assert_eq!(JobSource::dropped(&reader), 3);
}

#[test]
fn bad_lines_name_file_line_and_field() {
    let short = format!("{HEADER}1 0 5 30 4\n");
    let (jobs, _) = read(&short);
    assert_eq!(
        jobs[0].as_ref().unwrap_err().to_string(),
        "t.swf:8: expected 18 SWF fields, found 5"
    );

    let word = format!("{HEADER}1 0 5 thirty 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n");
    let (jobs, _) = read(&word);
    assert_eq!(
        jobs[0].as_ref().unwrap_err().to_string(),
        "t.swf:8: field 4 (run time): expected a number (-1 if unknown), found `thirty`"
    );

    let unsorted = format!(
        "{HEADER}1 50 5 30 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n2 40 5 30 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n3 60 5 30 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
    );
    let (jobs, _) = read(&unsorted);
    // The error ends the stream: job 3 is never yielded.
    assert_eq!(jobs.len(), 2);
    assert!(matches!(
        jobs[1],
        Err(ReadError::Unsorted {
            line: 9,
            previous: 50,
            found: 40,
            ..
        })
    ));
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let err = Workload::open(std::path::Path::new("/nonexistent/trace.swf"))
        .err()
        .unwrap();
    assert!(matches!(err, ReadError::Io { .. }));
    assert!(
        err.to_string()
            .starts_with("/nonexistent/trace.swf: cannot read")
    );
}

#[test]
fn the_gzipped_kth_trace_streams_every_record() {
    let mut workload = Workload::open(&common::kth_path()).unwrap();
    let header = workload.swf_header().unwrap().clone();
    let kept = workload.by_ref().map(Result::unwrap).count() as u64;
    // A complete cleaned x.2-style file has exactly MaxRecords data lines.
    assert_eq!(Some(kept + workload.dropped()), header.expected_records());
    assert_eq!(workload.dropped(), 1);
    assert_eq!(workload.machine_procs(), Some(100));
    assert_eq!(header.get("TimeZoneString"), Some("Europe/Stockholm"));
}

#[test]
fn json_lines_files_are_recognised_by_extension() {
    let dir = std::env::temp_dir().join(format!("sluice-sim-readers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("w.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    writeln!(file, r#"{{"id": 1, "submit": 0, "run_time": 60, "tasks": 2, "cpus_per_task": 4, "time_limit": 120}}"#).unwrap();
    writeln!(
        file,
        r#"{{"id": 2, "submit": 5, "run_time": 60, "tasks": "two"}}"#
    )
    .unwrap();
    drop(file);
    let jobs: Vec<_> = Workload::open(&path).unwrap().collect();
    std::fs::remove_dir_all(&dir).unwrap();
    let first = jobs[0].as_ref().unwrap();
    assert_eq!((first.procs, first.requested_time), (8, 120));
    let message = jobs[1].as_ref().unwrap_err().to_string();
    assert!(
        message.contains("w.jsonl:2: invalid type: string \"two\""),
        "{message}"
    );
}
