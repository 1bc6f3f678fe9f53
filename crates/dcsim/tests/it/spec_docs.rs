//! `docs/spec.md` against the spec's fields as the resolver reads them (the source of the
//! JSON Schema): every field documented, nothing documented that does not exist, and every
//! default the docs state as a literal equal to the resolver's.

use dcsim::spec::reader::Kind;
use std::collections::BTreeMap;

/// (table path, key) → the docs' default cell, from `docs/spec.md`'s tables.
fn documented() -> BTreeMap<(String, String), String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/spec.md");
    let text = std::fs::read_to_string(path).expect("docs/spec.md");
    let mut out = BTreeMap::new();
    let mut table: Option<String> = None;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ").or_else(|| line.strip_prefix("### ")) {
            table = if h.starts_with("Top level") {
                Some(String::new())
            } else {
                h.split('`')
                    .nth(1)
                    .and_then(|t| t.strip_prefix('[')?.split(']').next())
                    .map(str::to_string)
            };
            continue;
        }
        let Some(t) = &table else { continue };
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[1].starts_with('`') {
            continue;
        }
        let key = cells[1].trim_matches('`').to_string();
        out.insert((t.clone(), key), cells[2].to_string());
    }
    out
}

#[test]
fn docs_spec_md_documents_every_field_with_its_default() {
    let fields = dcsim::spec::fields();
    let docs = documented();
    let mut problems = Vec::new();
    for (path, list) in &fields.0 {
        for f in list {
            if f.kind == Kind::Table {
                continue; // a table: its own heading, its fields checked below it
            }
            let Some(cell) = docs.get(&(path.clone(), f.key.to_string())) else {
                problems.push(format!("`{path}.{}` is not in docs/spec.md", f.key));
                continue;
            };
            // A literal default: the first backticked value (pHost: "paper / authors-code").
            let Some(lit) = cell.split('`').nth(1) else { continue };
            let Ok(doc) = toml::from_str::<toml::Value>(&format!("v = {lit}")) else { continue };
            let doc = serde_json::to_value(&doc["v"]).unwrap();
            let same = match (&doc, &f.default) {
                (serde_json::Value::Number(a), serde_json::Value::Number(b)) => {
                    (a.as_f64().unwrap() - b.as_f64().unwrap()).abs()
                        <= 1e-9 * b.as_f64().unwrap().abs()
                }
                (a, b) => a == b,
            };
            if !same {
                problems.push(format!(
                    "`{path}.{}`: docs say {lit}, the resolver {}",
                    f.key, f.default
                ));
            }
        }
    }
    for (path, key) in docs.keys() {
        if !fields.of(path).iter().any(|f| f.key == key) {
            problems.push(format!("docs/spec.md documents `{path}.{key}`, which does not exist"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
