//! The per-packet trace (`output.packet_trace`): one row per hop event of every packet, by
//! column, for `packets.parquet`. Meant for small runs; the fabric calls it only when on.

use crate::packet::{Packet, PacketId};
use dcsim_engine::SimTime;

/// What happened to a packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum HopEvent {
    /// Admitted to a port's queue (or straight onto its idle link).
    Enqueue = 0,
    /// Its transmission on the port's link started.
    Dequeue = 1,
    /// Dropped by a port (or by a scripted loss).
    Drop = 2,
    /// Consumed where it was going (its destination host, or a switch's arbitrator).
    Deliver = 3,
}

impl HopEvent {
    /// The name `packets.parquet` uses.
    pub fn name(self) -> &'static str {
        match self {
            HopEvent::Enqueue => "enqueue",
            HopEvent::Dequeue => "dequeue",
            HopEvent::Drop => "drop",
            HopEvent::Deliver => "deliver",
        }
    }
}

/// No port (a delivery happens at a node, after the last port).
pub const NO_PORT: u32 = u32::MAX;

/// The rows, by column.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct PacketTrace {
    /// When, ps. A FIFO port commits a packet's transmission when it is admitted, so its
    /// dequeue row is written then, with the (later) start time: rows are not in time order.
    pub time_ps: Vec<u64>,
    /// The packet: numbered in order of creation from 0, unique in the run (pool slots are
    /// reused, these are not). In a partitioned run of P partitions the k-th packet created in
    /// partition i is number k·P + i.
    pub packet: Vec<u64>,
    /// Its flow.
    pub flow: Vec<u32>,
    /// Its sequence number (data: packet index; ACK: cumulative ACK).
    pub seq: Vec<u32>,
    /// Its kind: 0 data, 1 ACK, 2 + code for the protocol's control packet `code`.
    pub kind: Vec<u8>,
    /// Its size on the wire, bytes.
    pub size_bytes: Vec<u32>,
    /// The event, as [`HopEvent`] codes.
    pub event: Vec<u8>,
    /// The node where it happened.
    pub node: Vec<u32>,
    /// The port (its owner is `node`), or [`NO_PORT`] for a delivery.
    pub port: Vec<u32>,
    /// True if the trace stopped at the row limit (`output.packet_trace_max_rows`).
    pub truncated: bool,
}

impl PacketTrace {
    /// The traces of a partitioned run's partitions as one table: rows in time order (ties in
    /// partition order, then in each partition's order), at most `max_rows`.
    pub fn merge(parts: Vec<PacketTrace>, max_rows: u64) -> PacketTrace {
        let mut rows: Vec<(u64, usize, usize)> = Vec::new();
        let mut truncated = false;
        for (k, p) in parts.iter().enumerate() {
            truncated |= p.truncated;
            rows.extend((0..p.time_ps.len()).map(|i| (p.time_ps[i], k, i)));
        }
        rows.sort_unstable();
        if rows.len() as u64 > max_rows {
            rows.truncate(max_rows as usize);
            truncated = true;
        }
        let mut out = PacketTrace { truncated, ..PacketTrace::default() };
        for (t, k, i) in rows {
            let p = &parts[k];
            out.time_ps.push(t);
            out.packet.push(p.packet[i]);
            out.flow.push(p.flow[i]);
            out.seq.push(p.seq[i]);
            out.kind.push(p.kind[i]);
            out.size_bytes.push(p.size_bytes[i]);
            out.event.push(p.event[i]);
            out.node.push(p.node[i]);
            out.port.push(p.port[i]);
        }
        out
    }
}

/// Records hop events; maps pool slots to the run's packet numbers.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct PacketTracer {
    /// The rows so far.
    pub rows: PacketTrace,
    max_rows: usize,
    /// Per pool slot: the packet number it holds now and the last port it was offered to (its
    /// peer is where a delivered packet was consumed).
    slot: Vec<(u64, u32)>,
    created: u64,
    /// Numbers go `first`, `first + stride`, … (a partition's share of the run's numbers).
    first: u64,
    stride: u64,
}

impl PacketTracer {
    /// A tracer keeping at most `max_rows` rows.
    pub fn new(max_rows: u64) -> Self {
        PacketTracer::numbered(max_rows, 0, 1)
    }

    /// A tracer numbering its packets `first`, `first + stride`, … (partition `first` of
    /// `stride`).
    pub fn numbered(max_rows: u64, first: u64, stride: u64) -> Self {
        PacketTracer {
            rows: PacketTrace::default(),
            max_rows: max_rows as usize,
            slot: Vec::new(),
            created: 0,
            first,
            stride,
        }
    }

    /// Packet `id`'s number and last port, for its next partition.
    pub fn identity(&self, id: PacketId) -> (u64, u32) {
        self.slot[id as usize]
    }

    /// A packet from another partition (number and last port `identity`) is now in slot
    /// `id`.
    pub fn on_received(&mut self, id: PacketId, identity: (u64, u32)) {
        let i = id as usize;
        if self.slot.len() <= i {
            self.slot.resize(i + 1, (0, NO_PORT));
        }
        self.slot[i] = identity;
    }

    /// A packet was just created in pool slot `id`.
    pub fn on_created(&mut self, id: PacketId) {
        let i = id as usize;
        if self.slot.len() <= i {
            self.slot.resize(i + 1, (0, NO_PORT));
        }
        self.slot[i] = (self.first + self.created * self.stride, NO_PORT);
        self.created += 1;
    }

    /// The last port packet `id` was offered to.
    pub fn last_port(&self, id: PacketId) -> u32 {
        self.slot[id as usize].1
    }

    /// Records `event` for packet `p` (slot `id`) at `port` (owned by `node`) at `t`.
    pub fn record(
        &mut self,
        t: SimTime,
        id: PacketId,
        p: &Packet,
        event: HopEvent,
        node: u32,
        port: u32,
    ) {
        if port != NO_PORT {
            self.slot[id as usize].1 = port;
        }
        if self.rows.time_ps.len() >= self.max_rows {
            self.rows.truncated = true;
            return;
        }
        let r = &mut self.rows;
        r.time_ps.push(t.as_ps());
        r.packet.push(self.slot[id as usize].0);
        r.flow.push(p.flow);
        r.seq.push(p.seq);
        r.kind.push(p.kind.code());
        r.size_bytes.push(p.size_bytes);
        r.event.push(event as u8);
        r.node.push(node);
        r.port.push(port);
    }
}
