//! The run's random streams, one per component, each a sub-stream of the spec's seed: adding a
//! draw in one component never shifts another's draws. The numbers are part of the results'
//! identity (changing one changes every run that draws from it).

use dcsim_engine::Rng;

/// A component's random stream.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Flow inter-arrival times.
    ArrivalTimes = 1,
    /// Flow sizes.
    FlowSizes = 2,
    /// Source/destination pairs (and permutations, incast senders).
    HostPairs = 3,
    /// Deadlines.
    Deadlines = 4,
    /// Tenants (with `tenant_weights`).
    Tenants = 5,
    /// Partition/aggregate queries.
    Queries = 6,
    /// The long-lived flows' host pairs (`workload.long_lived_flows`).
    LongLivedFlows = 7,
    /// Load balancing (spraying, ECMP hashing): one stream per switch ([`Stream::rng_of`]).
    LoadBalancer = 10,
    /// Queue tie-breaks: one stream per port ([`Stream::rng_of`]).
    QueueTieBreaks = 11,
}

impl Stream {
    /// This stream of `seed`.
    pub fn rng(self, seed: u64) -> Rng {
        Rng::stream(seed, self as u64)
    }

    /// This stream's sub-stream for element `index` (a switch, a port) of `seed`.
    ///
    /// Per-element streams make a draw depend only on that element's own history, never on
    /// the order in which events at other elements ran: what lets a partitioned run (see
    /// [`crate::partition`]) give the same numbers however its partitions are scheduled.
    /// Element streams occupy ids above 2³², apart from the component streams.
    pub fn rng_of(self, seed: u64, index: u32) -> Rng {
        Rng::stream(seed, (index as u64 + 1) << 32 | self as u64)
    }
}
