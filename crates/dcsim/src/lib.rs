//! # dcsim
//!
//! The datacenter network model of dcsim: a packet-level simulator of datacenter transports
//! built on the domain-free [`dcsim_engine`].
//!
//! ## Layers
//! ```text
//!   workload  ── flows (size, src, dst, arrival) ──►  transport  (window mechanism + policy)
//!                                                        │ packets        ▲ ACKs
//!                                                        ▼                │
//!   fabric:   host NIC port ─► link ─► switch ─► port ─► link ─► … ─► host
//!             (queue discipline + serialization)    (routing + load balancing)
//!   metrics:  per-flow records (FCT, ideal FCT, slowdown) ─► summary
//! ```
//! * [`spec`]: the spec, resolved and validated once (one file per section).
//! * [`cdf`]: flow-size CDFs; [`trace`]: flow traces; [`topology_file`]: topology files
//!   (leaves the spec can read).
//! * [`topology`]: leaf-spine, fat-tree, star, dumbbell, pair, or a file; routes computed by BFS.
//! * [`queue`]: the [`queue::Port`] shell and its disciplines.
//! * [`fabric`]: forwarding and the event types.
//! * [`transport`]: one module per protocol, listed once in the registry ([`protocols`]); the
//!   shared window mechanism in [`transport::window`].
//! * [`workload`]: CDFs, Poisson arrivals, traffic matrices, traces.
//! * [`metrics`]: ideal FCT, per-flow records, the summary.
//! * [`flow_level`]: the flow-level SRPT model (pFabric's Ideal).
//! * [`sim`]: the event loop, and the opt-in partitioned run on several threads
//!   (`engine.partitioned`, [`partition`]).
//!
//! ## Units
//! Time is [`dcsim_engine::SimTime`] (integer picoseconds); rates are [`units::BitRate`]
//! (bits/s); sizes are bytes (`*_bytes`). Packets are 1460 B of payload plus a 40 B header;
//! control packets are 40 B.
//!
//! ## Determinism
//! Every random draw comes from a sub-stream of the spec's seed, one per component (arrival
//! times, sizes, pairs, load balancing, queue tie-breaks). Same spec and seed ⇒ the same
//! events in the same order ⇒ identical output.
//!
//! ## Example
//! ```
//! use dcsim::{spec::Spec, sim::Simulation};
//! let spec = Spec::from_toml_str(r#"
//!     [topology]
//!     kind = "star"
//!     hosts = 4
//!     [workload]
//!     flows = 20
//!     load = 0.3
//! "#).unwrap();
//! let out = Simulation::new(spec).unwrap().run(&mut |_| true).unwrap();
//! assert_eq!(out.summary.flows_completed, 20);
//! assert!(out.summary.mean_slowdown >= 1.0);
//! ```
#![warn(missing_docs)]

pub mod cdf;
pub mod choice;
pub mod error;
pub mod fabric;
pub mod flow_level;
pub mod metrics;
pub mod packet;
pub mod partition;
pub mod protocols;
pub mod queue;
pub mod sim;
pub mod spec;
pub mod streams;
pub mod thresholds;
pub mod topology;
pub mod topology_file;
pub mod trace;
pub mod transport;
pub mod units;
pub mod workload;

pub use error::{RunError, SpecError};
pub use sim::{Progress, RunOutput, Simulation};
pub use spec::Spec;
