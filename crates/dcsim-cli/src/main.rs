//! `dcsim-run SPEC.toml [key=value ...]`: runs a spec and prints the summary as JSON.
//! The user-facing CLI is the Python `dcsim`; this binary exists for profiling without Python
//! (`perf record target/profiling/dcsim-run examples/quickstart.toml`).

use dcsim::Simulation;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: dcsim-run SPEC.toml [section.key=value ...]");
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
    let sim = match Simulation::new(spec) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match sim.run(&mut |_| true) {
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
