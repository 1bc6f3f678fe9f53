//! The crate's modules import each other without a circle: the dependency graph of the
//! top-level modules (`crate::X` paths in code, comments excluded) is acyclic, so each layer
//! can be read, tested and changed on top of the ones below it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Top-level module names declared in `lib.rs`.
fn modules() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("mod ")))
        .map(|l| l.trim_end_matches(';').to_string())
        .collect()
}

fn rust_files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            rust_files(&e.unwrap().path(), out);
        }
    } else if p.extension().is_some_and(|e| e == "rs") {
        out.push(p.to_path_buf());
    }
}

/// The modules each module's code refers to.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules();
    let mut g = BTreeMap::new();
    for m in &mods {
        let mut files = Vec::new();
        for p in [src().join(format!("{m}.rs")), src().join(m)] {
            if p.exists() {
                rust_files(&p, &mut files);
            }
        }
        let mut deps = BTreeSet::new();
        for f in files {
            for line in std::fs::read_to_string(f).unwrap().lines() {
                let code = line.split("//").next().unwrap_or("");
                for part in code.split("crate::").skip(1) {
                    let name: String = part
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if mods.contains(&name) && &name != m {
                        deps.insert(name);
                    }
                }
            }
        }
        g.insert(m.clone(), deps);
    }
    g
}

#[test]
fn no_import_circle_among_the_crates_modules() {
    let g = graph();
    assert!(g.len() > 10, "found the modules: {:?}", g.keys());
    // Depth-first search for a back edge.
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(1) => {
                let start = path.iter().position(|p| p == m).unwrap();
                let mut cycle = path[start..].to_vec();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            Some(_) => return None,
            None => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for d in &g[m] {
            if let Some(c) = visit(d, g, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if let Some(cycle) = visit(m, &g, &mut state, &mut Vec::new()) {
            panic!("import circle: {}", cycle.join(" → "));
        }
    }
    // The layering the architecture promises.
    for leaf in ["units", "error", "choice", "cdf", "protocols"] {
        let deps = &g[leaf];
        assert!(
            deps.iter().all(|d| ["units", "error", "choice"].contains(&d.as_str())),
            "{leaf} → {deps:?}"
        );
    }
    assert!(!g["spec"].contains("workload") && !g["spec"].contains("transport"), "{:?}", g["spec"]);
    assert!(
        !g["fabric"].contains("transport") && !g["fabric"].contains("sim"),
        "{:?}",
        g["fabric"]
    );
}
