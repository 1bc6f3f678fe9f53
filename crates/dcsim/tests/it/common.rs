//! Helpers: specs with inline traces, running to completion.

use dcsim::fabric::LossRule;
use dcsim::{RunOutput, Simulation, Spec};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Writes `rows` (CSV lines without header: `id,src,dst,size_bytes,start_s[,deadline_s[,tenant]]`)
/// to a fresh temporary trace file, under a header naming as many columns as the widest row
/// (shorter rows get empty trailing fields: no deadline, tenant 0).
pub fn trace_file(rows: &[&str]) -> PathBuf {
    const COLUMNS: [&str; 7] =
        ["id", "src", "dst", "size_bytes", "start_s", "deadline_s", "tenant"];
    let dir = std::env::temp_dir().join(format!("dcsim-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("trace-{}.csv", COUNTER.fetch_add(1, Ordering::Relaxed)));
    let fields = |r: &str| r.split(',').count();
    let width = rows.iter().map(|r| fields(r)).max().unwrap_or(5);
    let mut text = COLUMNS[..width].join(",");
    text.push('\n');
    for r in rows {
        text.push_str(r);
        text.push_str(&",".repeat(width - fields(r)));
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// A spec whose flows come from `rows`.
pub fn spec_with_trace(toml: &str, rows: &[&str]) -> Spec {
    let path = trace_file(rows);
    let full = format!("{toml}\n[workload]\nmatrix = \"{}\"\nflows = 0\n", path.display());
    Spec::from_toml_str(&full).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `spec` to completion with optional scripted losses and checks the run invariants.
pub fn run(spec: Spec, losses: &[LossRule]) -> RunOutput {
    run_mode(spec, losses, None)
}

/// Like [`run`], and also through the event-driven FIFO port path, which must give exactly
/// the same flow completion times on these hand-sized scenarios.
pub fn run_both_port_paths(spec: Spec, losses: &[LossRule]) -> RunOutput {
    let fast = run_mode(spec.clone(), losses, Some(true));
    let events = run_mode(spec, losses, Some(false));
    assert_eq!(
        fast.records.finish_ps, events.records.finish_ps,
        "timeline and event-driven ports disagree"
    );
    fast
}

/// Like [`run`], on the FIFO timeline (`Some(true)`), the event-driven port path
/// (`Some(false)`) or the spec's own choice (`None`).
pub fn run_mode(spec: Spec, losses: &[LossRule], timeline: Option<bool>) -> RunOutput {
    let out = simulate(spec, losses, timeline);
    check_invariants(&out);
    out
}

/// Runs `spec` for a scenario that must end with flows still open (a loss nothing recovers):
/// the invariants of [`check_invariants`] but "every flow finished". Debug builds assert on a
/// stalled flow inside the run, so such a test expects that panic there.
pub fn run_leaving_flows_open(spec: Spec, losses: &[LossRule]) -> RunOutput {
    let out = simulate(spec, losses, None);
    check_packets_and_finished_flows(&out);
    out
}

fn simulate(mut spec: Spec, losses: &[LossRule], timeline: Option<bool>) -> RunOutput {
    if let Some(t) = timeline {
        spec.engine.fifo_timeline = t;
    }
    let mut sim = Simulation::new(spec).unwrap();
    for &l in losses {
        sim = sim.with_loss(l);
    }
    sim.run(&mut |_| true).unwrap()
}

/// Conservation, FCT ≥ ideal, every flow finished.
pub fn check_invariants(out: &RunOutput) {
    check_packets_and_finished_flows(out);
    assert_eq!(out.summary.flows_completed, out.summary.flows_total, "unfinished flows");
}

/// Conservation, and FCT ≥ ideal for every flow that finished.
fn check_packets_and_finished_flows(out: &RunOutput) {
    let s = &out.summary;
    assert_eq!(s.counters.conservation_error, 0, "packets unaccounted for");
    assert_eq!(s.counters.fct_below_ideal, 0, "a flow beat the idle network");
    for i in 0..out.records.len() {
        let Some(fct) = out.records.fct(i) else { continue };
        assert!(
            fct.as_ps() >= out.records.ideal_ps[i],
            "flow {i}: fct {} < ideal {}",
            fct.as_ps(),
            out.records.ideal_ps[i]
        );
    }
}

/// FCT of flow `i` in picoseconds.
pub fn fct_ps(out: &RunOutput, i: usize) -> u64 {
    out.records.fct(i).expect("finished").as_ps()
}

/// Nanoseconds → picoseconds.
pub fn ns(x: u64) -> u64 {
    x * 1000
}
