//! Packets and the pool they live in.
//!
//! Packets are plain values stored in one arena ([`PacketPool`]) and addressed by a
//! [`PacketId`]. A freed slot goes on a free list and is reused, so once the pool has grown to
//! the peak number of packets in flight the hot path never allocates.

use dcsim_engine::SimTime;

/// Index of a packet in the [`PacketPool`].
pub type PacketId = u32;

/// What a packet is: data, an acknowledgement, or a control packet whose meaning belongs to
/// the run's protocol (each protocol module names its own codes with
/// [`PacketKind::control`], e.g. pHost's RTS and token; one run has one protocol, so codes of
/// different protocols never meet). One byte, compared as an integer on the hot path.
#[derive(Copy, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PacketKind(u8);

impl PacketKind {
    /// A data segment carrying part of a flow.
    pub const DATA: PacketKind = PacketKind(0);
    /// A (cumulative) acknowledgement.
    pub const ACK: PacketKind = PacketKind(1);

    /// The run's protocol's control packet number `code` (0-253).
    pub const fn control(code: u8) -> PacketKind {
        assert!(code <= 253, "control codes are 0-253");
        PacketKind(code + 2)
    }

    /// The kind as one byte: 0 data, 1 ACK, 2 + code for control packet `code`.
    pub fn code(self) -> u8 {
        self.0
    }

    /// The protocol's control code, for a control packet.
    pub fn control_code(self) -> Option<u8> {
        self.0.checked_sub(2)
    }
}

impl std::fmt::Debug for PacketKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (*self, self.control_code()) {
            (PacketKind::DATA, _) => write!(f, "Data"),
            (PacketKind::ACK, _) => write!(f, "Ack"),
            (_, code) => write!(f, "Control({})", code.unwrap_or_default()),
        }
    }
}

/// ECN codepoints and the echo flag, as bits.
pub mod ecn {
    /// ECN-capable transport: switches may mark instead of ignoring.
    pub const ECT: u8 = 1;
    /// Congestion experienced: set by a switch on an ECT packet.
    pub const CE: u8 = 2;
    /// ECN echo: set on an ACK whose data packet carried CE.
    pub const ECE: u8 = 4;
}

/// One packet. Small and `Copy`: 56 bytes of fields, aligned to one 64-byte cache line
/// (checked by a test) so that reading a packet in the pool touches one line, not the two a
/// 56-byte stride straddles for most packets (issue 16 lever 2).
#[derive(Copy, Clone, Debug, serde::Serialize, serde::Deserialize)]
#[repr(align(64))]
pub struct Packet {
    /// Global id of the flow (never reused within a run).
    pub flow: u32,
    /// Slot of the flow in the transport's table, for O(1) lookup at the ends.
    pub slot: u32,
    /// Source host index.
    pub src: u32,
    /// Destination host index.
    pub dst: u32,
    /// Data: the packet's index in the flow (0-based). Ack: the next packet expected.
    pub seq: u32,
    /// Bytes on the wire, header included.
    pub size_bytes: u32,
    /// Scheduling priority for priority-aware disciplines; lower is more urgent.
    pub priority: u64,
    /// Data: when the sender transmitted it. Ack: the echoed send time of the data packet
    /// that triggered it (a timestamp option), for RTT samples.
    pub timestamp: SimTime,
    /// What it is.
    pub kind: PacketKind,
    /// ECN bits ([`ecn`]).
    pub ecn: u8,
    /// Strict-priority class for multi-queue ports (0 = highest).
    pub class: u8,
    /// True for a data packet that is a retransmission (for statistics), or a control packet
    /// sent again (a pHost or dcPIM RTS under their source timeouts).
    pub retransmit: bool,
    /// A control packet the switches' arbitrators read (handed to the transport at every
    /// switch it reaches: PASE's arbitration messages).
    pub inspect: bool,
    /// Ports this packet has been offered to so far (0 before the source NIC); counted only
    /// while scripted losses are active.
    pub hops: u8,
    /// Protocol-owned header words: their meaning is the packet's protocol's (e.g. pHost's
    /// token sequence number and remaining count); zero unless a protocol sets them.
    pub header: [u32; 2],
}

impl Packet {
    /// A packet of `kind` with priority 0, class 0, no ECN bits, not a retransmission.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kind: PacketKind,
        flow: u32,
        slot: u32,
        src: u32,
        dst: u32,
        seq: u32,
        size_bytes: u32,
        timestamp: SimTime,
    ) -> Packet {
        Packet {
            flow,
            slot,
            src,
            dst,
            seq,
            size_bytes,
            priority: 0,
            timestamp,
            kind,
            ecn: 0,
            class: 0,
            retransmit: false,
            inspect: false,
            hops: 0,
            header: [0; 2],
        }
    }

    /// True for header-only control packets (ACKs and the like).
    #[inline]
    pub fn is_control(&self) -> bool {
        self.kind != PacketKind::DATA
    }
}

/// Arena of packets with a free list.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    live: usize,
    peak: usize,
}

impl PacketPool {
    /// An empty pool.
    pub fn new() -> Self {
        PacketPool {
            slots: Vec::with_capacity(4096),
            free: Vec::with_capacity(4096),
            live: 0,
            peak: 0,
        }
    }

    /// Stores `p` and returns its id. Amortised O(1); allocates only when the pool grows past
    /// its previous peak.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        if self.live > self.peak {
            self.peak = self.live;
        }
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PacketId
        }
    }

    /// Returns slot `id` to the free list. The caller must not use `id` afterwards.
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(self.live > 0);
        self.live -= 1;
        self.free.push(id);
    }

    /// The packet `id`.
    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    /// The packet `id`, mutably.
    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets currently alive (in a queue, on a wire or being handled).
    pub fn live(&self) -> usize {
        self.live
    }

    /// Most packets alive at once so far.
    pub fn peak(&self) -> usize {
        self.peak
    }
}

/// A set of one flow's packet indices (which packets a receiver holds, or a sender knows
/// acknowledged): a bitmap that grows as indices are added. Room for a flow's packets is
/// reserved when it starts, up to [`SeqSet::RESERVE_WORDS`] words; beyond that the bitmap grows
/// with the packets that actually arrive, so a long-lived flow of 1 TB (6.85·10⁸ packets)
/// costs memory for what it moves during the run, not for its size.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct SeqSet {
    words: Vec<u64>,
}

impl SeqSet {
    /// Words reserved at [`SeqSet::reset`] at most (2²² packets, a flow of 6.1 GB).
    pub const RESERVE_WORDS: usize = 1 << 16;

    /// Empties the set for a flow of `n_pkts` packets, keeping its storage.
    pub fn reset(&mut self, n_pkts: u32) {
        self.words.clear();
        self.words.resize((n_pkts as usize).div_ceil(64).min(Self::RESERVE_WORDS), 0);
    }

    /// Whether `seq` is in the set.
    #[inline]
    pub fn contains(&self, seq: u32) -> bool {
        self.words.get((seq / 64) as usize).is_some_and(|w| w & (1 << (seq % 64)) != 0)
    }

    /// Adds `seq`; true if it was not in the set.
    #[inline]
    pub fn insert(&mut self, seq: u32) -> bool {
        let bit = 1 << (seq % 64);
        match self.words.get_mut((seq / 64) as usize) {
            Some(w) => {
                let new = *w & bit == 0;
                *w |= bit;
                new
            }
            None => self.grow_to_insert(seq),
        }
    }

    /// Adds `seq`, beyond the storage so far.
    #[cold]
    fn grow_to_insert(&mut self, seq: u32) -> bool {
        self.words.resize((seq / 64) as usize + 1, 0);
        self.insert(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::SeqSet;

    #[test]
    fn packet_stays_small() {
        assert_eq!(std::mem::size_of::<super::Packet>(), 64);
        assert_eq!(std::mem::align_of::<super::Packet>(), 64);
    }

    #[test]
    fn seq_sets_grow_past_their_reservation_and_reset_empty() {
        let mut s = SeqSet::default();
        s.reset(685_000_000); // 1 TB: only the reservation is allocated
        assert_eq!(s.words.len(), SeqSet::RESERVE_WORDS);
        let far = 600_000_000;
        assert!(!s.contains(far) && !s.contains(3));
        assert!(s.insert(far) && !s.insert(far) && s.insert(3));
        assert!(s.contains(far) && s.contains(3) && !s.contains(4) && !s.contains(far + 1));
        s.reset(10);
        assert_eq!(s.words, [0]);
        assert!(!s.contains(3) && !s.contains(far));
    }
}
