//! Topologies: nodes, links and the routing tables computed from them.
//!
//! Hosts are nodes `0..n_hosts`, each with exactly one NIC port; switches follow. Every link
//! is full duplex and becomes two [`Port`]s, one at each end. Routing is computed once, by a
//! breadth-first search from every host: a switch may forward towards host `h` through any
//! port whose peer is one hop closer to `h`. That gives all equal-cost next hops for every
//! topology without topology-specific routing code; load balancing ([`LoadBalancing`]) then
//! picks one per packet or per flow.

mod dumbbell;
mod fat_tree;
mod file;
mod leaf_spine;
mod star;

use crate::queue::{EcnMarking, HopKind, Port, PortQueue};
use crate::spec::{LoadBalancing, TopologyKind, TopologySpec};
use crate::streams::ElementRngs;
use crate::units::BitRate;
use dcsim_engine::SimTime;

/// Whether a node is a host or a switch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum NodeKind {
    /// An end host with one NIC.
    Host,
    /// A switch.
    Switch,
}

/// What a queue factory is told about the port it builds a queue for.
#[derive(Copy, Clone, Debug)]
pub struct PortInfo {
    /// Position of the port on paths.
    pub hop: HopKind,
    /// Link rate.
    pub rate: BitRate,
}

/// Builds each port's queue discipline and marking rule; supplied by the transport.
pub type QueueFactory<'a> = dyn Fn(PortInfo) -> (PortQueue, EcnMarking) + 'a;

/// A link between two nodes before queues are attached.
#[derive(Clone, Debug)]
struct LinkSpec {
    a: u32,
    b: u32,
    rate: BitRate,
    delay: SimTime,
}

/// Collects nodes and links; `finish` turns them into a [`Network`].
#[derive(Debug, Default)]
pub(crate) struct Builder {
    kinds: Vec<NodeKind>,
    links: Vec<LinkSpec>,
    rack_of_host: Vec<u32>,
    /// Service hosts (a Fastpass arbiter) reserved after the topology's own hosts.
    extra_hosts: u32,
}

impl Builder {
    /// Adds `n` hosts (and room for the extra service hosts after them); hosts must be added
    /// before switches.
    pub(crate) fn hosts(&mut self, n: u32) {
        debug_assert!(self.kinds.iter().all(|k| *k == NodeKind::Host));
        self.kinds.extend(std::iter::repeat_n(NodeKind::Host, (n + self.extra_hosts) as usize));
        self.rack_of_host.resize(self.kinds.len(), 0);
    }

    /// Attaches the reserved service hosts to host 0's edge switch with host-rate links (the
    /// pHost authors' Fastpass arbiter hangs off ToR 0 in NetSys/simulator).
    fn attach_extra_hosts(&mut self, spec: &TopologySpec) {
        let n = self.rack_of_host.len() as u32;
        let first = n - self.extra_hosts;
        let kinds = &self.kinds;
        let edge = self.links.iter().find(|l| l.a == 0 && kinds[l.b as usize] == NodeKind::Switch);
        let edge =
            edge.expect("service hosts need host 0 to sit on a switch (checked by the spec)").b;
        for h in first..n {
            self.link(h, edge, spec.host_rate(), SimTime::from_ns(spec.link_delay_ns));
            self.rack_of_host[h as usize] = self.rack_of_host[0];
        }
    }
    /// Adds a switch and returns its node id.
    pub(crate) fn switch(&mut self) -> u32 {
        self.kinds.push(NodeKind::Switch);
        (self.kinds.len() - 1) as u32
    }
    /// Connects `a` and `b` with a full-duplex link.
    pub(crate) fn link(&mut self, a: u32, b: u32, rate: BitRate, delay: SimTime) {
        self.links.push(LinkSpec { a, b, rate, delay });
    }
    /// Records host `h`'s rack (edge switch group), for reports.
    pub(crate) fn set_rack(&mut self, h: u32, rack: u32) {
        self.rack_of_host[h as usize] = rack;
    }

    fn finish(self, spec: &TopologySpec, factory: &QueueFactory<'_>) -> Network {
        let n_nodes = self.kinds.len();
        let n_hosts = self.kinds.iter().filter(|k| **k == NodeKind::Host).count() as u32;
        let mut adjacency: Vec<Vec<u32>> = vec![Vec::new(); n_nodes];
        let host_delay = SimTime::from_ns(spec.host_delay_ns);
        let cut_through = spec.switching == crate::spec::Switching::CutThrough;
        // Node ids that have a host neighbour: edge (ToR) switches.
        let mut is_edge = vec![false; n_nodes];
        for l in &self.links {
            for (x, y) in [(l.a, l.b), (l.b, l.a)] {
                if self.kinds[x as usize] == NodeKind::Host {
                    is_edge[y as usize] = true;
                }
            }
        }
        let mut ports = Vec::with_capacity(self.links.len() * 2);
        for l in &self.links {
            for (owner, peer) in [(l.a, l.b), (l.b, l.a)] {
                let owner_host = self.kinds[owner as usize] == NodeKind::Host;
                let peer_host = self.kinds[peer as usize] == NodeKind::Host;
                let hop = if owner_host {
                    HopKind::SourceNic
                } else if peer_host {
                    HopKind::TorDownlink
                } else if is_edge[owner as usize] {
                    HopKind::TorUplink
                } else {
                    HopKind::Core
                };
                // The per-host delay of the pFabric scripts sits on host links in the pFabric authors' ns-2 scripts.
                let delay = if owner_host || peer_host { l.delay + host_delay } else { l.delay };
                let (queue, marking) = factory(PortInfo { hop, rate: l.rate });
                adjacency[owner as usize].push(ports.len() as u32);
                ports.push(Port::new(
                    owner,
                    peer,
                    peer_host,
                    cut_through,
                    l.rate,
                    delay,
                    hop,
                    queue,
                    marking,
                ));
            }
        }
        let host_nic: Vec<u32> = (0..n_hosts)
            .map(|h| {
                let a = &adjacency[h as usize];
                assert_eq!(a.len(), 1, "host {h} must have exactly one NIC");
                a[0]
            })
            .collect();
        let routes = std::sync::Arc::new(Routes::compute(n_hosts, &adjacency, &ports));
        Network {
            kinds: self.kinds,
            ports,
            adjacency,
            host_nic,
            n_hosts,
            rack_of_host: self.rack_of_host,
            routes,
            cut_through,
            shared_buffer: spec.shared_buffer(),
        }
    }
}

/// Equal-cost next hops from every switch to every host.
///
/// Issue 16 lever 2: the table is looked up once per packet per switch, so it is kept small
/// enough to stay in the first-level cache. Most (switch, destination) pairs share their set
/// of next hops (a ToR sends everything for another rack up the same uplinks), so each
/// distinct set is stored once and every pair holds only a 4-byte set number: for the pHost
/// fabric (13 switches, 144 hosts) 7.5 KB of set numbers and 189 distinct sets of 216 ports
/// in all (2.4 KB), instead of 15 KB of (start, length) pairs over a 21 KB port list.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Routes {
    n_hosts: u32,
    /// For (switch index, dst host): the number of its next-hop set.
    set_of: Vec<u32>,
    /// Start and length in `ports` of each distinct set.
    sets: Vec<(u32, u32)>,
    ports: Vec<u32>,
    /// Links on the longest of the shortest paths between two hosts (the fabric's diameter
    /// in hops).
    longest_path_links: u32,
}

impl Routes {
    fn compute(n_hosts: u32, adjacency: &[Vec<u32>], ports: &[Port]) -> Routes {
        let n_nodes = adjacency.len();
        let n_switches = n_nodes - n_hosts as usize;
        let mut set_of = vec![0u32; n_switches * n_hosts as usize];
        let mut sets: Vec<(u32, u32)> = Vec::new();
        let mut flat = Vec::new();
        let mut known: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
        let mut hops = Vec::new();
        let mut dist = vec![u32::MAX; n_nodes];
        let mut frontier = std::collections::VecDeque::new();
        let mut longest_path_links = 0;
        for h in 0..n_hosts {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[h as usize] = 0;
            frontier.clear();
            frontier.push_back(h);
            while let Some(n) = frontier.pop_front() {
                // Paths never transit a host: only expand hosts at the start.
                if n != h && (n as usize) < n_hosts as usize {
                    continue;
                }
                for &p in &adjacency[n as usize] {
                    let m = ports[p as usize].peer;
                    if dist[m as usize] == u32::MAX {
                        dist[m as usize] = dist[n as usize] + 1;
                        frontier.push_back(m);
                    }
                }
            }
            let reachable_hosts = dist[..n_hosts as usize].iter().filter(|d| **d != u32::MAX);
            longest_path_links = reachable_hosts.fold(longest_path_links, |m, d| m.max(*d));
            for s in n_hosts as usize..n_nodes {
                hops.clear();
                if dist[s] != u32::MAX {
                    for &p in &adjacency[s] {
                        let peer = ports[p as usize].peer as usize;
                        let towards = dist[peer] != u32::MAX && dist[peer] + 1 == dist[s];
                        // A host neighbour is only a next hop if it is the destination.
                        if towards && (peer >= n_hosts as usize || peer == h as usize) {
                            hops.push(p);
                        }
                    }
                }
                let set = *known.entry(hops.clone()).or_insert_with(|| {
                    sets.push((flat.len() as u32, hops.len() as u32));
                    flat.extend_from_slice(&hops);
                    (sets.len() - 1) as u32
                });
                set_of[(s - n_hosts as usize) * n_hosts as usize + h as usize] = set;
            }
        }
        Routes { n_hosts, set_of, sets, ports: flat, longest_path_links }
    }

    /// Ports of switch `node` that lead one hop closer to host `dst`.
    #[inline]
    pub fn next_hops(&self, node: u32, dst: u32) -> &[u32] {
        let set =
            self.set_of[(node - self.n_hosts) as usize * self.n_hosts as usize + dst as usize];
        let (start, len) = self.sets[set as usize];
        &self.ports[start as usize..(start + len) as usize]
    }
}

/// The whole fabric: nodes, ports and routes.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Network {
    kinds: Vec<NodeKind>,
    /// Every egress port (two per link).
    pub ports: Vec<Port>,
    adjacency: Vec<Vec<u32>>,
    host_nic: Vec<u32>,
    n_hosts: u32,
    rack_of_host: Vec<u32>,
    /// Equal-cost next hops (shared by the replicas of a partitioned run).
    pub routes: std::sync::Arc<Routes>,
    /// Cut-through switching (the next switch sees a packet once its header is in).
    pub cut_through: bool,
    /// The memory each switch shares among its ports (`topology.shared_buffer_bytes`), if any.
    pub shared_buffer: Option<crate::spec::SharedBuffer>,
}

impl Network {
    /// Builds the topology `spec` with queues from `factory`.
    pub fn build(spec: &TopologySpec, factory: &QueueFactory<'_>) -> Network {
        Network::build_with_service_hosts(spec, 0, factory)
    }

    /// The rack (edge switch) of each of the first `n` hosts.
    pub fn host_racks(&self, n: u32) -> Vec<u32> {
        (0..n).map(|h| self.rack(h)).collect()
    }

    /// Builds the topology `spec` plus `extra` service hosts (ids right after the topology's
    /// hosts, before any switch) attached to host 0's edge switch: the Fastpass arbiter.
    pub fn build_with_service_hosts(
        spec: &TopologySpec,
        extra: u32,
        factory: &QueueFactory<'_>,
    ) -> Network {
        let mut b = Builder { extra_hosts: extra, ..Builder::default() };
        match spec.kind {
            TopologyKind::LeafSpine => leaf_spine::build(&mut b, spec),
            TopologyKind::FatTree => fat_tree::build(&mut b, spec),
            TopologyKind::Star => star::build(&mut b, spec),
            TopologyKind::Dumbbell => dumbbell::build(&mut b, spec),
            TopologyKind::Pair => {
                b.hosts(2);
                b.link(0, 1, spec.host_rate(), SimTime::from_ns(spec.link_delay_ns));
            }
            TopologyKind::File => {
                let graph = spec.graph.as_ref().expect("a file topology is read when resolved");
                file::build(&mut b, graph);
            }
        }
        if extra > 0 {
            b.attach_extra_hosts(spec);
        }
        b.finish(spec, factory)
    }

    /// A copy with every queue empty, built by `factory`, and the same routes (shared): one
    /// partition's fabric in a partitioned run. Only the ports of the nodes it `drives` keep
    /// their queues' reserved room; the partition never queues at the others (issue 16: with a
    /// reserve at every port each partition of a k = 16 fat-tree took 6.7 MB).
    pub fn replica(&self, factory: &QueueFactory<'_>, drives: &dyn Fn(u32) -> bool) -> Network {
        let ports = self
            .ports
            .iter()
            .map(|p| {
                let (mut queue, marking) = factory(PortInfo { hop: p.hop, rate: p.rate });
                if !drives(p.owner) {
                    queue.release_reserve();
                }
                Port::new(
                    p.owner,
                    p.peer,
                    p.peer_is_host,
                    self.cut_through,
                    p.rate,
                    p.delay,
                    p.hop,
                    queue,
                    marking,
                )
            })
            .collect();
        Network {
            kinds: self.kinds.clone(),
            ports,
            adjacency: self.adjacency.clone(),
            host_nic: self.host_nic.clone(),
            n_hosts: self.n_hosts,
            rack_of_host: self.rack_of_host.clone(),
            routes: std::sync::Arc::clone(&self.routes),
            cut_through: self.cut_through,
            shared_buffer: self.shared_buffer,
        }
    }

    /// Bytes waiting at switch `node`'s ports at `now` (a shared memory's occupancy; packets
    /// on the wire are not counted).
    pub fn switch_bytes(&mut self, node: u32, now: SimTime) -> u64 {
        let ports = &mut self.ports;
        self.adjacency[node as usize].iter().map(|&p| ports[p as usize].waiting_bytes_at(now)).sum()
    }

    /// Number of hosts.
    #[inline]
    pub fn n_hosts(&self) -> u32 {
        self.n_hosts
    }
    /// Number of nodes (hosts and switches).
    pub fn n_nodes(&self) -> u32 {
        self.kinds.len() as u32
    }
    /// Whether `node` is a host or a switch.
    #[inline]
    pub fn kind(&self, node: u32) -> NodeKind {
        if node < self.n_hosts {
            NodeKind::Host
        } else {
            NodeKind::Switch
        }
    }
    /// Host `h`'s NIC port.
    #[inline]
    pub fn nic(&self, h: u32) -> u32 {
        self.host_nic[h as usize]
    }
    /// Host `h`'s rack (edge switch group).
    pub fn rack(&self, h: u32) -> u32 {
        self.rack_of_host[h as usize]
    }
    /// Ports owned by `node`.
    pub fn ports_of(&self, node: u32) -> &[u32] {
        &self.adjacency[node as usize]
    }

    /// A bound on any round trip of a full-size packet between two hosts: on every link of
    /// the longest shortest path, there and back, the slowest link's hop (its delay, per-host
    /// delay included, plus an MTU's serialization). No end-to-end progress can be expected
    /// in less.
    pub fn round_trip_bound(&self) -> SimTime {
        let hop = |p: &Port| p.delay + p.rate.tx_time(u64::from(crate::units::MTU_BYTES));
        let slowest_hop = self.ports.iter().map(hop).max().unwrap_or(SimTime::ZERO);
        SimTime::from_ps(2 * u64::from(self.routes.longest_path_links) * slowest_hop.as_ps())
    }

    /// One shortest path from host `src` to host `dst`, as the ports crossed in order
    /// (the first equal-cost choice at every switch; all choices have equal rates and delays
    /// in the symmetric topologies built here).
    pub fn path(&self, src: u32, dst: u32) -> Vec<u32> {
        let mut path = vec![self.nic(src)];
        let mut node = self.ports[self.nic(src) as usize].peer;
        while node != dst {
            let p = self.routes.next_hops(node, dst)[0];
            path.push(p);
            node = self.ports[p as usize].peer;
            assert!(path.len() <= self.kinds.len(), "routing loop from {src} to {dst}");
        }
        path
    }
}

impl Network {
    /// The capacity out of the part of the fabric that serves only `hosts` (some of the first
    /// `n` hosts, the workload's; service hosts aside): the rates of the links that leave
    /// those hosts and every switch whose nearest workload hosts are all among them. For the
    /// left racks of a leaf-spine, their ToRs' uplinks to the spines; for the left pods of a
    /// fat-tree, their aggregation switches' links to the core; for a dumbbell's left side,
    /// the bottleneck; where no switch serves them alone (a star), the hosts' own links.
    pub fn capacity_out_of(&self, hosts: &[u32], n: u32) -> BitRate {
        let n_nodes = self.kinds.len();
        let mut inside = vec![false; n_nodes];
        for &h in hosts {
            inside[h as usize] = true;
        }
        // Breadth-first from every workload host at once: each switch's distance to its
        // nearest hosts, and whether any of them is inside or outside. Nodes leave the queue
        // in order of distance, so a node's flags are complete when it is expanded.
        let mut dist = vec![u32::MAX; n_nodes];
        let (mut near_in, mut near_out) = (vec![false; n_nodes], vec![false; n_nodes]);
        let mut frontier: std::collections::VecDeque<u32> = (0..n).collect();
        for h in 0..n as usize {
            dist[h] = 0;
            (near_in[h], near_out[h]) = (inside[h], !inside[h]);
        }
        while let Some(x) = frontier.pop_front() {
            let x = x as usize;
            for &p in &self.adjacency[x] {
                let y = self.ports[p as usize].peer as usize;
                if self.kind(y as u32) == NodeKind::Host {
                    continue; // paths never transit a host
                }
                if dist[y] == u32::MAX {
                    dist[y] = dist[x] + 1;
                    frontier.push_back(y as u32);
                }
                if dist[y] == dist[x] + 1 {
                    near_in[y] |= near_in[x];
                    near_out[y] |= near_out[x];
                }
            }
        }
        for s in self.n_hosts as usize..n_nodes {
            inside[s] = near_in[s] && !near_out[s];
        }
        let bps = self
            .ports
            .iter()
            .filter(|p| inside[p.owner as usize] && !inside[p.peer as usize])
            .filter(|p| !p.peer_is_host || p.peer < n)
            .map(|p| p.rate.0)
            .sum();
        BitRate(bps)
    }

    /// For each hop of the shortest paths from `src` to `dst`, how many distinct equal-cost
    /// links packets sprayed over every choice can use (1 for host links; e.g. the spine count
    /// for a leaf-spine's core hops).
    pub fn parallel_links(&self, src: u32, dst: u32) -> Vec<u32> {
        self.parallel_ports(src, dst).iter().map(|p| p.len() as u32).collect()
    }

    /// The ports flow `flow` from `src` to `dst` takes under ECMP, one per hop.
    pub fn ecmp_ports(&self, src: u32, dst: u32, flow: u32) -> Vec<u32> {
        let mut ports = vec![self.nic(src)];
        let mut node = self.ports[self.nic(src) as usize].peer;
        while node != dst {
            let choices = self.routes.next_hops(node, dst);
            let port = if choices.len() == 1 {
                choices[0]
            } else {
                choices[ecmp_index(node, flow, self.n_hosts(), choices.len())]
            };
            ports.push(port);
            node = self.ports[port as usize].peer;
            assert!(ports.len() <= self.kinds.len(), "routing loop from {src} to {dst}");
        }
        ports
    }

    /// For each hop of the shortest paths from `src` to `dst`, the equal-cost ports packets
    /// sprayed over every choice can take (sorted).
    pub fn parallel_ports(&self, src: u32, dst: u32) -> Vec<Vec<u32>> {
        let mut hops = vec![vec![self.nic(src)]];
        let mut nodes = vec![self.ports[self.nic(src) as usize].peer];
        while !nodes.contains(&dst) {
            let mut ports: Vec<u32> =
                nodes.iter().flat_map(|&n| self.routes.next_hops(n, dst).iter().copied()).collect();
            ports.sort_unstable();
            ports.dedup();
            nodes = ports.iter().map(|&p| self.ports[p as usize].peer).collect();
            nodes.sort_unstable();
            nodes.dedup();
            hops.push(ports);
            assert!(hops.len() <= self.kinds.len(), "routing loop from {src} to {dst}");
        }
        hops
    }
}

/// Per-switch load-balancing state.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Balancer {
    mode: LoadBalancing,
    rr: Vec<u32>,
    /// `spray-per-source`: a counter per (switch, source host), `node * n_hosts + src`; empty
    /// in the other modes.
    rr_by_source: Vec<u32>,
    /// The random streams (initial counters, random spraying): one shared, or one per node
    /// in the partitioned model, so a switch's draws depend on its own packets only, not on
    /// the order events at other switches ran.
    rngs: ElementRngs,
    n_hosts: u32,
}

impl Balancer {
    /// State for `n_nodes` nodes; round-robin counters start at random values, as the pHost
    /// authors' simulator does, so switches are not synchronised: node `n` draws its counter
    /// from `rngs.of(n)`, in node order.
    /// Under `spray-per-source` each node then draws one more counter per source host, also
    /// at random (the pHost authors' simulator starts every queue's counter at `rand()`,
    /// `coresim/queue.cpp`); the other modes draw nothing more, so their streams are unchanged.
    pub fn new(mode: LoadBalancing, n_hosts: u32, n_nodes: u32, mut rngs: ElementRngs) -> Self {
        let rr = (0..n_nodes).map(|n| rngs.of(n).next_u64() as u32).collect();
        let mut rr_by_source = Vec::new();
        if mode == LoadBalancing::SprayPerSource {
            for node in 0..n_nodes {
                for _source in 0..n_hosts {
                    rr_by_source.push(rngs.of(node).next_u64() as u32);
                }
            }
        }
        Balancer { mode, rr, rr_by_source, rngs, n_hosts }
    }

    /// Picks one of `choices` at switch `node` for a packet of flow `flow` sent by host `src`.
    /// Inlined into the switch's forwarding for the common case of one choice (a downward hop).
    #[inline(always)]
    pub fn pick(&mut self, node: u32, src: u32, flow: u32, choices: &[u32]) -> u32 {
        match choices {
            [only] => *only,
            _ => self.pick_among(node, src, flow, choices),
        }
    }

    /// Picks one of several `choices` (an upward hop).
    #[inline(never)]
    fn pick_among(&mut self, node: u32, src: u32, flow: u32, choices: &[u32]) -> u32 {
        let n = choices.len();
        let i = match self.mode {
            // ns-2's multipath classifier: one round-robin counter per switch (§1.6).
            LoadBalancing::Spray => next_round_robin(&mut self.rr[node as usize], n),
            LoadBalancing::SprayPerSource => {
                let at = node as usize * self.n_hosts as usize + src as usize;
                next_round_robin(&mut self.rr_by_source[at], n)
            }
            LoadBalancing::SprayRandom => self.rngs.of(node).below(n as u64) as usize,
            LoadBalancing::Ecmp => ecmp_index(node, flow, self.n_hosts, n),
        };
        choices[i]
    }
}

/// Advances a round-robin counter and returns its index among `n` choices: the same index as
/// `% n`; a mask where `n` is a power of two (the usual spine or core count) saves a division
/// per packet (issue 16 lever 2).
#[inline(always)]
fn next_round_robin(counter: &mut u32, n: usize) -> usize {
    *counter = counter.wrapping_add(1);
    if n.is_power_of_two() {
        *counter as usize & (n - 1)
    } else {
        *counter as usize % n
    }
}

/// ECMP's choice among `n` equal-cost ports at switch `node` for flow `flow` in a fabric of
/// `n_hosts` hosts: a hash of (switch, flow), so a flow keeps one path (§1.6).
#[inline]
pub fn ecmp_index(node: u32, flow: u32, n_hosts: u32, n: usize) -> usize {
    let mut x = ((node as u64) << 32 | flow as u64) ^ (n_hosts as u64).rotate_left(17);
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    (x ^ (x >> 33)) as usize % n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::DropTail;
    use crate::spec::Spec;
    use crate::streams::Stream;

    /// The sequential model's load-balancing streams (one shared), of seed 1.
    fn lb_rngs(n_nodes: u32) -> ElementRngs {
        ElementRngs::new(Stream::LoadBalancer, 1, n_nodes, false)
    }

    fn net(kind: &str, extra: &str) -> Network {
        let spec = Spec::from_toml_str(&format!("[topology]\nkind = \"{kind}\"\n{extra}")).unwrap();
        Network::build(&spec.topology, &|_| {
            (PortQueue::Timeline(DropTail::new(100_000)), EcnMarking::Off)
        })
    }

    /// The next hops by their definition: the ports of switch `s` whose peer is one hop
    /// closer to `dst` (paths never transit a host), in the switch's port order.
    fn next_hops_by_definition(n: &Network, s: u32, dst: u32) -> Vec<u32> {
        let mut dist = vec![u32::MAX; n.n_nodes() as usize];
        dist[dst as usize] = 0;
        let mut frontier = std::collections::VecDeque::from([dst]);
        while let Some(x) = frontier.pop_front() {
            if x != dst && n.kind(x) == NodeKind::Host {
                continue;
            }
            for &p in n.ports_of(x) {
                let y = n.ports[p as usize].peer;
                if dist[y as usize] == u32::MAX {
                    dist[y as usize] = dist[x as usize] + 1;
                    frontier.push_back(y);
                }
            }
        }
        if dist[s as usize] == u32::MAX {
            return Vec::new();
        }
        n.ports_of(s)
            .iter()
            .copied()
            .filter(|&p| {
                let peer = n.ports[p as usize].peer;
                dist[peer as usize].checked_add(1) == Some(dist[s as usize])
                    && (n.kind(peer) == NodeKind::Switch || peer == dst)
            })
            .collect()
    }

    /// Issue 16 lever 2: the deduplicated route table returns, for every (switch, destination)
    /// of every topology kind, exactly the next hops of the definition, in the same order (the
    /// order decides which port a round-robin or hash index picks).
    #[test]
    fn the_shared_route_table_returns_every_next_hop_of_the_definition() {
        let file =
            format!("file = \"{}/../../examples/two-tier.json\"", env!("CARGO_MANIFEST_DIR"));
        for (kind, extra) in [
            ("leaf-spine", ""),
            ("leaf-spine", "racks = 4\nhosts_per_rack = 8\nspines = 2\noversubscription = 4"),
            ("fat-tree", "k = 4"),
            ("fat-tree", "k = 6"),
            ("star", "hosts = 5"),
            ("dumbbell", "hosts_per_side = 3"),
            ("pair", ""),
            ("file", file.as_str()),
        ] {
            let n = net(kind, extra);
            for s in n.n_hosts()..n.n_nodes() {
                for dst in 0..n.n_hosts() {
                    assert_eq!(
                        n.routes.next_hops(s, dst),
                        next_hops_by_definition(&n, s, dst),
                        "{kind} {extra}: switch {s}, destination {dst}"
                    );
                }
            }
        }
        // The pHost fabric: each of the 9 ToRs has 16 one-port sets (its hosts) and one set of
        // 4 uplinks; each of the 4 spines one port per rack: 9 × 17 + 4 × 9 = 189 sets of
        // 9 × 20 + 36 = 216 ports, where every (switch, host) pair had its own copy before.
        let n = net("leaf-spine", "");
        assert_eq!((n.routes.sets.len(), n.routes.ports.len()), (189, 216));
    }

    #[test]
    fn ecmp_ports_are_the_ports_the_balancer_picks() {
        let n = net("fat-tree", "k = 4\nload_balancing = \"ecmp\"");
        let mut b =
            Balancer::new(LoadBalancing::Ecmp, n.n_hosts(), n.n_nodes(), lb_rngs(n.n_nodes()));
        let mut distinct = std::collections::BTreeSet::new();
        for flow in 0..64 {
            let (src, dst) = (flow % 16, 15 - flow % 16);
            let mut walked = vec![n.nic(src)];
            let mut node = n.ports[n.nic(src) as usize].peer;
            while node != dst {
                let port = b.pick(node, src, flow, n.routes.next_hops(node, dst));
                walked.push(port);
                node = n.ports[port as usize].peer;
            }
            assert_eq!(n.ecmp_ports(src, dst, flow), walked, "flow {flow}");
            distinct.insert(walked);
        }
        assert!(distinct.len() > 16, "flows of a pair take different paths");
    }

    #[test]
    fn leaf_spine_has_the_papers_shape() {
        let n = net("leaf-spine", "");
        assert_eq!(n.n_hosts(), 144);
        assert_eq!(n.n_nodes(), 144 + 9 + 4);
        // Inter-rack: NIC, ToR uplink, spine, ToR downlink.
        let p = n.path(0, 143);
        let hops: Vec<HopKind> = p.iter().map(|&i| n.ports[i as usize].hop).collect();
        assert_eq!(
            hops,
            vec![HopKind::SourceNic, HopKind::TorUplink, HopKind::Core, HopKind::TorDownlink]
        );
        assert_eq!(n.ports[p[1] as usize].rate, BitRate::from_gbps(40.0));
        // Intra-rack: two hops; four equal-cost uplinks at the ToR for inter-rack traffic.
        assert_eq!(n.path(0, 15).len(), 2);
        let tor = n.ports[n.nic(0) as usize].peer;
        assert_eq!(n.routes.next_hops(tor, 143).len(), 4);
        assert_eq!(n.routes.next_hops(tor, 5).len(), 1);
    }

    #[test]
    fn fat_tree_k6_has_54_hosts_and_six_hop_paths() {
        let n = net("fat-tree", "k = 6");
        assert_eq!(n.n_hosts(), 54);
        assert_eq!(n.n_nodes(), 54 + 45);
        assert_eq!(n.path(0, 53).len(), 6); // other pod
        assert_eq!(n.path(0, 4).len(), 4); // same pod, other edge
        assert_eq!(n.path(0, 1).len(), 2); // same edge
        let edge = n.ports[n.nic(0) as usize].peer;
        assert_eq!(n.routes.next_hops(edge, 53).len(), 3);
    }

    /// The round-trip bound: twice the diameter in links times the slowest hop (the per-host
    /// delay sits on host links; an MTU of 1,500 bytes takes 1.2 µs at 10 Gbps, 12 ms at
    /// 1 Mbps).
    #[test]
    fn round_trip_bound_is_the_diameter_at_the_slowest_hop_both_ways() {
        let delays = "link_delay_ns = 200\nhost_delay_ns = 1000";
        // Leaf-spine: host, ToR, spine, ToR, host (4 links); the slowest hop is a host link:
        // 1.2 µs of delay and 1.2 µs of serialization at 10 Gbps.
        let ls = net("leaf-spine", delays);
        assert_eq!(ls.round_trip_bound(), SimTime::from_ns(2 * 4 * 2400));
        // Fat-tree: host, edge, aggregation, core, aggregation, edge, host (6 links).
        let ft = net("fat-tree", &format!("k = 4\n{delays}"));
        assert_eq!(ft.round_trip_bound(), SimTime::from_ns(2 * 6 * 2400));
        // A 1 Mbps core: its serialization is the slowest hop.
        let slow = net("fat-tree", "k = 4\ncore_link_gbps = 0.001");
        assert_eq!(slow.round_trip_bound(), SimTime::from_ns(2 * 6 * (12_000_000 + 200)));
        // A pair's single link of 1 s.
        let pair = net("pair", "link_delay_ns = 1000000000");
        assert_eq!(pair.round_trip_bound(), SimTime::from_ns(2 * (1_000_000_000 + 1200)));
    }

    #[test]
    fn star_and_dumbbell() {
        let s = net("star", "hosts = 5");
        assert_eq!(s.n_hosts(), 5);
        assert_eq!(s.path(0, 4).len(), 2);
        let d = net("dumbbell", "hosts_per_side = 2");
        assert_eq!(d.n_hosts(), 4);
        assert_eq!(d.path(0, 3).len(), 3);
        assert_eq!(d.path(0, 1).len(), 2);
    }

    #[test]
    fn capacity_out_of_a_half_is_its_uplinks_or_its_host_links() {
        let left = |hosts: u32| (0..hosts).collect::<Vec<u32>>();
        // Leaf-spine, 4 racks of 8, 2 spines at 10 Gbps (4:1): racks 0-1 have 4 uplinks.
        let n =
            net("leaf-spine", "racks = 4\nhosts_per_rack = 8\nspines = 2\noversubscription = 4");
        assert_eq!(n.capacity_out_of(&left(16), 32), BitRate::from_gbps(40.0));
        // Without oversubscription (9 × 16, 4 spines at 40 Gbps): racks 0-3, 16 uplinks.
        let n = net("leaf-spine", "");
        assert_eq!(n.capacity_out_of(&left(64), 144), BitRate::from_gbps(640.0));
        // Part of a rack: the ToR serves other hosts too, so the hosts' own links.
        assert_eq!(n.capacity_out_of(&left(3), 144), BitRate::from_gbps(30.0));
        // Fat-tree k = 4, pods 0-1: 4 aggregation switches with 2 core links each.
        let n = net("fat-tree", "k = 4\ncore_link_gbps = 5");
        assert_eq!(n.capacity_out_of(&left(8), 16), BitRate::from_gbps(40.0));
        // With oversubscription 4 the 8 aggregation–core links run at 5 / 4 Gbps.
        let n = net("fat-tree", "k = 4\ncore_link_gbps = 5\noversubscription = 4");
        assert_eq!(n.capacity_out_of(&left(8), 16), BitRate::from_gbps(10.0));
        // Dumbbell: the bottleneck; star: the host links.
        let n = net("dumbbell", "hosts_per_side = 3\ncore_link_gbps = 10");
        assert_eq!(n.capacity_out_of(&left(3), 6), BitRate::from_gbps(10.0));
        let n = net("star", "hosts = 6");
        assert_eq!(n.capacity_out_of(&left(3), 6), BitRate::from_gbps(30.0));
        // A service host on rack 0's switch is neither side: not counted.
        let spec =
            Spec::from_toml_str("[topology]\nkind = \"dumbbell\"\nhosts_per_side = 3").unwrap();
        let n = Network::build_with_service_hosts(&spec.topology, 1, &|_| {
            (PortQueue::Timeline(DropTail::new(100_000)), EcnMarking::Off)
        });
        assert_eq!(n.capacity_out_of(&left(3), 6), BitRate::from_gbps(10.0));
    }

    /// Issue 16 lever 2: spraying picks index `counter % n` for every n, through the
    /// counter's wrap-around, whether `n` is a power of two (a mask) or not (a division).
    #[test]
    fn spraying_picks_the_counter_modulo_the_choices_across_the_wrap() {
        let choices: Vec<u32> = (100..108).collect();
        for n in 2..=8usize {
            let mut b = Balancer::new(LoadBalancing::Spray, 4, 8, lb_rngs(8));
            b.rr[5] = u32::MAX - 20;
            let mut counter = u32::MAX - 20;
            for _ in 0..60 {
                counter = counter.wrapping_add(1);
                let want = choices[counter as usize % n];
                assert_eq!(b.pick(5, 0, 0, &choices[..n]), want, "{n} choices, counter {counter}");
            }
        }
    }

    #[test]
    fn spraying_round_robins_and_ecmp_pins_a_flow() {
        let choices = [10, 11, 12, 13];
        let mut b = Balancer::new(LoadBalancing::Spray, 4, 8, lb_rngs(8));
        let picks: Vec<u32> = (0..8).map(|_| b.pick(5, 0, 0, &choices)).collect();
        for w in picks.windows(2) {
            assert_eq!((w[0] - 10 + 1) % 4, w[1] - 10);
        }
        let mut e = Balancer::new(LoadBalancing::Ecmp, 4, 8, lb_rngs(8));
        let first = e.pick(5, 0, 77, &choices);
        assert!((0..20).all(|_| e.pick(5, 0, 77, &choices) == first));
        let spread: std::collections::HashSet<u32> =
            (0..64).map(|f| e.pick(5, 0, f, &choices)).collect();
        assert_eq!(spread.len(), 4);
    }

    /// The pHost authors' spraying: each source host's packets take the switch's uplinks in
    /// turn whatever other hosts send in between, where one counter per switch would hand
    /// host 0 every other uplink when two hosts alternate.
    #[test]
    fn spraying_per_source_round_robins_each_hosts_packets() {
        let choices = [10, 11, 12, 13];
        let mut b = Balancer::new(LoadBalancing::SprayPerSource, 4, 8, lb_rngs(8));
        let mut per_host = [Vec::new(), Vec::new()];
        for _ in 0..8 {
            for (src, picks) in per_host.iter_mut().enumerate() {
                picks.push(b.pick(5, src as u32, 0, &choices));
            }
        }
        for picks in &per_host {
            for w in picks.windows(2) {
                assert_eq!((w[0] - 10 + 1) % 4, w[1] - 10, "{picks:?}");
            }
        }
        let mut shared = Balancer::new(LoadBalancing::Spray, 4, 8, lb_rngs(8));
        let host0: std::collections::HashSet<u32> =
            (0..8).map(|i| shared.pick(5, i % 2, 0, &choices)).step_by(2).collect();
        assert_eq!(host0.len(), 2, "one counter per switch: host 0 gets two uplinks");
    }
}
