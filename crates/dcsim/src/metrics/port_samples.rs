//! Port samples (`output.ports_sample_us`): every port's queue and the bytes its link carried,
//! sampled at regular simulated times, stored by column for `ports.parquet`.

use crate::queue::{HopKind, Port, PortQueue};
use crate::units::BitRate;
use dcsim_engine::SimTime;

/// A port as the recordings describe it (`port` ids index a run's list of these).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PortDescription {
    /// The node the port belongs to.
    pub node: u32,
    /// The node at the other end of its link.
    pub peer: u32,
    /// Its link's rate.
    pub rate: BitRate,
    /// Where it sits on paths.
    pub hop: HopKind,
}

impl PortDescription {
    /// Describes `port`.
    pub fn of(port: &Port) -> Self {
        PortDescription { node: port.owner, peer: port.peer, rate: port.rate, hop: port.hop }
    }
}

/// One row per (sample time, port), by column.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct PortSamples {
    /// Sample time, ps.
    pub time_ps: Vec<u64>,
    /// Port id (index in the network's ports).
    pub port: Vec<u32>,
    /// Bytes waiting in the port's queue (not counting the packet being serialized).
    pub queue_bytes: Vec<u64>,
    /// Packets waiting in the port's queue.
    pub queue_packets: Vec<u32>,
    /// Bytes the port's link serialized since the previous sample (time 0 for the first).
    pub tx_bytes: Vec<u64>,
    /// Packets the port dropped since the previous sample.
    pub dropped_packets: Vec<u64>,
    /// Packets the port ECN-marked since the previous sample.
    pub marked_packets: Vec<u64>,
    /// True if the series stopped at the row limit (`output.ports_max_rows`).
    pub truncated: bool,
}

impl PortSamples {
    /// The samples of a partitioned run's partitions as one table: rows by (time, port),
    /// whole samples only up to `max_rows` rows.
    pub fn merge(parts: Vec<PortSamples>, max_rows: u64) -> PortSamples {
        let mut rows: Vec<(u64, u32, usize, usize)> = Vec::new();
        let mut truncated = false;
        for (k, p) in parts.iter().enumerate() {
            truncated |= p.truncated;
            rows.extend((0..p.time_ps.len()).map(|i| (p.time_ps[i], p.port[i], k, i)));
        }
        rows.sort_unstable();
        let mut out = PortSamples { truncated, ..PortSamples::default() };
        let mut k = 0;
        while k < rows.len() {
            let t = rows[k].0;
            let end = k + rows[k..].partition_point(|r| r.0 == t);
            if end as u64 > max_rows {
                out.truncated = true;
                break;
            }
            for &(t, port, part, i) in &rows[k..end] {
                let p = &parts[part];
                out.time_ps.push(t);
                out.port.push(port);
                out.queue_bytes.push(p.queue_bytes[i]);
                out.queue_packets.push(p.queue_packets[i]);
                out.tx_bytes.push(p.tx_bytes[i]);
                out.dropped_packets.push(p.dropped_packets[i]);
                out.marked_packets.push(p.marked_packets[i]);
            }
            k = end;
        }
        out
    }
}

/// Takes port samples; holds each port's counters at the previous sample.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct PortSampler {
    /// The rows so far.
    pub rows: PortSamples,
    max_rows: usize,
    /// Per port: (bytes serialized, drops, marks) at the previous sample.
    last: Vec<(u64, u64, u64)>,
    /// The ports sampled (all of them, or a partition's).
    which: Vec<u32>,
}

impl PortSampler {
    /// A sampler of `n_ports` ports keeping at most `max_rows` rows.
    pub fn new(n_ports: usize, max_rows: u64) -> Self {
        PortSampler::of_ports((0..n_ports as u32).collect(), n_ports, max_rows)
    }

    /// A sampler of the ports `which` (of `n_ports`), keeping at most `max_rows` rows: one
    /// partition's ports in a partitioned run.
    pub fn of_ports(which: Vec<u32>, n_ports: usize, max_rows: u64) -> Self {
        PortSampler {
            rows: PortSamples::default(),
            max_rows: max_rows as usize,
            last: vec![(0, 0, 0); n_ports],
            which,
        }
    }

    /// Samples every port at `t` (no earlier than the last event processed, no later than the
    /// next): false, and nothing recorded, once a full sample would pass the row limit.
    pub fn sample(&mut self, t: SimTime, ports: &mut [Port]) -> bool {
        if self.rows.time_ps.len() + self.which.len() > self.max_rows {
            self.rows.truncated = true;
            return false;
        }
        for &i in &self.which {
            let (i, p) = (i as usize, &mut ports[i as usize]);
            let stats = p.stats();
            let (queue_bytes, queue_packets, committed) = match &mut p.queue {
                PortQueue::Timeline(q) => {
                    // Bookkeeping only: forgets packets that have started by `t`, as the next
                    // arrival at this port (at or after `t`) would.
                    q.advance(t);
                    (q.len_bytes(), q.len_packets(), stats.dequeued_bytes)
                }
                PortQueue::Scheduled(q) => {
                    use crate::queue::QueueDiscipline;
                    (q.len_bytes(), q.len_packets(), stats.dequeued_bytes + q.len_bytes())
                }
            };
            // Every byte committed to the link and not yet serialized lies between `t` and the
            // moment the port falls idle, back to back.
            let unsent_ps = (p.idle_at(t) - t).as_ps() as u128;
            let unsent = (unsent_ps * p.rate.0 as u128 / 8_000_000_000_000) as u64;
            let sent = committed.saturating_sub(unsent);
            let (last_sent, last_drops, last_marks) = self.last[i];
            let sent = sent.max(last_sent);
            let r = &mut self.rows;
            r.time_ps.push(t.as_ps());
            r.port.push(i as u32);
            r.queue_bytes.push(queue_bytes);
            r.queue_packets.push(queue_packets as u32);
            r.tx_bytes.push(sent - last_sent);
            r.dropped_packets.push(stats.dropped_packets - last_drops);
            r.marked_packets.push(stats.marked_packets - last_marks);
            self.last[i] = (sent, stats.dropped_packets, stats.marked_packets);
        }
        true
    }
}
