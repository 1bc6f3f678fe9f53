//! `dcsim-run [--threads N] SPEC.toml [key=value ...]`: runs a spec and prints the summary as
//! JSON. `--threads` (default 1) applies to the partitioned model (`engine.partitioned`).
//! The user-facing CLI is the Python `dcsim`; this binary exists for profiling without Python
//! (`perf record target/profiling/dcsim-run examples/quickstart.toml`).

use dcsim::Simulation;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut threads = 1;
    if args.first().is_some_and(|a| a == "--threads") {
        match args.get(1).and_then(|n| n.parse::<usize>().ok()).filter(|&n| n > 0) {
            Some(n) => threads = n,
            None => {
                eprintln!("error: --threads takes a positive number of threads");
                return ExitCode::from(2);
            }
        }
        args.drain(..2);
    }
    let Some(path) = args.first() else {
        eprintln!("usage: dcsim-run [--threads N] SPEC.toml [section.key=value ...]");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let spec = match dcsim::spec::spec_with_overrides(&text, &args[1..]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if threads > 1 && !spec.engine.partitioned {
        eprintln!(
            "note: --threads {threads}: the sequential model (the default) runs on one thread; set engine.partitioned = true for the partitioned model, which runs on several (its results differ from the sequential model's; docs/parallel.md)"
        );
    }
    let sim = match Simulation::new(spec) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match sim.with_threads(threads).run(&mut |_| true) {
        Ok(out) => {
            println!("{}", serde_json::to_string_pretty(&out.summary).expect("summary serializes"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
