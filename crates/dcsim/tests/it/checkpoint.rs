//! Checkpoints (`Simulation::with_checkpoints`): a run stopped at every mark of 2¹⁶ events
//! and resumed from its checkpoint each time ends exactly as the uninterrupted run does, for
//! every digest case (every protocol, topology kind, traffic matrix and port discipline).

use crate::digests::{case_spec, cases, flow_table_digest, recorded_digests, trace_path};
use dcsim::{RunError, Simulation, Spec};
use std::path::Path;
use std::time::Duration;

/// One mark: a sitting stops at the first mark it reaches.
const BUDGET: u64 = 1 << 16;

/// The run's summary without its wall time and the rate derived from it.
fn summary_json(out: &dcsim::RunOutput) -> serde_json::Value {
    let mut v = serde_json::to_value(&out.summary).unwrap();
    let fields = v.as_object_mut().unwrap();
    fields.remove("wall_seconds");
    fields.remove("events_per_sec");
    v
}

/// Runs `spec` in sittings of [`BUDGET`] events, each resumed from the checkpoint the last left.
fn run_in_sittings(spec: &Spec, path: &Path) -> (dcsim::RunOutput, u32) {
    let mut sittings = 0;
    loop {
        sittings += 1;
        assert!(sittings < 10_000, "a run that never ends");
        let sim = Simulation::new(spec.clone())
            .unwrap()
            .with_checkpoints(path, Duration::from_secs(86_400))
            .with_event_budget(BUDGET);
        match sim.run(&mut |_| true) {
            Ok(out) => return (out, sittings),
            Err(RunError::Interrupted(_)) => assert!(path.exists(), "no checkpoint written"),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn every_digest_case_resumed_at_every_mark_ends_as_recorded() {
    let trace = trace_path();
    let want = recorded_digests();
    let dir = std::env::temp_dir().join(format!("dcsim-checkpoints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut interrupted = 0;
    for (name, overrides) in cases() {
        let spec = case_spec(&overrides, &trace);
        let path = dir.join(format!("{name}.ckpt"));
        if spec.engine.partitioned {
            // One event queue per partition: refused, naming the field.
            let sim = Simulation::new(spec).unwrap().with_checkpoints(&path, Duration::ZERO);
            let Err(err) = sim.run(&mut |_| true) else {
                panic!("{name}: a partitioned run refuses checkpoints")
            };
            assert!(err.to_string().contains("engine.partitioned"), "{name}: {err}");
            continue;
        }
        let whole = Simulation::new(spec.clone()).unwrap().run(&mut |_| true).unwrap();
        let (out, sittings) = run_in_sittings(&spec, &path);
        assert_eq!(flow_table_digest(&out.records), want[name], "{name}: {sittings} sittings");
        assert_eq!(summary_json(&out), summary_json(&whole), "{name}: {sittings} sittings");
        assert_eq!(out.timeseries.t_us, whole.timeseries.t_us, "{name}");
        if sittings > 1 {
            interrupted += 1;
        }
        std::fs::remove_file(&path).ok();
    }
    // Most cases run well past one mark, so most were stopped and resumed at least once.
    assert!(interrupted >= cases().len() / 2, "only {interrupted} cases were interrupted");
}

/// What the digest cases leave out: the recordings (time series, port samples, packet trace),
/// long-lived flows, shared switch memories and NIC-clocked pFabric hosts, each stopped at every mark and resumed; every
/// output compared with the uninterrupted run's (the recordings through their Debug form).
#[test]
fn recordings_long_lived_flows_and_shared_memories_resume_exactly() {
    let trace = trace_path();
    let dir = std::env::temp_dir().join(format!("dcsim-checkpoint-more-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &[&str]); 4] = [
        (
            "recordings",
            &[
                "transport.protocol=pias",
                "workload.flows=150",
                "output.timeseries_us=20",
                "output.ports_sample_us=50",
                "output.packet_trace=true",
            ],
        ),
        ("long-lived", &["transport.protocol=dctcp", "workload.long_lived_flows=2"]),
        (
            "shared-memory",
            &[
                "transport.protocol=tcp",
                "topology.shared_buffer_bytes=200000",
                "topology.buffer_alpha=1",
            ],
        ),
        (
            "nic-clocked",
            &[
                "transport.protocol=pfabric",
                "pfabric.rate_control=linerate",
                "pfabric.sending=nic-clocked",
            ],
        ),
    ];
    for (name, overrides) in cases {
        let spec = case_spec(overrides, &trace);
        let path = dir.join(format!("{name}.ckpt"));
        let whole = Simulation::new(spec.clone()).unwrap().run(&mut |_| true).unwrap();
        let (out, sittings) = run_in_sittings(&spec, &path);
        assert!(sittings > 1, "{name}: never stopped");
        // The scenario records what it is meant to.
        let c = &whole.summary.counters;
        match name {
            "recordings" => assert!(
                c.timeseries_rows > 0 && c.ports_rows > 0 && c.packets_rows > 0,
                "{name}: a recording is empty"
            ),
            "long-lived" => assert!(c.long_lived_bytes_delivered > 0, "{name}: no long-lived flow"),
            _ => {}
        }
        assert_eq!(flow_table_digest(&out.records), flow_table_digest(&whole.records), "{name}");
        assert_eq!(summary_json(&out), summary_json(&whole), "{name}");
        assert_eq!(format!("{:?}", out.timeseries), format!("{:?}", whole.timeseries), "{name}");
        assert_eq!(format!("{:?}", out.ports), format!("{:?}", whole.ports), "{name}");
        assert_eq!(format!("{:?}", out.packets), format!("{:?}", whole.packets), "{name}");
        std::fs::remove_file(&path).ok();
    }
}

/// The error of a run of `spec` told to resume from `path`.
fn refusal(spec: Spec, path: &Path) -> String {
    let run = Simulation::new(spec)
        .unwrap()
        .with_checkpoints(path, Duration::from_secs(86_400))
        .run(&mut |_| true);
    let Err(err) = run else { panic!("the checkpoint in {} is refused", path.display()) };
    err.to_string()
}

#[test]
fn a_checkpoint_resumes_only_its_own_spec() {
    let trace = trace_path();
    let dir = std::env::temp_dir().join(format!("dcsim-checkpoint-spec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.ckpt");
    let spec = case_spec(&["transport.protocol=phost"], &trace);
    let first = Simulation::new(spec.clone())
        .unwrap()
        .with_checkpoints(&path, Duration::from_secs(86_400))
        .with_event_budget(BUDGET)
        .run(&mut |_| true);
    assert!(matches!(first, Err(RunError::Interrupted(_))), "the budget stops the run");
    let other = case_spec(&["transport.protocol=phost", "workload.load=0.5"], &trace);
    let err = refusal(other, &path);
    assert!(err.contains("written for another spec"), "{err}");
    // Not a checkpoint at all.
    std::fs::write(&path, b"not a checkpoint").unwrap();
    let err = refusal(spec, &path);
    assert!(err.contains("not a dcsim checkpoint"), "{err}");
}
