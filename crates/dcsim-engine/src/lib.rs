//! # dcsim-engine
//!
//! A small, domain-free discrete-event engine. It knows nothing about networks: it orders
//! plain event values in time and hands them back one at a time.
//!
//! ```text
//!   schedule(t, e) ──► EventQueue (timing wheel + 4-ary heap, by (time, seq)) ──► pop() ──► (t, e)
//!                         ▲                                                 │
//!                         └───────────── handlers schedule new events ◄────┘
//! ```
//!
//! ## Units
//! Simulated time is an integer number of picoseconds ([`SimTime`]). There are no floating
//! point times anywhere in the engine, so two runs never disagree on the order of two events
//! because of rounding.
//!
//! ## Determinism contract
//! * Events are ordered by `(time, insertion sequence)`: two events scheduled for the same
//!   picosecond come out in the order they were scheduled (FIFO among equals).
//! * All randomness comes from [`Rng`] streams derived from one seed with
//!   [`Rng::stream`]; each component owns its own stream, so adding a draw in one component
//!   never shifts the numbers another component sees.
//!
//! Given the same seed and the same sequence of `schedule` calls, a simulation built on this
//! engine replays bit for bit.
#![warn(missing_docs)]

mod heap;
mod queue;
mod rng;
mod scheduler;
mod time;

pub use heap::HeapQueue;
pub use queue::{EventQueue, DEFAULT_SLOT_BITS};
pub use rng::Rng;
pub use scheduler::{Scheduler, SchedulingError};
pub use time::SimTime;
