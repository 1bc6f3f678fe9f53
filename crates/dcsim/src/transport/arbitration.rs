//! Per-link flow arbitration, as PASE uses it (Munir et al., SIGCOMM'14 §3, building on PDQ's
//! arbitration): an arbitrator owns one (possibly aggregate) link of capacity C and orders the
//! flows that want it by a scheduling key — remaining size for SRPT, deadline for EDF — and
//! tells each flow a priority queue and a reference rate.
//!
//! For a flow f, let ADH be the sum of the demands of the flows ahead of it (smaller key; equal
//! keys: smaller flow id). A demand is the flow's NIC rate unless it asks for less.
//!
//! * **Reference rate.** min(demand_f, C − ADH) while ADH < C, else the base rate (a trickle
//!   that keeps a waiting flow's packets probing the path).
//! * **Queue.** ⌊ADH / C⌋, capped at the lowest queue: a flow whose higher-priority demand is
//!   below C gets the top queue (0); each further link-capacity's worth of demand ahead pushes
//!   it one queue down. A flow that exactly fills the link leaves the next one in queue 1.
//! * **Along a path** a flow takes the lowest priority (largest queue index) and the smallest
//!   rate any arbitrator on it gives ([`Assignment::combine`]).
//!
//! Entries are soft state: a flow that stops refreshing its demand (its release was lost, or
//! it was pruned below this link) is forgotten after `max_age` ([`LinkArbitrator::expire`]).
//!
//! The paper's design section is not in the text available here; these rules are the ones its
//! evaluation describes (arbitration "as in PDQ" yielding a queue and a reference rate) made
//! precise, and `docs/model.md` lists them as dcsim's choices.

use dcsim_engine::SimTime;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// Hashes a flow id with one multiplication (Fibonacci hashing): every arbitration looks a
/// flow up two or three times per link, and the standard library's SipHash took 8 % of a PASE
/// run's instructions (callgrind, web search at load 0.8). Flow ids are not chosen by an
/// adversary, and nothing iterates these maps (the arbitrators' and PASE's per-request tables),
/// so their order cannot reach a result.
#[derive(Default)]
pub struct FlowIdHasher(u64);

/// A map keyed by flow id, hashed with [`FlowIdHasher`].
pub type FlowMap<V> = HashMap<u32, V, BuildHasherDefault<FlowIdHasher>>;

impl Hasher for FlowIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, id: u32) {
        self.write_u64(u64::from(id));
    }

    fn write_u64(&mut self, v: u64) {
        // The golden ratio's 64-bit fraction spreads consecutive ids over the high bits, which
        // the map's control bytes read.
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// What an arbitrator tells a flow.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Assignment {
    /// Priority queue, 0 = highest.
    pub queue: u8,
    /// Reference rate, bits per second.
    pub rate_bps: f64,
}

impl Assignment {
    /// The assignment over two links of a path: the lower priority and the smaller rate.
    pub fn combine(self, other: Assignment) -> Assignment {
        Assignment {
            queue: self.queue.max(other.queue),
            rate_bps: self.rate_bps.min(other.rate_bps),
        }
    }
}

/// The arbitrator of one link.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LinkArbitrator {
    capacity_bps: f64,
    /// Demands by (key, flow): iteration order is priority order.
    demands: BTreeMap<(u64, u32), f64>,
    /// Each flow's current key (to move it when its key changes) and last refresh.
    keys: FlowMap<(u64, SimTime)>,
    /// (last refresh, flow), oldest first: expiry pops from the front.
    refreshed: BTreeSet<(SimTime, u32)>,
    /// The sum of the recorded demands.
    total_demand_bps: f64,
}

impl LinkArbitrator {
    /// An arbitrator for a link of `capacity_bps`.
    pub fn new(capacity_bps: f64) -> Self {
        LinkArbitrator {
            capacity_bps,
            demands: BTreeMap::new(),
            keys: HashMap::default(),
            refreshed: BTreeSet::new(),
            total_demand_bps: 0.0,
        }
    }

    /// The link's capacity, bits per second.
    pub fn capacity_bps(&self) -> f64 {
        self.capacity_bps
    }

    /// Resizes the link (a delegated share of a parent link).
    pub fn set_capacity_bps(&mut self, capacity_bps: f64) {
        self.capacity_bps = capacity_bps;
    }

    /// Flows with a demand on this link.
    pub fn flows(&self) -> usize {
        self.keys.len()
    }

    /// The sum of the demands recorded on this link, bits per second.
    pub fn total_demand_bps(&self) -> f64 {
        self.total_demand_bps.max(0.0)
    }

    /// Records (or updates) `flow`'s key and demand at time `now`.
    pub fn update(&mut self, flow: u32, key: u64, demand_bps: f64, now: SimTime) {
        self.remove(flow);
        self.keys.insert(flow, (key, now));
        self.refreshed.insert((now, flow));
        self.demands.insert((key, flow), demand_bps);
        self.total_demand_bps += demand_bps;
    }

    /// Forgets `flow` (it finished).
    pub fn remove(&mut self, flow: u32) {
        if let Some((key, at)) = self.keys.remove(&flow) {
            self.refreshed.remove(&(at, flow));
            if let Some(d) = self.demands.remove(&(key, flow)) {
                self.total_demand_bps -= d;
            }
        }
        if self.keys.is_empty() {
            self.total_demand_bps = 0.0; // no rounding residue left behind
        }
    }

    /// Forgets every flow not refreshed since `oldest`.
    pub fn expire(&mut self, oldest: SimTime) {
        while let Some(&(at, flow)) = self.refreshed.first() {
            if at >= oldest {
                break;
            }
            self.remove(flow);
        }
    }

    /// The flows in the top queue (less than the capacity's worth of demand ahead of them),
    /// in priority order.
    pub fn top_queue_flows(&self) -> Vec<u32> {
        let mut ahead = 0.0;
        let mut top = Vec::new();
        for (&(_, flow), &d) in &self.demands {
            if ahead >= self.capacity_bps {
                break;
            }
            top.push(flow);
            ahead += d;
        }
        top
    }

    /// The sum of the demands ahead of `flow` (recorded with `key`), counted up to `cap` at
    /// most.
    fn demand_ahead_capped(&self, key: u64, flow: u32, cap: f64) -> f64 {
        let mut ahead = 0.0;
        for (_, d) in self.demands.range(..(key, flow)) {
            ahead += d;
            if ahead >= cap {
                break; // nothing below changes the answer
            }
        }
        ahead
    }

    /// The sum of the demands ahead of `flow` (which must have been recorded).
    pub fn demand_ahead(&self, flow: u32) -> f64 {
        self.demand_ahead_capped(self.keys[&flow].0, flow, f64::INFINITY)
    }

    /// `flow`'s queue and reference rate with `queues` queues and base rate `base_bps`.
    pub fn assign(&self, flow: u32, queues: u8, base_bps: f64) -> Assignment {
        let key = self.keys[&flow].0;
        self.assign_recorded(flow, key, self.demands[&(key, flow)], queues, base_bps)
    }

    /// [`Self::assign`] for a flow just recorded with `key` and `demand` ([`Self::update`]):
    /// the caller knows them, so no lookup.
    pub fn assign_recorded(
        &self,
        flow: u32,
        key: u64,
        demand: f64,
        queues: u8,
        base_bps: f64,
    ) -> Assignment {
        debug_assert_eq!(self.keys[&flow].0, key);
        debug_assert_eq!(self.demands[&(key, flow)], demand);
        let c = self.capacity_bps;
        let lowest = queues.saturating_sub(1);
        if c <= 0.0 {
            return Assignment { queue: lowest, rate_bps: base_bps }; // a share not granted yet
        }
        // Past `lowest` capacities' worth of demand ahead the answer is the lowest queue at
        // the base rate: the sum stops there, so a long backlog costs no more than a short one.
        let ahead = self.demand_ahead_capped(key, flow, c * f64::from(lowest.max(1)));
        let queue = ((ahead / c).floor().min(lowest as f64)) as u8;
        let rate_bps = if ahead < c { demand.min(c - ahead) } else { base_bps };
        Assignment { queue, rate_bps }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: f64 = 1e9;

    fn link(c_gbps: f64, flows: &[(u32, u64, f64)]) -> LinkArbitrator {
        let mut a = LinkArbitrator::new(c_gbps * G);
        for &(f, key, d) in flows {
            a.update(f, key, d * G, SimTime::ZERO);
        }
        a
    }

    #[test]
    fn line_rate_flows_stack_one_queue_per_link_capacity() {
        // Three flows at the 10 Gbps NIC rate on a 10 Gbps link, SRPT keys 5, 7, 9 (bytes left).
        let a = link(10.0, &[(1, 5, 10.0), (2, 7, 10.0), (3, 9, 10.0)]);
        assert_eq!(a.assign(1, 8, 0.1 * G), Assignment { queue: 0, rate_bps: 10.0 * G });
        assert_eq!(a.assign(2, 8, 0.1 * G), Assignment { queue: 1, rate_bps: 0.1 * G });
        assert_eq!(a.assign(3, 8, 0.1 * G), Assignment { queue: 2, rate_bps: 0.1 * G });
        // Capped at the lowest queue.
        assert_eq!(a.assign(3, 2, 0.1 * G).queue, 1);
    }

    #[test]
    fn smaller_demands_share_the_top_queue_until_the_link_is_full() {
        // Demands 3, 4, 5 and 2 Gbps on 10: ADH 0, 3, 7, 12.
        let a = link(10.0, &[(1, 10, 3.0), (2, 20, 4.0), (3, 30, 5.0), (4, 40, 2.0)]);
        let r = |f| a.assign(f, 8, 0.05 * G);
        assert_eq!(r(1), Assignment { queue: 0, rate_bps: 3.0 * G });
        assert_eq!(r(2), Assignment { queue: 0, rate_bps: 4.0 * G });
        assert_eq!(r(3), Assignment { queue: 0, rate_bps: 3.0 * G }, "only what is left: 10 − 7");
        assert_eq!(r(4), Assignment { queue: 1, rate_bps: 0.05 * G });
        assert!((a.demand_ahead(4) - 12.0 * G).abs() < 1.0);
    }

    #[test]
    fn a_link_exactly_filled_pushes_the_next_flow_down() {
        let a = link(10.0, &[(1, 1, 5.0), (2, 2, 5.0), (3, 3, 5.0)]);
        assert_eq!(a.assign(2, 8, 0.0), Assignment { queue: 0, rate_bps: 5.0 * G });
        assert_eq!(a.assign(3, 8, 0.0).queue, 1, "ADH = C exactly");
    }

    #[test]
    fn ties_go_to_the_smaller_flow_id_and_keys_move() {
        let mut a = link(10.0, &[(7, 100, 10.0), (3, 100, 10.0)]);
        assert_eq!(a.assign(3, 8, 0.0).queue, 0);
        assert_eq!(a.assign(7, 8, 0.0).queue, 1);
        // Flow 7 nears its end (SRPT key 10 < 100): it moves ahead of flow 3.
        a.update(7, 10, 10.0 * G, SimTime::ZERO);
        assert_eq!(a.assign(7, 8, 0.0).queue, 0);
        assert_eq!(a.assign(3, 8, 0.0).queue, 1);
        // Flow 7 finishes: flow 3 gets the link.
        a.remove(7);
        assert_eq!(a.flows(), 1);
        assert_eq!(a.assign(3, 8, 0.0), Assignment { queue: 0, rate_bps: 10.0 * G });
    }

    #[test]
    fn stale_entries_expire() {
        let mut a = link(10.0, &[(1, 1, 10.0)]);
        a.update(2, 2, 10.0 * G, SimTime::from_us(50));
        assert_eq!(a.assign(2, 8, 0.0).queue, 1);
        // Flow 1 stopped refreshing (its release was lost): after the expiry it is gone.
        a.expire(SimTime::from_us(10));
        assert_eq!(a.flows(), 1);
        assert_eq!(a.assign(2, 8, 0.0).queue, 0);
    }

    #[test]
    fn a_path_takes_the_lowest_priority_and_the_smallest_rate() {
        let up = Assignment { queue: 0, rate_bps: 10.0 * G };
        let core = Assignment { queue: 2, rate_bps: 0.1 * G };
        let down = Assignment { queue: 1, rate_bps: 4.0 * G };
        assert_eq!(up.combine(core).combine(down), Assignment { queue: 2, rate_bps: 0.1 * G });
        assert_eq!(up.combine(down), Assignment { queue: 1, rate_bps: 4.0 * G });
    }
}
