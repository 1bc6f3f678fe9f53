//! `dcsim-e2e [--threads N] [SPEC.toml] [section.key=value ...]`: the end-to-end benchmark.
//!
//! Runs one spec (default: the foundation benchmark, 144 hosts, web search, load 0.6, DCTCP,
//! 20,000 flows) in this process on N threads (default 1) and prints events/s, packets/s, wall
//! time and peak memory (VmHWM). `make bench` runs it; `docs/performance.md` records the
//! results.

use dcsim::Simulation;
use std::time::Instant;

const DEFAULT_SPEC: &str = r#"
seed = 1
[workload]
flows = 20000
[transport]
protocol = "dctcp"
"#;

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut threads = 1;
    if args.first().is_some_and(|a| a == "--threads") {
        threads = args.get(1).and_then(|n| n.parse().ok()).expect("--threads takes a count");
        args.drain(..2);
    }
    let (text, overrides) = match args.first() {
        Some(p) if p.ends_with(".toml") => {
            (std::fs::read_to_string(p).expect("readable spec"), &args[1..])
        }
        _ => (DEFAULT_SPEC.to_string(), &args[..]),
    };
    let spec = dcsim::spec::spec_with_overrides(&text, overrides)
        .unwrap_or_else(|e| panic!("bad spec: {e}"));
    let label = format!(
        "{:?} {:?} load {} flows {}",
        spec.transport.protocol, spec.workload.flow_sizes, spec.workload.load, spec.workload.flows
    );
    let t0 = Instant::now();
    let sim = Simulation::new(spec).expect("valid").with_threads(threads);
    let partitions = sim.partitions().count;
    let out = sim.run(&mut |_| true).expect("runs");
    let wall = t0.elapsed().as_secs_f64();
    let s = &out.summary;
    let packets = s.counters.data_packets_injected + s.counters.control_packets_injected;
    println!("run            {label}");
    println!("flows          {} / {}", s.flows_completed, s.flows_total);
    println!("threads        {threads} ({partitions} partitions)");
    println!("events         {}", s.counters.events);
    println!("wall_s         {wall:.3}");
    println!("events_per_s   {:.0}", s.counters.events as f64 / s.counters.wall_seconds);
    println!("packets_per_s  {:.0}", packets as f64 / s.counters.wall_seconds);
    println!("peak_rss_mb    {:.1}", peak_rss_mb());
    println!("mean_slowdown  {:.3}", s.mean_slowdown);
    println!("p99_slowdown   {:.3}", s.p99_slowdown);
}
