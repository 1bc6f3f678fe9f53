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
    /// Load balancing (spraying, ECMP hashing).
    LoadBalancer = 10,
    /// Queue tie-breaks.
    QueueTieBreaks = 11,
    /// dcPIM's random grants and accepts: host `h` draws from sub-stream `(12 << 32) | h`
    /// ([`Stream::host_rng`]), so a host's choices depend on no other host's.
    DcpimMatching = 12,
}

impl Stream {
    /// This stream of `seed`.
    pub fn rng(self, seed: u64) -> Rng {
        Rng::stream(seed, self as u64)
    }

    /// Host `host`'s own part of this stream of `seed`.
    pub fn host_rng(self, seed: u64, host: u32) -> Rng {
        Rng::stream(seed, ((self as u64) << 32) | u64::from(host))
    }
}
