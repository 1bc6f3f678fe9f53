//! `[topology]`: the fabric.

use super::reader::Section;
use super::reader::MAX_BUFFER_BYTES;
use crate::choice::Choice;
use crate::error::SpecError;
use crate::topology_file::FileTopology;
use crate::units::BitRate;
use serde::Serialize;
use std::sync::Arc;

crate::choice! {
    /// Topology kinds.
    pub enum TopologyKind {
        /// Two-tier leaf-spine (the papers' 144-host fabric).
        LeafSpine = "leaf-spine",
        /// Three-tier k-ary fat-tree.
        FatTree = "fat-tree",
        /// One switch.
        Star = "star",
        /// Two switches joined by one bottleneck link.
        Dumbbell = "dumbbell",
        /// Two hosts joined by one link, no switch (for tests and single-link studies).
        Pair = "pair",
        /// Read from a JSON file (`topology.file`; format in `docs/topology-files.md`).
        File = "file",
    }
}

crate::choice! {
    /// Switching mode.
    pub enum Switching {
        /// A switch forwards a packet once its header has arrived (the pHost authors'
        /// simulator, pHost §4.1).
        CutThrough = "cut-through",
        /// A switch forwards a packet once it has fully arrived (ns-2).
        StoreAndForward = "store-and-forward",
    }
}

crate::choice! {
    /// Load balancing over equal-cost paths.
    pub enum LoadBalancing {
        /// Per-packet round robin at every switch (ns-2 packet spraying).
        Spray = "spray",
        /// Per-packet uniformly random choice.
        SprayRandom = "spray-random",
        /// Per-packet round robin with one counter per source host at every switch: the pHost
        /// authors' simulator picks a packet's ToR uplink from a counter kept on its sender's
        /// NIC queue (`coresim/topology.cpp`, `PFabricTopology::get_next_hop`).
        SprayPerSource = "spray-per-source",
        /// Per-flow hash (ECMP).
        Ecmp = "ecmp",
    }
}

/// The memory a switch shares among its ports, under dynamic thresholds.
#[derive(Copy, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SharedBuffer {
    /// The switch's memory, bytes.
    pub bytes: u64,
    /// Dynamic thresholds' α.
    pub alpha: f64,
}

impl SharedBuffer {
    /// Whether a port holding `port_bytes` may take `size` more bytes while its switch's ports
    /// hold `switch_bytes` in all: the port's queue must stay within α × the free memory
    /// (Choudhury and Hahne's dynamic threshold), and the memory must hold the packet.
    #[inline]
    pub fn admits(&self, port_bytes: u64, switch_bytes: u64, size: u64) -> bool {
        let free = self.bytes.saturating_sub(switch_bytes);
        size <= free && (port_bytes + size) as f64 <= self.alpha * free as f64
    }
}

/// `[topology]`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TopologySpec {
    /// `leaf-spine` (default), `fat-tree`, `star`, `dumbbell`, `pair` (two hosts, one link) or
    /// `file` (read from `file`).
    pub kind: TopologyKind,
    /// File: the JSON topology file (a relative path resolves against the spec file). Default
    /// "" (none).
    pub file: String,
    /// File: the topology read from `file` (not part of the serialized spec: the path is).
    #[serde(skip)]
    pub graph: Option<Arc<FileTopology>>,
    /// Leaf-spine: number of racks (ToR switches). Default 9.
    pub racks: u32,
    /// Leaf-spine: hosts per rack. Default 16.
    pub hosts_per_rack: u32,
    /// Leaf-spine: spine switches. Default 4.
    pub spines: u32,
    /// Fat-tree: the arity k (even). Default 6 (54 hosts).
    pub k: u32,
    /// Star: number of hosts. Default 16.
    pub hosts: u32,
    /// Dumbbell: hosts on each side. Default 1.
    pub hosts_per_side: u32,
    /// Host (edge) link rate in Gbps. Default 10.
    pub host_link_gbps: f64,
    /// Switch-to-switch link rate in Gbps. Default: leaf-spine 40 (host rate × hosts per rack
    /// / spines / oversubscription); fat-tree, star, dumbbell: the host rate.
    pub core_link_gbps: f64,
    /// Leaf-spine: oversubscription ratio used to derive `core_link_gbps` when that is not
    /// given. Default 1.
    pub oversubscription: f64,
    /// Propagation delay of every link, ns. Default 200.
    pub link_delay_ns: u64,
    /// Extra one-way delay on every host link, ns (2500 in the pFabric scripts). Default 0.
    pub host_delay_ns: u64,
    /// `cut-through` (default) or `store-and-forward`.
    pub switching: Switching,
    /// `spray` (default), `spray-random`, `spray-per-source` or `ecmp`.
    pub load_balancing: LoadBalancing,
    /// Buffer per switch port and per NIC, bytes. Default 36864. `transport.buffer_bytes`
    /// overrides it.
    pub buffer_bytes: u64,
    /// The memory each switch shares among its ports, bytes; 0 (default): none, every port
    /// has only its own buffer. With a shared memory a switch port admits a packet only while
    /// its queue stays within `buffer_alpha` × the memory its switch has free (dynamic
    /// thresholds, Choudhury and Hahne, IEEE/ACM ToN 1998); the per-port buffer is then the
    /// NICs' alone.
    pub shared_buffer_bytes: u64,
    /// Dynamic thresholds' α: a lone congested port of a shared memory B settles at
    /// α·B/(1 + α). Default 1 (half the memory). Read only with `shared_buffer_bytes`.
    pub buffer_alpha: f64,
}

impl TopologySpec {
    /// Host link rate.
    pub fn host_rate(&self) -> BitRate {
        BitRate::from_gbps(self.host_link_gbps)
    }
    /// Switch-to-switch link rate.
    pub fn core_rate(&self) -> BitRate {
        BitRate::from_gbps(self.core_link_gbps)
    }
    /// A fat-tree's aggregation–core link rate: the switch-to-switch rate divided by the
    /// oversubscription, so that the core is the bottleneck of traffic between pods (PASE
    /// SIGCOMM'14 §4.2: "the aggregation-core link becomes the bottleneck").
    pub fn fat_tree_core_rate(&self) -> BitRate {
        BitRate::from_gbps(self.core_link_gbps / self.oversubscription)
    }
    /// The switches' shared memory, if they have one.
    pub fn shared_buffer(&self) -> Option<SharedBuffer> {
        (self.shared_buffer_bytes > 0)
            .then_some(SharedBuffer { bytes: self.shared_buffer_bytes, alpha: self.buffer_alpha })
    }
    /// Number of hosts this topology has.
    pub fn n_hosts(&self) -> u32 {
        match self.kind {
            TopologyKind::LeafSpine => self.racks * self.hosts_per_rack,
            TopologyKind::FatTree => self.k * self.k * self.k / 4,
            TopologyKind::Star => self.hosts,
            TopologyKind::Dumbbell => 2 * self.hosts_per_side,
            TopologyKind::Pair => 2,
            TopologyKind::File => self.graph.as_ref().map_or(0, |g| g.hosts.len() as u32),
        }
    }
}

/// Resolves `[topology]`.
pub fn resolve(t: &Section<'_>) -> Result<TopologySpec, SpecError> {
    let kind = t.choice("kind", TopologyKind::LeafSpine)?;
    let file = t.string("file")?.unwrap_or("").to_string();
    let graph = match (kind, file.is_empty()) {
        (TopologyKind::File, true) => {
            return Err(SpecError::new(
                t.field("file"),
                "topology.kind = \"file\" needs the path of a topology file (format: docs/topology-files.md)",
            ))
        }
        (TopologyKind::File, false) => Some(Arc::new(
            FileTopology::load(std::path::Path::new(&file))
                .map_err(|e| SpecError::new(t.field("file"), e))?,
        )),
        (_, false) => {
            return Err(SpecError::new(
                t.field("file"),
                format!(
                    "\"{file}\" is a topology file, but topology.kind = \"{}\"; set topology.kind = \"file\" to use it",
                    kind.name()
                ),
            ))
        }
        (_, true) => None,
    };
    let racks = t.u32_in("racks", 9, 1, 4096)?;
    let hosts_per_rack = t.u32_in("hosts_per_rack", 16, 1, 4096)?;
    let spines = t.u32_in("spines", 4, 1, 1024)?;
    let k = t.u32_in("k", 6, 2, 64)?;
    if kind == TopologyKind::FatTree && k % 2 != 0 {
        return Err(SpecError::new(
            t.field("k"),
            format!("{k} does not fit a fat-tree: k must be even"),
        ));
    }
    let hosts = t.u32_in("hosts", 16, 2, 65536)?;
    let hosts_per_side = t.u32_in("hosts_per_side", 1, 1, 65536)?;
    let default_host_gbps = graph.as_ref().map_or(10.0, |g| g.host_link_gbps);
    let host_link_gbps = t.f64_in(
        "host_link_gbps",
        default_host_gbps,
        1e-3,
        1e4,
        "must be a positive rate in Gbps",
    )?;
    // A file sets the host rate; a resolved spec repeats it, so an equal value is accepted.
    if graph.is_some() && host_link_gbps != default_host_gbps {
        return Err(SpecError::new(
            t.field("host_link_gbps"),
            format!(
                "{host_link_gbps} disagrees with the host links of topology.file ({default_host_gbps} Gbps); the file sets the rates, leave host_link_gbps out"
            ),
        ));
    }
    let oversubscription =
        t.f64_in("oversubscription", 1.0, 1e-3, 1e3, "must be a positive ratio")?;
    let default_core = match kind {
        TopologyKind::LeafSpine => {
            host_link_gbps * hosts_per_rack as f64 / spines as f64 / oversubscription
        }
        _ => host_link_gbps,
    };
    if t.raw("core_link_gbps").is_none() && !(1e-3..=1e5).contains(&default_core) {
        return Err(SpecError::new(
            t.field("oversubscription"),
            format!(
                "{oversubscription} makes the core rate {default_core} Gbps (host rate × hosts per rack / spines / oversubscription), outside 0.001 to 100000"
            ),
        ));
    }
    let core_link_gbps =
        t.f64_in("core_link_gbps", default_core, 1e-3, 1e5, "must be a positive rate in Gbps")?;
    // Both may be given (a resolved spec has both) as long as they agree.
    if kind == TopologyKind::LeafSpine
        && t.raw("core_link_gbps").is_some()
        && t.raw("oversubscription").is_some()
        && (core_link_gbps - default_core).abs() > 1e-9 * default_core
    {
        return Err(SpecError::new(
            t.field("oversubscription"),
            format!(
                "{oversubscription} disagrees with `topology.core_link_gbps` = {core_link_gbps} \
                 (which implies {}); give one of them",
                host_link_gbps * hosts_per_rack as f64 / spines as f64 / core_link_gbps
            ),
        ));
    }
    // A core rate given on its own sets the ratio, so the resolved spec (which shows both)
    // agrees with itself; the derived value must itself be valid, or the stored spec would
    // not re-run.
    let oversubscription = if kind == TopologyKind::LeafSpine && t.raw("oversubscription").is_none()
    {
        let derived = host_link_gbps * hosts_per_rack as f64 / spines as f64 / core_link_gbps;
        if !(1e-3..=1e3).contains(&derived) {
            return Err(SpecError::new(
                t.field("core_link_gbps"),
                format!(
                    "{core_link_gbps} Gbps implies an oversubscription of {derived} (host rate × hosts per rack / spines / core rate), outside 0.001 to 1000"
                ),
            ));
        }
        derived
    } else {
        oversubscription
    };
    let spec = TopologySpec {
        kind,
        file,
        graph,
        racks,
        hosts_per_rack,
        spines,
        k,
        hosts,
        hosts_per_side,
        host_link_gbps,
        core_link_gbps,
        oversubscription,
        link_delay_ns: t.u64_in("link_delay_ns", 200, 0, 1_000_000_000)?,
        host_delay_ns: t.u64_in("host_delay_ns", 0, 0, 1_000_000_000)?,
        switching: t.choice("switching", Switching::CutThrough)?,
        load_balancing: t.choice("load_balancing", LoadBalancing::Spray)?,
        buffer_bytes: t.bytes_in("buffer_bytes", 36_864, 0, MAX_BUFFER_BYTES)?,
        shared_buffer_bytes: t.bytes_in("shared_buffer_bytes", 0, 0, MAX_BUFFER_BYTES)?,
        buffer_alpha: t.f64_in(
            "buffer_alpha",
            1.0,
            1.0 / 64.0,
            64.0,
            "must be between 1/64 and 64",
        )?,
    };
    if spec.shared_buffer_bytes > 0 && spec.shared_buffer_bytes < crate::units::MTU_BYTES as u64 {
        return Err(SpecError::new(
            t.field("shared_buffer_bytes"),
            format!(
                "{} bytes cannot hold one 1500-byte packet; 0 turns the shared memory off",
                spec.shared_buffer_bytes
            ),
        ));
    }
    if spec.buffer_bytes < crate::units::MTU_BYTES as u64 {
        return Err(SpecError::new(
            t.field("buffer_bytes"),
            format!("{} bytes cannot hold one 1500-byte packet", spec.buffer_bytes),
        ));
    }
    if spec.n_hosts() < 2 {
        return Err(SpecError::new(t.field("kind"), "the topology must have at least 2 hosts"));
    }
    if spec.n_hosts() > 1_000_000 {
        return Err(SpecError::new(
            t.field("kind"),
            format!("{} hosts do not fit: at most 1,000,000", spec.n_hosts()),
        ));
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::SharedBuffer;

    #[test]
    fn dynamic_thresholds_admit_within_alpha_times_the_free_memory() {
        let b = SharedBuffer { bytes: 10_000, alpha: 1.0 };
        // Empty switch: a port may take up to α·10,000.
        assert!(b.admits(0, 0, 1500));
        // The port holds 4,000 of the switch's 4,000: free 6,000, 4,000 + 1,500 ≤ 6,000.
        assert!(b.admits(4000, 4000, 1500));
        // 4,500 + 1,500 = 6,000 > 5,500 free.
        assert!(!b.admits(4500, 4500, 1500));
        // Other ports' bytes shrink the threshold: free 3,000, 0 + 1,500 ≤ 3,000; 2,000 more not.
        assert!(b.admits(0, 7000, 1500));
        assert!(!b.admits(2000, 7000, 1500));
        // α = 2: free 6,000 allows 12,000 for the port, but never more than the memory holds.
        let b2 = SharedBuffer { alpha: 2.0, ..b };
        assert!(b2.admits(4000, 4000, 1500));
        assert!(!b2.admits(0, 9000, 1500)); // 1,000 free cannot hold 1,500 bytes
    }
}
