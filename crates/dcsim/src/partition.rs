//! How a partitioned run (the opt-in partitioned model, `engine.partitioned = true`) divides
//! the fabric: a function of the topology alone, never of the number of threads, so every thread count runs the same partitions and gives the same
//! results (see `docs/parallel.md`).
//!
//! * Each edge switch (a switch with a host on it) forms a partition with its hosts: a rack of
//!   a leaf-spine, a side of a dumbbell, a star's only switch (which makes a star one
//!   partition). A service host (Fastpass's arbiter) hangs off an edge switch like any host.
//! * A fat-tree's pods are one partition each (edge and aggregation switches with their hosts:
//!   the traffic between a pod's edges and aggregations stays inside it), and its core switches
//!   are grouped by the aggregation switch they serve in pod 0 (k/2 groups of k/2).
//! * Every other switch (a leaf-spine's spines, the inner switches of a topology file) is a
//!   partition of its own.
//!
//! Partitions are numbered by their smallest node id, so racks and pods come first, in order.
//! The lookahead is the smallest propagation delay of a link between two partitions: a packet
//! that leaves a partition at time t reaches another at t + lookahead or later, so each
//! partition can run a window of that length without hearing from the others.

use crate::spec::{TopologyKind, TopologySpec};
use crate::topology::{Network, NodeKind};
use dcsim_engine::SimTime;

/// Which partition owns each node, and the window length that makes the partitions
/// independent within a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionMap {
    /// The partition of each node.
    pub of_node: Vec<u32>,
    /// Number of partitions.
    pub count: u32,
    /// The smallest delay of a link between two partitions (`SimTime::MAX` with one
    /// partition).
    pub lookahead: SimTime,
}

impl PartitionMap {
    /// Everything in one partition.
    pub fn single(n_nodes: u32) -> Self {
        PartitionMap { of_node: vec![0; n_nodes as usize], count: 1, lookahead: SimTime::MAX }
    }

    /// The partitions of `net` built from `spec` (module docs). A fabric whose partitions
    /// would be joined by a link without delay is one partition (no window could be long
    /// enough).
    pub fn of(spec: &TopologySpec, net: &Network) -> Self {
        let n = net.n_nodes() as usize;
        let n_hosts = net.n_hosts();
        let switch_peers = |x: u32| {
            net.ports_of(x)
                .iter()
                .map(|&p| net.ports[p as usize].peer)
                .filter(|&y| net.kind(y) == NodeKind::Switch)
        };
        let is_edge: Vec<bool> = (0..n as u32)
            .map(|x| {
                net.kind(x) == NodeKind::Switch
                    && net.ports_of(x).iter().any(|&p| net.ports[p as usize].peer < n_hosts)
            })
            .collect();
        // Each node's group leader: hosts follow their NIC's peer (a switch, or the host at
        // the other end of a pair); switches lead themselves unless merged below.
        let mut leader: Vec<u32> = (0..n as u32).collect();
        for h in 0..n_hosts {
            let peer = net.ports[net.nic(h) as usize].peer;
            leader[h as usize] = if net.kind(peer) == NodeKind::Host { h.min(peer) } else { peer };
        }
        if spec.kind == TopologyKind::FatTree {
            // An aggregation switch joins the pod of its first edge switch (all of its edges
            // are of one pod); a core switch joins its group: the first aggregation switch it
            // serves.
            for x in n_hosts..n as u32 {
                if is_edge[x as usize] {
                    continue;
                }
                let first_edge = switch_peers(x).filter(|&y| is_edge[y as usize]).min();
                if let Some(e) = first_edge {
                    leader[x as usize] = e;
                }
            }
            for x in n_hosts..n as u32 {
                let is_agg = |y: u32| !is_edge[y as usize] && leader[y as usize] != y;
                if is_edge[x as usize] || is_agg(x) {
                    continue;
                }
                if let Some(a) = switch_peers(x).filter(|&y| is_agg(y)).min() {
                    leader[x as usize] = n as u32 + a; // a core group, apart from the pods
                }
            }
            // A pod's edges follow the pod's first edge (the leader of its aggregations).
            for x in n_hosts..n as u32 {
                if is_edge[x as usize] {
                    let agg = switch_peers(x).find(|&y| !is_edge[y as usize]);
                    if let Some(a) = agg {
                        leader[x as usize] = leader[a as usize];
                    }
                }
            }
            for h in 0..n_hosts {
                let edge = net.ports[net.nic(h) as usize].peer;
                leader[h as usize] = leader[edge as usize];
            }
        }
        // Number the groups in order of their first node.
        let mut index = std::collections::HashMap::new();
        let of_node: Vec<u32> = leader
            .iter()
            .map(|&l| {
                let next = index.len() as u32;
                *index.entry(l).or_insert(next)
            })
            .collect();
        let count = index.len() as u32;
        let lookahead = net
            .ports
            .iter()
            .filter(|p| of_node[p.owner as usize] != of_node[p.peer as usize])
            .map(|p| p.delay)
            .min()
            .unwrap_or(SimTime::MAX);
        if count == 1 || lookahead == SimTime::ZERO {
            return PartitionMap::single(n as u32);
        }
        PartitionMap { of_node, count, lookahead }
    }

    /// The nodes of each partition.
    pub fn members(&self) -> Vec<Vec<u32>> {
        let mut m = vec![Vec::new(); self.count as usize];
        for (node, &p) in self.of_node.iter().enumerate() {
            m[p as usize].push(node as u32);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{DropTail, EcnMarking, PortQueue};
    use crate::spec::Spec;

    fn map(toml: &str, service_hosts: u32) -> (PartitionMap, Network) {
        let spec = Spec::from_toml_str(toml).unwrap();
        let net = Network::build_with_service_hosts(&spec.topology, service_hosts, &|_| {
            (PortQueue::Timeline(DropTail::new(100_000)), EcnMarking::Off)
        });
        (PartitionMap::of(&spec.topology, &net), net)
    }

    /// Issue 16 item 1: a leaf-spine is one partition per rack (ToR and hosts), then one per
    /// spine; the window is the 200 ns ToR–spine delay.
    #[test]
    fn a_leaf_spine_is_its_racks_then_its_spines() {
        let (m, _) = map("[topology]\nracks = 3\nhosts_per_rack = 2\nspines = 2", 0);
        // Hosts 0-5, ToRs 6-8, spines 9-10.
        assert_eq!(m.of_node, vec![0, 0, 1, 1, 2, 2, 0, 1, 2, 3, 4]);
        assert_eq!(m.count, 5);
        assert_eq!(m.lookahead, SimTime::from_ns(200));
        assert_eq!(m.members()[1], vec![2, 3, 7]);
        // The papers' 144-host fabric: 9 racks and 4 spines.
        assert_eq!(map("[topology]\nkind = \"leaf-spine\"", 0).0.count, 13);
    }

    /// Issue 16 item 1: a fat-tree (k = 4) is one partition per pod (2 edges, 2 aggregations,
    /// 4 hosts), then two groups of two core switches (those serving aggregation 0 and 1 of
    /// each pod).
    #[test]
    fn a_fat_tree_is_its_pods_then_its_core_groups() {
        let (m, net) = map("[topology]\nkind = \"fat-tree\"\nk = 4\nlink_delay_ns = 500", 0);
        assert_eq!(m.count, 6);
        let members = m.members();
        for (pod, nodes) in members.iter().take(4).enumerate() {
            let hosts: Vec<u32> = nodes.iter().copied().filter(|&x| x < 16).collect();
            assert_eq!(hosts, (4 * pod as u32..4 * pod as u32 + 4).collect::<Vec<_>>());
            // Pod switches: ids 16 + 4·pod .. +4 (2 edges then 2 aggregations).
            let switches: Vec<u32> = nodes.iter().copied().filter(|&x| x >= 16).collect();
            let first = 16 + 4 * pod as u32;
            assert_eq!(switches, (first..first + 4).collect::<Vec<_>>());
        }
        // Cores 32-35: 32, 33 serve aggregation 0 of every pod; 34, 35 aggregation 1.
        assert_eq!((members[4].clone(), members[5].clone()), (vec![32, 33], vec![34, 35]));
        assert_eq!(m.lookahead, SimTime::from_ns(500));
        // k = 16 (1,024 hosts): 16 pods and 8 core groups.
        assert_eq!(map("[topology]\nkind = \"fat-tree\"\nk = 16", 0).0.count, 24);
        // Every link between partitions is an aggregation–core link.
        for p in &net.ports {
            if m.of_node[p.owner as usize] != m.of_node[p.peer as usize] {
                assert!(p.owner >= 32 || p.peer >= 32, "{} -> {}", p.owner, p.peer);
            }
        }
    }

    /// Issue 16 item 1: a star and a pair are one partition; a dumbbell is its two sides; a
    /// service host joins host 0's rack.
    #[test]
    fn stars_pairs_dumbbells_and_service_hosts() {
        assert_eq!(map("[topology]\nkind = \"star\"\nhosts = 4", 0).0.count, 1);
        assert_eq!(map("[topology]\nkind = \"pair\"", 0).0, PartitionMap::single(2));
        let (m, _) = map("[topology]\nkind = \"dumbbell\"\nhosts_per_side = 2", 0);
        assert_eq!(m.of_node, vec![0, 0, 1, 1, 0, 1]);
        let (m, _) = map("[topology]\nracks = 2\nhosts_per_rack = 2\nspines = 1", 1);
        // Hosts 0-3, the service host 4 (on ToR 5), ToRs 5-6, spine 7.
        assert_eq!(m.of_node, vec![0, 0, 1, 1, 0, 0, 1, 2]);
    }

    /// Issue 16 item 1: links without delay between partitions leave no window: one
    /// partition.
    #[test]
    fn a_fabric_without_link_delay_is_one_partition() {
        let (m, _) = map("[topology]\nracks = 2\nhosts_per_rack = 2\nlink_delay_ns = 0", 0);
        assert_eq!(m.count, 1);
    }
}
