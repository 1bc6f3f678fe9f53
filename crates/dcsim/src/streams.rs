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
    /// Load balancing (spraying, ECMP hashing): one stream, or one per switch in the
    /// partitioned model ([`Stream::rng_of`]).
    LoadBalancer = 10,
    /// Queue tie-breaks: one stream, or one per port in the partitioned model
    /// ([`Stream::rng_of`]).
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

    /// This stream's sub-stream for element `index` (a switch, a port) of `seed`: the
    /// partitioned model's (`engine.partitioned`) load-balancing and tie-break streams.
    ///
    /// Per-element streams make a draw depend only on that element's own history, never on
    /// the order in which events at other elements ran: what lets a partitioned run (see
    /// [`crate::partition`]) give the same numbers however its partitions are scheduled.
    /// Element streams have the top bit of the stream id set, apart from the component
    /// streams (below 2³²) and the hosts' streams ([`Stream::host_rng`]).
    pub fn rng_of(self, seed: u64, index: u32) -> Rng {
        Rng::stream(seed, 1 << 63 | (self as u64) << 32 | u64::from(index))
    }
}

/// A fabric component's random streams over its elements (switches, ports): one stream
/// shared by every element (the sequential model), or one sub-stream per element
/// ([`Stream::rng_of`]; the partitioned model, `engine.partitioned`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum ElementRngs {
    /// One stream for every element.
    Shared(Rng),
    /// Element `i`'s own stream at index `i`.
    PerElement(Vec<Rng>),
}

impl ElementRngs {
    /// `stream` of `seed` for `n` elements: one per element if `per_element`, else one shared.
    pub fn new(stream: Stream, seed: u64, n: u32, per_element: bool) -> Self {
        if per_element {
            ElementRngs::PerElement((0..n).map(|i| stream.rng_of(seed, i)).collect())
        } else {
            ElementRngs::Shared(stream.rng(seed))
        }
    }

    /// Element `i`'s stream: its own, or the shared one.
    #[inline]
    pub fn of(&mut self, i: u32) -> &mut Rng {
        match self {
            ElementRngs::Shared(rng) => rng,
            ElementRngs::PerElement(rngs) => &mut rngs[i as usize],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ElementRngs, Stream};

    /// Issue 16 (opt-in partitioned model): shared streams are the component's one stream, so
    /// every element draws the sequential model's sequence in turn; per-element streams give
    /// each element its own sequence, unaffected by draws at other elements.
    #[test]
    fn element_streams_are_shared_or_each_elements_own() {
        let mut shared = ElementRngs::new(Stream::QueueTieBreaks, 9, 4, false);
        let mut one = Stream::QueueTieBreaks.rng(9);
        let draws: Vec<u64> = [3, 0, 3, 1].iter().map(|&i| shared.of(i).next_u64()).collect();
        let want: Vec<u64> = (0..4).map(|_| one.next_u64()).collect();
        assert_eq!(draws, want);

        let mut apart = ElementRngs::new(Stream::QueueTieBreaks, 9, 4, true);
        let mut again = ElementRngs::new(Stream::QueueTieBreaks, 9, 4, true);
        apart.of(1).next_u64(); // a draw at another element
        let first_of_3 = apart.of(3).next_u64();
        assert_eq!(first_of_3, again.of(3).next_u64());
        assert_eq!(first_of_3, Stream::QueueTieBreaks.rng_of(9, 3).next_u64());
        assert_ne!(first_of_3, again.of(2).next_u64());
        assert_ne!(first_of_3, Stream::QueueTieBreaks.rng(9).next_u64());
    }
}
