//! Hashes the simulator's source (this crate's and the engine's) into `DCSIM_SOURCE_HASH`, the
//! model a checkpoint was written by: a checkpoint resumes only under the exact model that
//! wrote it (`src/sim/checkpoint.rs`).

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// FNV-1a, 64 bits: stable across Rust versions (std's hasher is not promised to be).
fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dirs = [here.join("src"), here.join("../dcsim-engine/src")];
    let mut files = Vec::new();
    for dir in &dirs {
        println!("cargo:rerun-if-changed={}", dir.display());
        rust_files(dir, &mut files);
    }
    // By path relative to its source folder, so the hash is the same wherever the tree lies.
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| {
            let rel = dirs
                .iter()
                .enumerate()
                .find_map(|(i, d)| p.strip_prefix(d).ok().map(|r| format!("{i}/{}", r.display())))
                .unwrap_or_default();
            (rel, p)
        })
        .collect();
    named.sort();
    let mut hash = 0xCBF2_9CE4_8422_2325u64;
    for (rel, path) in &named {
        fnv1a(&mut hash, rel.as_bytes());
        fnv1a(&mut hash, &fs::read(path).expect("a source file is readable"));
    }
    println!("cargo:rustc-env=DCSIM_SOURCE_HASH={hash:016x}");
}
