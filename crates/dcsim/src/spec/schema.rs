//! The spec's JSON Schema (draft 2020-12), generated from the fields the resolver reads
//! ([`super::fields`]), for editor completion and validation (`dcsim schema`).

use super::reader::{Field, Fields, Kind};
use serde_json::{json, Map, Value};

/// The JSON Schema of a run spec.
pub fn json_schema() -> Value {
    let mut root = table(super::fields(), "");
    let m = root.as_object_mut().expect("a table is an object");
    m.insert("$schema".into(), "https://json-schema.org/draft/2020-12/schema".into());
    m.insert("title".into(), "dcsim run spec".into());
    m.insert(
        "description".into(),
        "A dcsim run: every field optional, with the default shown (docs/spec.md).".into(),
    );
    root
}

fn table(fields: &Fields, path: &str) -> Value {
    let mut props = Map::new();
    for f in fields.of(path) {
        let sub = if path.is_empty() { f.key.to_string() } else { format!("{path}.{}", f.key) };
        props.insert(f.key.to_string(), field(fields, &sub, f));
    }
    json!({ "type": "object", "properties": props, "additionalProperties": false })
}

fn field(fields: &Fields, path: &str, f: &Field) -> Value {
    let mut s = match &f.kind {
        Kind::Table => return table(fields, path),
        Kind::Number { min, max, exclusive: false } => {
            json!({ "type": "number", "minimum": min, "maximum": max })
        }
        Kind::Number { min, max, exclusive: true } => {
            json!({ "type": "number", "exclusiveMinimum": min, "exclusiveMaximum": max })
        }
        Kind::Integer { min, max } => json!({ "type": "integer", "minimum": min, "maximum": max }),
        Kind::Bytes => json!({
            "type": ["integer", "string"],
            "description": "a byte count: an integer, or a string with a byte unit (\"36KB\" = 36,000, \"64KiB\" = 65,536, \"1.5MB\"; B, kB, KB, MB, GB, KiB, MiB, GiB; a lower-case b, bits, is refused)"
        }),
        Kind::ByteList => json!({ "type": "array", "items": { "type": ["integer", "string"] } }),
        Kind::Bool => json!({ "type": "boolean" }),
        Kind::String => json!({ "type": "string" }),
        Kind::Choice(names) => json!({ "enum": names }),
        Kind::Custom { types, note } => json!({ "type": types, "description": note }),
    };
    s.as_object_mut().expect("an object").insert("default".into(), f.default.clone());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_lists_every_section_and_field_with_its_default() {
        let s = json_schema();
        let p = &s["properties"];
        assert_eq!(s["additionalProperties"], false);
        for section in ["topology", "workload", "transport", "dctcp", "pfabric", "phost", "pias"] {
            assert_eq!(p[section]["type"], "object", "{section}");
        }
        assert_eq!(p["seed"]["default"], 1);
        assert_eq!(p["workload"]["properties"]["load"]["default"], 0.6);
        assert_eq!(p["workload"]["properties"]["load"]["exclusiveMaximum"], 1.0);
        assert_eq!(p["workload"]["properties"]["bimodal"]["properties"]["p_small"]["default"], 0.5);
        let protocols = p["transport"]["properties"]["protocol"]["enum"].as_array().unwrap();
        assert!(protocols.len() >= 10 && protocols.iter().any(|n| n == "tcp"));
        assert_eq!(p["transport"]["properties"]["protocol"]["default"], "dctcp");
        assert_eq!(p["topology"]["properties"]["buffer_bytes"]["default"], 36864);
        assert_eq!(p["pfabric"]["properties"]["thresholds"]["type"], "array");
    }
}
