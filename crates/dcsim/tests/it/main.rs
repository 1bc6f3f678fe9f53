//! Integration tests: whole simulations on hand-sized scenarios with known answers, analytic
//! cross-checks, invariants and determinism.

mod analytic;
mod checkpoint;
mod common;
mod d2tcp;
mod dcpim;
mod digests;
mod fastpass;
mod fuzz;
mod homa;
mod invariants;
mod long_lived;
mod modules;
mod parallel;
mod pase;
mod phost;
mod pias;
mod recordings;
mod reliability;
mod scenarios;
mod shared_buffer;
mod spec_docs;
mod topology_file;
mod traces;
mod unused;
