//! `dcsim-run SPEC.toml [key=value ...]`: runs a spec and prints the summary as JSON.
//! The user-facing CLI is the Python `dcsim`; this binary exists for profiling without Python
//! (`perf record target/profiling/dcsim-run examples/quickstart.toml`).

use dcsim::{Simulation, Spec};
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
    let spec = match build_spec(&text, &args[1..]) {
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

/// Parses the TOML and applies dotted `section.key=value` overrides (values parsed as TOML,
/// falling back to a bare string).
fn build_spec(text: &str, overrides: &[String]) -> Result<Spec, String> {
    let mut doc = dcsim::config::parse_toml(text).map_err(|e| e.to_string())?;
    for kv in overrides {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("override `{kv}` is not key=value"))?;
        let value = dcsim::config::parse_toml(&format!("x = {v}"))
            .map(|mut t| t["x"].take())
            .unwrap_or_else(|_| serde_json::Value::String(v.to_string()));
        let parts: Vec<&str> = k.trim().split('.').collect();
        let mut cur = &mut doc;
        for part in &parts[..parts.len() - 1] {
            cur = cur
                .as_object_mut()
                .ok_or_else(|| format!("`{k}`: {part} is not a table"))?
                .entry(part.to_string())
                .or_insert(serde_json::json!({}));
        }
        cur.as_object_mut().ok_or_else(|| format!("`{k}` is not in a table"))?.insert(parts[parts.len() - 1].to_string(), value);
    }
    Spec::resolve(&doc).map_err(|e| e.to_string())
}
