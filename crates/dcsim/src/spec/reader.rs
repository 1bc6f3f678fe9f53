//! The generic spec-tree reader: it knows no field. A [`Section`] reads one table of the
//! user's tree — typed values with defaults and ranges, byte counts with units, named
//! choices — and rejects wrong types and out-of-range values with an error naming the field,
//! the value and what is allowed. Every read also records the field (its kind and default),
//! so the spec's schema — and with it the list of keys each table allows — is generated from
//! the resolution code itself ([`super::fields`]): no field name is written twice.

pub use crate::choice::suggest;
use crate::choice::Choice;
use crate::error::SpecError;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The largest port buffer: 1 TB.
pub const MAX_BUFFER_BYTES: u64 = 1_000_000_000_000;
/// The largest window, packets (a 1 TB buffer holds fewer).
pub const MAX_WINDOW_PKTS: u32 = 1_000_000_000;

/// What a field accepts.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A number in `[min, max]` (`exclusive`: in `(min, max)`).
    Number {
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
        /// Bounds excluded.
        exclusive: bool,
    },
    /// An integer in `[min, max]`.
    Integer {
        /// Lower bound.
        min: u64,
        /// Upper bound.
        max: u64,
    },
    /// A byte count: an integer, or a string with a unit (`"36KB"`, `"64KiB"`).
    Bytes,
    /// A list of positive byte counts.
    ByteList,
    /// `true` or `false`.
    Bool,
    /// Any string.
    String,
    /// One of these names.
    Choice(Vec<&'static str>),
    /// A table of fields (see its own path).
    Table,
    /// A field with its own parser: the JSON types it takes and what they mean.
    Custom {
        /// JSON Schema type names.
        types: &'static [&'static str],
        /// What the values mean.
        note: &'static str,
    },
}

/// One field of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Its key.
    pub key: &'static str,
    /// What it accepts.
    pub kind: Kind,
    /// Its default (in the empty spec; some defaults depend on other fields).
    pub default: Value,
}

/// Every table's fields, by dotted path (`""` for the top level), in reading order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields(pub BTreeMap<String, Vec<Field>>);

impl Fields {
    /// The fields of table `path`.
    pub fn of(&self, path: &str) -> &[Field] {
        self.0.get(path).map_or(&[], Vec::as_slice)
    }
}

/// Reads a spec tree, checking keys against known fields or recording the fields it reads.
#[derive(Debug)]
pub struct Reader {
    known: Option<&'static Fields>,
    recorded: RefCell<Fields>,
}

impl Reader {
    /// A reader that rejects keys not in `known`.
    pub fn checking(known: &'static Fields) -> Self {
        Reader { known: Some(known), recorded: RefCell::default() }
    }

    /// A reader that records every field read (to build [`Fields`]).
    pub fn recording() -> Self {
        Reader { known: None, recorded: RefCell::default() }
    }

    /// What was recorded.
    pub fn into_fields(self) -> Fields {
        self.recorded.into_inner()
    }

    /// Table `path` of the tree (`None`: absent, every field at its default).
    pub fn section<'a>(
        &'a self,
        path: &str,
        value: Option<&'a Value>,
    ) -> Result<Section<'a>, SpecError> {
        let map = match value {
            None => None,
            Some(Value::Object(m)) => Some(m),
            Some(v) => {
                return Err(SpecError::new(path, format!("must be a table, got {}", type_name(v))))
            }
        };
        let s = Section { reader: self, path: path.to_string(), map };
        if let Some(known) = self.known {
            s.check_keys(known.of(path))?;
        }
        Ok(s)
    }
}

/// One table of the user's spec.
#[derive(Debug)]
pub struct Section<'a> {
    reader: &'a Reader,
    path: String,
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Section<'a> {
    /// The dotted path of `key` in this table.
    pub fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn check_keys(&self, known: &[Field]) -> Result<(), SpecError> {
        let Some(map) = self.map else { return Ok(()) };
        let allowed: Vec<&str> = known.iter().map(|f| f.key).collect();
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                let hint = match suggest(key, &allowed) {
                    Some(s) => format!("; did you mean `{}`?", self.field(s)),
                    None => format!("; allowed keys: {}", allowed.join(", ")),
                };
                return Err(SpecError::new(self.field(key), format!("unknown key{hint}")));
            }
        }
        Ok(())
    }

    /// Records field `key` (when recording).
    pub fn declare(&self, key: &'static str, kind: Kind, default: Value) {
        if self.reader.known.is_some() {
            return;
        }
        let mut rec = self.reader.recorded.borrow_mut();
        let fields = rec.0.entry(self.path.clone()).or_default();
        if !fields.iter().any(|f| f.key == key) {
            fields.push(Field { key, kind, default });
        }
    }

    /// The raw value of `key`, if present (declare the field separately).
    pub fn raw(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(key))
    }

    /// The sub-table `key`.
    pub fn sub(&self, key: &'static str) -> Result<Section<'a>, SpecError> {
        self.declare(key, Kind::Table, Value::Object(Map::new()));
        self.reader.section(&self.field(key), self.raw(key))
    }

    fn number(&self, key: &str, default: f64) -> Result<f64, SpecError> {
        match self.raw(key) {
            None => Ok(default),
            Some(Value::Number(n)) => Ok(n.as_f64().unwrap_or(default)),
            Some(v) => Err(SpecError::new(
                self.field(key),
                format!("must be a number, got {} {}", type_name(v), show(v)),
            )),
        }
    }

    /// A number in `[lo, hi]`; `what` says what is allowed.
    pub fn f64_in(
        &self,
        key: &'static str,
        default: f64,
        lo: f64,
        hi: f64,
        what: &str,
    ) -> Result<f64, SpecError> {
        self.number_in(key, default, (lo, hi, false), what)
    }

    /// A number in `(lo, hi)`; `what` says what is allowed.
    pub fn f64_between(
        &self,
        key: &'static str,
        default: f64,
        lo: f64,
        hi: f64,
        what: &str,
    ) -> Result<f64, SpecError> {
        self.number_in(key, default, (lo, hi, true), what)
    }

    fn number_in(
        &self,
        key: &'static str,
        default: f64,
        (lo, hi, exclusive): (f64, f64, bool),
        what: &str,
    ) -> Result<f64, SpecError> {
        self.declare(key, Kind::Number { min: lo, max: hi, exclusive }, default.into());
        let x = self.number(key, default)?;
        let inside = if exclusive { x > lo && x < hi } else { x.is_finite() && x >= lo && x <= hi };
        if !inside {
            let (open, close) = if exclusive { ("above", "below") } else { ("from", "to") };
            return Err(SpecError::new(
                self.field(key),
                format!("{x} is out of range: {what} (allowed: {open} {lo} {close} {hi})"),
            ));
        }
        Ok(x)
    }

    fn unsigned(&self, key: &str, default: u64) -> Result<u64, SpecError> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => as_u64(v).ok_or_else(|| {
                SpecError::new(
                    self.field(key),
                    format!("must be a non-negative integer, got {} {}", type_name(v), show(v)),
                )
            }),
        }
    }

    /// An integer in `[lo, hi]`.
    pub fn u64_in(
        &self,
        key: &'static str,
        default: u64,
        lo: u64,
        hi: u64,
    ) -> Result<u64, SpecError> {
        self.declare(key, Kind::Integer { min: lo, max: hi }, default.into());
        let x = self.unsigned(key, default)?;
        if x < lo || x > hi {
            return Err(SpecError::new(
                self.field(key),
                format!("{x} is out of range: must be between {lo} and {hi}"),
            ));
        }
        Ok(x)
    }

    /// An integer in `[lo, hi]` (both within `u32`).
    pub fn u32_in(
        &self,
        key: &'static str,
        default: u32,
        lo: u32,
        hi: u32,
    ) -> Result<u32, SpecError> {
        Ok(self.u64_in(key, default as u64, lo as u64, hi as u64)? as u32)
    }

    /// A byte count: an integer, or a string with a unit ("36KB", "1.5 MB", "64KiB").
    pub fn bytes(&self, key: &'static str, default: u64) -> Result<u64, SpecError> {
        self.declare(key, Kind::Bytes, default.into());
        match self.raw(key) {
            None => Ok(default),
            Some(Value::String(s)) => {
                parse_bytes(s).ok_or_else(|| SpecError::new(self.field(key), byte_count_error(s)))
            }
            Some(v) => self.unsigned(key, default).map_err(|_| {
                SpecError::new(
                    self.field(key),
                    format!("must be a byte count, got {} {}", type_name(v), show(v)),
                )
            }),
        }
    }

    /// A byte count in `[lo, hi]`.
    pub fn bytes_in(
        &self,
        key: &'static str,
        default: u64,
        lo: u64,
        hi: u64,
    ) -> Result<u64, SpecError> {
        let b = self.bytes(key, default)?;
        if b < lo || b > hi {
            return Err(SpecError::new(
                self.field(key),
                format!("{b} bytes is out of range: must be between {lo} and {hi}"),
            ));
        }
        Ok(b)
    }

    /// A list of positive byte counts (integers or strings with units), if present.
    pub fn byte_list(&self, key: &'static str) -> Result<Option<Vec<u64>>, SpecError> {
        self.byte_list_from(key, 1)
    }

    /// A list of byte counts of at least `min` (0 or 1), if present.
    pub fn byte_list_from(
        &self,
        key: &'static str,
        min: u64,
    ) -> Result<Option<Vec<u64>>, SpecError> {
        self.declare(key, Kind::ByteList, Value::Array(Vec::new()));
        let field = self.field(key);
        match self.raw(key) {
            None => Ok(None),
            Some(Value::Array(items)) => {
                let mut v = Vec::new();
                for item in items {
                    let b = match item {
                        Value::String(x) => parse_bytes(x),
                        other => as_u64(other),
                    };
                    v.push(b.filter(|&b| b >= min).ok_or_else(|| {
                        let why = match item {
                            Value::String(x) if parse_bytes(x).is_none() => byte_count_error(x),
                            _ if min > 0 => format!("{} is not a positive byte count", show(item)),
                            _ => format!("{} is not a byte count", show(item)),
                        };
                        SpecError::new(&field, why)
                    })?);
                }
                Ok(Some(v))
            }
            Some(v) => Err(SpecError::new(
                &field,
                format!("must be a list of byte counts, got {} {}", type_name(v), show(v)),
            )),
        }
    }

    /// `true` or `false`.
    pub fn bool(&self, key: &'static str, default: bool) -> Result<bool, SpecError> {
        self.declare(key, Kind::Bool, default.into());
        match self.raw(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(SpecError::new(
                self.field(key),
                format!("must be true or false, got {} {}", type_name(v), show(v)),
            )),
        }
    }

    /// A string, if present.
    pub fn string(&self, key: &'static str) -> Result<Option<&'a str>, SpecError> {
        self.declare(key, Kind::String, Value::String(String::new()));
        self.string_value(key)
    }

    /// A string, if present, for a field declared separately.
    pub fn string_value(&self, key: &str) -> Result<Option<&'a str>, SpecError> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(SpecError::new(
                self.field(key),
                format!("must be a string, got {} {}", type_name(v), show(v)),
            )),
        }
    }

    /// One of `T`'s names (case-insensitive).
    pub fn choice<T: Choice>(&self, key: &'static str, default: T) -> Result<T, SpecError> {
        self.declare(key, Kind::Choice(T::names()), default.name().into());
        let Some(s) = self.string_value(key)? else { return Ok(default) };
        if let Some((_, v)) = T::OPTIONS.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)) {
            return Ok(*v);
        }
        let names = T::names();
        let hint = match suggest(s, &names) {
            Some(n) => format!(" (did you mean \"{n}\"?)"),
            None => String::new(),
        };
        Err(SpecError::new(
            self.field(key),
            format!("\"{s}\" is not one of {}{hint}", quote_list(&names)),
        ))
    }
}

/// Parses TOML into a JSON-like tree (the form the resolver takes).
pub fn parse_toml(text: &str) -> Result<Value, SpecError> {
    toml::from_str(text).map_err(|e| SpecError::new("<toml>", e.to_string().trim().to_string()))
}

/// Sets the dotted path `key` (e.g. `workload.load`) in a spec tree to `raw`, parsed as a
/// TOML value (`0.7`, `true`, `"x"`) or else taken as a bare string (`dctcp`). This is the
/// `--set key=value` rule of every command line.
pub fn apply_override(tree: &mut Value, key: &str, raw: &str) -> Result<(), SpecError> {
    let value = parse_toml(&format!("x = {raw}"))
        .map(|mut t| t["x"].take())
        .unwrap_or_else(|_| Value::String(raw.to_string()));
    let parts: Vec<&str> = key.trim().split('.').collect();
    let mut cur = tree;
    for (i, part) in parts[..parts.len() - 1].iter().enumerate() {
        cur = cur
            .as_object_mut()
            .ok_or_else(|| SpecError::new(parts[..i].join("."), "is a value, not a table"))?
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    cur.as_object_mut()
        .ok_or_else(|| SpecError::new(key, "is inside a value, not a table"))?
        .insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

/// "a float", "a string", … for error messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
    }
}

/// A value as the user wrote it (strings quoted).
pub fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

/// `"a", "b", "c"`.
pub fn quote_list(names: &[&str]) -> String {
    names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
}

/// A non-negative integer (also from a float with no fraction).
pub fn as_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19).map(|f| f as u64)
        }),
        _ => None,
    }
}

/// The units a byte count takes, with their sizes in bytes: decimal (`kB` or `KB` = 1000 B)
/// and binary (`KiB` = 1024 B), spelt exactly so. A lower-case `b` is bits in networking
/// (`"36kb"` is 36 kilobits), so such a unit is refused rather than read as bytes.
pub const BYTE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("kB", 1e3),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
];

/// What a byte count may be, for error messages.
const BYTE_UNITS_ALLOWED: &str = "an integer, or a number with a unit: B, kB or KB (1000 B), MB, GB, KiB (1024 B), MiB or GiB, e.g. \"36KB\" or \"64KiB\"";

/// `s` split into its number and its unit (`None`: it does not start with a number).
fn number_and_unit(s: &str) -> Option<(f64, &str)> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    Some((num.parse().ok()?, unit.trim()))
}

/// Parses "36864", "36KB", "1.5 MB", "64KiB" (KB = 1000 B, KiB = 1024 B); `None` for
/// anything else, including bit units ("36kb") ([`byte_count_error`] says why).
pub fn parse_bytes(s: &str) -> Option<u64> {
    let (x, unit) = number_and_unit(s)?;
    let mult = if unit.is_empty() { 1.0 } else { BYTE_UNITS.iter().find(|(u, _)| *u == unit)?.1 };
    let v = x * mult;
    (v.is_finite() && v >= 0.0).then(|| v.round() as u64)
}

/// Why `s` is not a byte count (for a string [`parse_bytes`] refuses), saying what is allowed.
pub fn byte_count_error(s: &str) -> String {
    match number_and_unit(s) {
        Some((_, unit)) if unit.ends_with('b') || unit.to_ascii_lowercase().contains("bit") => {
            format!(
                "\"{s}\" is ambiguous: \"{unit}\" reads as bits in networking (a lower-case b), and this field is a byte count; write {BYTE_UNITS_ALLOWED}"
            )
        }
        Some((_, unit)) if !unit.is_empty() => {
            format!("\"{s}\": \"{unit}\" is not a byte unit; write {BYTE_UNITS_ALLOWED}")
        }
        _ => format!("\"{s}\" is not a byte count; write {BYTE_UNITS_ALLOWED}"),
    }
}
