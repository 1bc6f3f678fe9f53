//! Issue 15 item 2: trace files are read by column name, with units in the names, every row
//! unless `workload.flows` says otherwise, unique ids, and a clear error for a Parquet file.

use dcsim::{Simulation, Spec, SpecError};
use std::path::PathBuf;

fn file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dcsim-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

/// A four-host star running the trace `text` (saved as `name`), with extra `[workload]` lines.
fn spec(text: &str, name: &str, workload: &str) -> Result<Spec, SpecError> {
    let p = file(name, text.as_bytes());
    Spec::from_toml_str(&format!(
        "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nmatrix = \"{}\"\n{workload}\n",
        p.display()
    ))
}

fn err(text: &str, name: &str) -> SpecError {
    spec(text, name, "").unwrap_err()
}

/// Issue 15 item 2: a header `start_time_us` was ignored and its values read as seconds; now
/// columns are matched by name, in any order, each time column in the unit its name gives.
#[test]
fn columns_are_matched_by_name_with_the_unit_in_the_name() {
    let starts_ps = |text: &str, name: &str| {
        let out =
            Simulation::new(spec(text, name, "").unwrap()).unwrap().run(&mut |_| true).unwrap();
        (out.records.start_ps.clone(), out.records.deadline_ps.clone(), out.records.id.clone())
    };
    let seconds = starts_ps(
        "id,src,dst,size_bytes,start_s,deadline_s\n7,0,1,1000,0.000002,0.0005\n9,2,3,3000,0.000001,\n",
        "s.csv",
    );
    let micros = starts_ps(
        "start_us,size_bytes,dst,src,deadline_us,id\n2,1000,1,0,500,7\n1,3000,3,2,,9\n",
        "us.csv",
    );
    assert_eq!(seconds, micros);
    let (start, deadline, id) = micros;
    assert_eq!(id, vec![9, 7], "sorted by start time");
    assert_eq!(start, vec![1_000_000, 2_000_000], "microseconds, not seconds");
    // The deadline is relative to the flow's start.
    assert_eq!(deadline[1], 2_000_000 + 500_000_000);
    assert_eq!(deadline[0], u64::MAX, "an empty deadline is none");
    let ns = starts_ps("id,src,dst,size_bytes,start_ns\n1,0,1,1000,1500\n", "ns.csv");
    let ms = starts_ps("id,src,dst,size_bytes,start_ms\n1,0,1,1000,0.0015\n", "ms.csv");
    assert_eq!(ns.0, vec![1_500_000]);
    assert_eq!(ms.0, ns.0);
}

/// Issue 15 item 2: an unknown column (the issue's `start_time_us`) is rejected with the names
/// a header may use.
#[test]
fn an_unknown_column_is_rejected_listing_the_allowed_names() {
    let e = err("id,src,dst,size_bytes,start_time_us\n0,0,1,1000,5\n", "unknown.csv");
    assert_eq!(e.path, "workload.matrix");
    for needle in [
        "line 1",
        "unknown column `start_time_us`",
        "did you mean `start_us`?",
        "start_s/start_ms/start_us/start_ns",
        "deadline_s/deadline_ms/deadline_us/deadline_ns",
        "tenant",
    ] {
        assert!(e.message.contains(needle), "{needle}: {}", e.message);
    }
    let e = err("ID,src,dst,size_bytes,start_s\n0,0,1,1000,5\n", "case.csv");
    assert!(e.message.contains("column names are lower case: `id`"), "{}", e.message);
    let e = err("id,src,dst,size_bytes,start\n0,0,1,1000,5\n", "unitless.csv");
    assert!(e.message.contains("carries its unit: `start_s`, `start_ms`"), "{}", e.message);
    for (header, needle) in [
        ("id,src,dst,size_bytes", "the header has no start time (`start_s`"),
        ("id,src,size_bytes,start_s", "no `dst` column"),
        (
            "id,src,dst,size_bytes,start_s,start_us",
            "`start_s` and `start_us` give the same quantity",
        ),
        ("id,src,dst,src,size_bytes,start_s", "column `src` appears twice"),
        ("0,0,1,1000,0", "must be a header naming the columns"),
    ] {
        let e = err(&format!("{header}\n0,0,1,1000,0\n"), "header.csv");
        assert!(e.message.contains(needle), "{header}: {}", e.message);
    }
    let e = err("id,src,dst,size_bytes,start_s\n0,0,1,1000\n", "short.csv");
    assert!(
        e.message.contains("line 2: 4 fields, but the header names 5 columns"),
        "{}",
        e.message
    );
}

/// Issue 15 item 2: duplicate flow ids are rejected, naming both lines.
#[test]
fn duplicate_flow_ids_are_rejected_naming_the_lines() {
    let e =
        err("id,src,dst,size_bytes,start_s\n4,0,1,1000,0\n5,1,2,1000,0\n4,2,3,1000,0\n", "dup.csv");
    assert_eq!(e.path, "workload.matrix");
    assert!(e.message.contains("line 4: id 4 is already used on line 2"), "{}", e.message);
}

/// Issue 15 item 2: the default `flows = 20000` silently cut a 20,500-row trace short; a trace
/// now runs every row unless `workload.flows` is set, and a larger `flows` is an error.
#[test]
fn a_trace_runs_every_row_unless_flows_is_set() {
    let mut text = String::from("id,src,dst,size_bytes,start_us\n");
    for k in 0..20_500u32 {
        text.push_str(&format!("{k},{},{},100,{k}\n", k % 4, (k + 1) % 4));
    }
    let total = |workload: &str| {
        let s = spec(&text, "long.csv", workload).unwrap();
        let net = dcsim::topology::Network::build(&s.topology, &|_| {
            (
                dcsim::queue::PortQueue::Timeline(dcsim::queue::DropTail::new(100_000)),
                dcsim::queue::EcnMarking::Off,
            )
        });
        (s.workload.flows, dcsim::workload::Generator::new(&s, &net).unwrap().total())
    };
    assert_eq!(total(""), (0, 20_500), "every row by default");
    assert_eq!(total("flows = 0"), (0, 20_500));
    assert_eq!(total("flows = 300"), (300, 300), "an explicit limit: the first rows by start");
    let e = spec(&text, "long.csv", "flows = 30000").unwrap_err();
    assert_eq!(e.path, "workload.flows");
    assert!(
        e.message.contains("30000 flows, but /") && e.message.contains("20500 rows"),
        "{}",
        e.message
    );
    // Other matrices keep their default.
    assert_eq!(Spec::from_toml_str("").unwrap().workload.flows, 20_000);
}

/// Issue 15 item 2: a Parquet trace failed with "stream did not contain valid UTF-8"; the core
/// (and the `dcsim-run` binary) now says what the file is and where Parquet is read.
#[test]
fn a_parquet_or_binary_trace_gets_a_clear_error() {
    let p = file("flows.parquet", b"PAR1\x15\x04\x15\x00\xff\xfePAR1");
    let e =
        Spec::from_toml_str(&format!("[workload]\nmatrix = \"{}\"\n", p.display())).unwrap_err();
    assert_eq!(e.path, "workload.matrix");
    assert!(
        e.message.contains("is a Parquet file") && e.message.contains("dcsim.run"),
        "{}",
        e.message
    );
    assert!(!e.message.contains("UTF-8"), "{}", e.message);
    let p = file("book.csv", b"id,src\xff\xfe");
    let e =
        Spec::from_toml_str(&format!("[workload]\nmatrix = \"{}\"\n", p.display())).unwrap_err();
    assert!(e.message.contains("is not a CSV text file (byte 6 is not UTF-8)"), "{}", e.message);
    // A missing Parquet path is a missing trace file, not an unknown matrix name.
    let e = Spec::from_toml_str("[workload]\nmatrix = \"/nonexistent/t.parquet\"\n").unwrap_err();
    assert!(e.message.contains("cannot read trace file /nonexistent/t.parquet"), "{}", e.message);
}

/// Quoted fields and CRLF line ends (spreadsheets, pandas with `quoting`) read as plain ones.
#[test]
fn quoted_fields_and_crlf_lines_are_read() {
    let s = spec(
        "\"id\",\"src\",\"dst\",\"size_bytes\",\"start_s\",\"tenant\"\r\n\"1\",0,1,\"1000\",0,\"\"\r\n",
        "quoted.csv",
        "",
    )
    .unwrap();
    let out = Simulation::new(s).unwrap().run(&mut |_| true).unwrap();
    assert_eq!(out.records.id, vec![1]);
    assert_eq!(out.records.tenant, vec![0]);
}
