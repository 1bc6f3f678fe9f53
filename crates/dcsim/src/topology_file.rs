//! Topology files (`topology.kind = "file"`): named hosts and switches, and links with a rate
//! and a delay, read and validated (a leaf the spec reads; [`crate::topology`] builds the
//! network from it). The format is documented in `docs/topology-files.md`:
//!
//! ```json
//! {
//!   "hosts": ["h0", "h1", "h2", "h3"],
//!   "switches": ["tor0", "tor1", "spine0"],
//!   "links": [
//!     {"a": "h0", "b": "tor0", "gbps": 10, "delay_ns": 200},
//!     {"a": "tor0", "b": "spine0", "gbps": 40, "delay_ns": 200}
//!   ]
//! }
//! ```
//!
//! Host `i` of the simulation is the `i`-th name of `hosts` (flow traces name hosts by that
//! index). Routing is the same as for the built-in kinds: shortest paths in hops, every
//! equal-cost next hop usable (spraying or ECMP). What the model needs of a fabric is checked
//! when the file is read, each error naming the offending element: one link per host (a host
//! has one NIC), host links towards switches and all of one rate (the transports' line rate
//! and the workload's load derive from it), every host reachable, no duplicate link, and
//! equal-cost paths alike in rates and delays (the ideal FCT, the slowdown's denominator,
//! is computed over one of them).

use crate::choice::suggest;
use crate::units::BitRate;
use dcsim_engine::SimTime;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    hosts: Vec<String>,
    #[serde(default)]
    switches: Vec<String>,
    links: Vec<RawLink>,
}

/// One link as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    a: String,
    b: String,
    gbps: f64,
    delay_ns: u64,
}

/// A validated link between nodes `a` and `b` (node ids: hosts first, then switches).
#[derive(Debug, Clone, PartialEq)]
pub struct FileLink {
    /// One end.
    pub a: u32,
    /// The other end.
    pub b: u32,
    /// Link rate.
    pub rate: BitRate,
    /// Propagation delay.
    pub delay: SimTime,
}

/// A topology file, read and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct FileTopology {
    /// Host names; host `i` is `hosts[i]`.
    pub hosts: Vec<String>,
    /// Switch names; switch `j` is node `hosts.len() + j`.
    pub switches: Vec<String>,
    /// The links, in file order.
    pub links: Vec<FileLink>,
    /// The rate every host link has, Gbps.
    pub host_link_gbps: f64,
}

/// Rates a link may have, Gbps (as `topology.core_link_gbps`).
const GBPS_RANGE: (f64, f64) = (1e-3, 1e5);
/// The longest link delay, ns (as `topology.link_delay_ns`).
const MAX_DELAY_NS: u64 = 1_000_000_000;
/// The most hosts a topology may have (as the built-in kinds).
const MAX_HOSTS: usize = 1_000_000;

impl FileTopology {
    /// Reads and validates the topology file at `path`. The error says what is wrong and names
    /// the element (a node name, `links[i]`).
    pub fn load(path: &Path) -> Result<FileTopology, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read topology file {}: {e}", path.display()))?;
        FileTopology::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses and validates a topology given as JSON text.
    pub fn parse(text: &str) -> Result<FileTopology, String> {
        let raw: RawTopology = serde_json::from_str(text).map_err(|e| {
            format!("not a topology file: {e} (expected {{\"hosts\": [...], \"switches\": [...], \"links\": [{{\"a\", \"b\", \"gbps\", \"delay_ns\"}}, ...]}})")
        })?;
        let n_hosts = raw.hosts.len();
        if n_hosts < 2 {
            return Err(format!("{n_hosts} hosts: a topology needs at least 2"));
        }
        if n_hosts > MAX_HOSTS {
            return Err(format!("{n_hosts} hosts do not fit: at most 1,000,000"));
        }
        let mut id: HashMap<&str, u32> = HashMap::new();
        for (i, name) in raw.hosts.iter().chain(&raw.switches).enumerate() {
            if name.is_empty() {
                return Err(format!("node {i} has an empty name"));
            }
            if id.insert(name, i as u32).is_some() {
                return Err(format!("node `{name}` is named twice"));
            }
        }
        let names: Vec<&str> = raw.hosts.iter().chain(&raw.switches).map(String::as_str).collect();
        let is_host = |n: u32| (n as usize) < n_hosts;
        let mut links = Vec::with_capacity(raw.links.len());
        let mut seen: HashMap<(u32, u32), usize> = HashMap::new();
        for (i, l) in raw.links.iter().enumerate() {
            let node = |name: &str| {
                id.get(name).copied().ok_or_else(|| {
                    let hint = match suggest(name, &names) {
                        Some(s) => format!("; did you mean `{s}`?"),
                        None => String::new(),
                    };
                    format!("links[{i}]: `{name}` is neither a host nor a switch{hint}")
                })
            };
            let (a, b) = (node(&l.a)?, node(&l.b)?);
            let what = format!("links[{i}] (`{}`-`{}`)", l.a, l.b);
            if a == b {
                return Err(format!("{what} joins a node to itself"));
            }
            if let Some(first) = seen.insert((a.min(b), a.max(b)), i) {
                return Err(format!(
                    "{what} duplicates links[{first}]: one link per pair of nodes (give it the summed rate instead)"
                ));
            }
            if is_host(a) && is_host(b) {
                return Err(format!(
                    "{what} joins two hosts: hosts connect to switches (for two hosts on one link use topology.kind = \"pair\")"
                ));
            }
            if !(l.gbps.is_finite() && (GBPS_RANGE.0..=GBPS_RANGE.1).contains(&l.gbps)) {
                return Err(format!(
                    "{what}: gbps = {} must be a rate between {} and {} Gbps",
                    l.gbps, GBPS_RANGE.0, GBPS_RANGE.1
                ));
            }
            if l.delay_ns > MAX_DELAY_NS {
                return Err(format!(
                    "{what}: delay_ns = {} must be at most {MAX_DELAY_NS} (1 s)",
                    l.delay_ns
                ));
            }
            links.push(FileLink {
                a,
                b,
                rate: BitRate::from_gbps(l.gbps),
                delay: SimTime::from_ns(l.delay_ns),
            });
        }
        let topology =
            FileTopology { hosts: raw.hosts, switches: raw.switches, links, host_link_gbps: 0.0 };
        topology.validated(&raw.links)
    }

    /// Checks what the model needs of the fabric (module docs) and fills in the host rate.
    fn validated(mut self, raw: &[RawLink]) -> Result<FileTopology, String> {
        let n_hosts = self.hosts.len();
        let n_nodes = n_hosts + self.switches.len();
        let mut host_link: Vec<Vec<usize>> = vec![Vec::new(); n_hosts];
        let mut adjacency: Vec<Vec<usize>> = vec![Vec::new(); n_nodes];
        for (i, l) in self.links.iter().enumerate() {
            for n in [l.a, l.b] {
                adjacency[n as usize].push(i);
                if (n as usize) < n_hosts {
                    host_link[n as usize].push(i);
                }
            }
        }
        let name = |n: u32| -> &str {
            let n = n as usize;
            if n < n_hosts {
                &self.hosts[n]
            } else {
                &self.switches[n - n_hosts]
            }
        };
        for (h, links) in host_link.iter().enumerate() {
            match links.len() {
                1 => {}
                0 => return Err(format!("host `{}` has no link", self.hosts[h])),
                k => {
                    let peers: Vec<String> = links
                        .iter()
                        .map(|&i| {
                            format!("`{}`", name(self.links[i].a ^ self.links[i].b ^ h as u32))
                        })
                        .collect();
                    return Err(format!(
                        "host `{}` has {k} links (to {}): a host has exactly one NIC in this model",
                        self.hosts[h],
                        peers.join(", ")
                    ));
                }
            }
        }
        let first_host_link = host_link[0][0];
        let host_rate = self.links[first_host_link].rate;
        for (h, links) in host_link.iter().enumerate() {
            let l = &raw[links[0]];
            if self.links[links[0]].rate != host_rate {
                let r0 = &raw[first_host_link];
                return Err(format!(
                    "host links must all have one rate (the transports' line rate and the workload's load derive from it): `{}`-`{}` has {} Gbps, `{}`-`{}` has {} Gbps (host `{}`)",
                    r0.a, r0.b, r0.gbps, l.a, l.b, l.gbps, self.hosts[h]
                ));
            }
        }
        self.host_link_gbps = raw[first_host_link].gbps;
        // Every host reachable from host 0 through switches (paths never transit a host).
        let distance = self.distances_from(0, &adjacency);
        if let Some(h) = (0..n_hosts).find(|&h| distance[h] == u32::MAX) {
            return Err(format!(
                "host `{}` cannot be reached from host `{}`: the hosts must form one connected fabric",
                self.hosts[h], self.hosts[0]
            ));
        }
        self.check_equal_cost_paths_alike(&adjacency, name)?;
        Ok(self)
    }

    /// Hop distances from node `from` to every node, never passing through a host.
    fn distances_from(&self, from: u32, adjacency: &[Vec<usize>]) -> Vec<u32> {
        let n_hosts = self.hosts.len() as u32;
        let mut distance = vec![u32::MAX; adjacency.len()];
        distance[from as usize] = 0;
        let mut frontier = std::collections::VecDeque::from([from]);
        while let Some(n) = frontier.pop_front() {
            if n != from && n < n_hosts {
                continue;
            }
            for &i in &adjacency[n as usize] {
                let m = self.links[i].a ^ self.links[i].b ^ n;
                if distance[m as usize] == u32::MAX {
                    distance[m as usize] = distance[n as usize] + 1;
                    frontier.push_back(m);
                }
            }
        }
        distance
    }

    /// Equal-cost paths must be alike: from every switch towards every host, each next hop's
    /// link has the same rate and delay and leads to a node whose own paths are alike. The
    /// ideal FCT is computed over one shortest path (as for the built-in kinds, which are
    /// symmetric), so a faster equal-cost path would let a flow beat its ideal.
    fn check_equal_cost_paths_alike<'n>(
        &self,
        adjacency: &[Vec<usize>],
        name: impl Fn(u32) -> &'n str,
    ) -> Result<(), String> {
        let n_hosts = self.hosts.len();
        // A path profile is interned as an id: (link rate, link delay, next node's profile).
        let mut interned: HashMap<(u64, u64, u32), u32> = HashMap::new();
        let mut profile = vec![u32::MAX; adjacency.len()];
        for dst in 0..n_hosts as u32 {
            let distance = self.distances_from(dst, adjacency);
            let mut order: Vec<u32> = (n_hosts as u32..adjacency.len() as u32)
                .filter(|&s| distance[s as usize] != u32::MAX)
                .collect();
            order.sort_by_key(|&s| distance[s as usize]);
            profile[dst as usize] = 0; // the empty path
            for s in order {
                let mut alike: Option<(u32, usize)> = None;
                for &i in &adjacency[s as usize] {
                    let l = &self.links[i];
                    let next = l.a ^ l.b ^ s;
                    let towards = distance[next as usize] + 1 == distance[s as usize];
                    if !towards || ((next as usize) < n_hosts && next != dst) {
                        continue;
                    }
                    let key = (l.rate.0, l.delay.as_ps(), profile[next as usize]);
                    let fresh = interned.len() as u32 + 1;
                    let id = *interned.entry(key).or_insert(fresh);
                    match alike {
                        None => alike = Some((id, i)),
                        Some((other, j)) if other != id => {
                            let (m, o) = (&self.links[j], l);
                            return Err(format!(
                                "the equal-cost paths from switch `{}` to host `{}` differ: via `{}` ({} Gbps, {} ns) and via `{}` ({} Gbps, {} ns), or further along; the ideal FCT assumes equal-cost paths are alike, so give them equal rates and delays",
                                name(s),
                                name(dst),
                                name(m.a ^ m.b ^ s),
                                m.rate.0 as f64 / 1e9,
                                m.delay.as_ps() / 1000,
                                name(o.a ^ o.b ^ s),
                                o.rate.0 as f64 / 1e9,
                                o.delay.as_ps() / 1000,
                            ));
                        }
                        Some(_) => {}
                    }
                }
                profile[s as usize] = alike.map_or(u32::MAX, |(id, _)| id);
            }
        }
        Ok(())
    }

    /// Number of links (each becomes two ports).
    pub fn n_links(&self) -> usize {
        self.links.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> String {
        FileTopology::parse(json).unwrap_err()
    }

    const STAR: &str = r#"{"hosts": ["a", "b", "c"], "switches": ["s"], "links": [
        {"a": "a", "b": "s", "gbps": 10, "delay_ns": 200},
        {"a": "b", "b": "s", "gbps": 10, "delay_ns": 200},
        {"a": "s", "b": "c", "gbps": 10, "delay_ns": 300}]}"#;

    #[test]
    fn a_star_reads_with_its_host_rate() {
        let t = FileTopology::parse(STAR).unwrap();
        assert_eq!((t.hosts.len(), t.switches.len(), t.n_links()), (3, 1, 3));
        assert_eq!(t.host_link_gbps, 10.0);
        assert_eq!(
            t.links[2],
            FileLink { a: 3, b: 2, rate: BitRate::from_gbps(10.0), delay: SimTime::from_ns(300) }
        );
    }

    /// Issue 15 item 10: every malformed file is rejected naming the offending element.
    #[test]
    fn malformed_files_name_the_offending_element() {
        let link = |a: &str, b: &str, gbps: f64| {
            format!(r#"{{"a": "{a}", "b": "{b}", "gbps": {gbps}, "delay_ns": 100}}"#)
        };
        let file = |hosts: &str, switches: &str, links: &[String]| {
            format!(
                r#"{{"hosts": [{hosts}], "switches": [{switches}], "links": [{}]}}"#,
                links.join(",")
            )
        };
        let ok = [link("h0", "s0", 10.0), link("h1", "s0", 10.0)];
        for (json, needle) in [
            ("{\"hosts\": [\"a\"", "not a topology file"),
            (
                r#"{"hosts": ["a", "b"], "links": [], "nodes": []}"#,
                "unknown field `nodes`",
            ),
            (&file(r#""h0""#, r#""s0""#, &ok[..1]), "1 hosts: a topology needs at least 2"),
            (&file(r#""h0", "h0""#, r#""s0""#, &ok), "node `h0` is named twice"),
            (
                &file(r#""h0", "h1""#, r#""s0""#, &[ok[0].clone(), link("h1", "s00", 10.0)]),
                "links[1]: `s00` is neither a host nor a switch; did you mean `s0`?",
            ),
            (
                &file(r#""h0", "h1""#, r#""s0""#, &[ok[0].clone(), ok[1].clone(), link("s0", "h1", 10.0)]),
                "links[2] (`s0`-`h1`) duplicates links[1]",
            ),
            (
                &file(r#""h0", "h1""#, r#""s0""#, &[ok[0].clone(), link("h1", "s0", 0.0)]),
                "links[1] (`h1`-`s0`): gbps = 0 must be a rate between",
            ),
            (&file(r#""h0", "h1""#, r#""s0""#, &[link("h0", "h1", 10.0)]), "joins two hosts"),
            (&file(r#""h0", "h1""#, r#""s0""#, &[link("s0", "s0", 10.0)]), "joins a node to itself"),
            (&file(r#""h0", "h1""#, r#""s0""#, &ok[..1]), "host `h1` has no link"),
            (
                &file(r#""h0", "h1""#, r#""s0", "s1""#, &[ok[0].clone(), ok[1].clone(), link("h1", "s1", 10.0)]),
                "host `h1` has 2 links (to `s0`, `s1`): a host has exactly one NIC",
            ),
            (
                &file(r#""h0", "h1""#, r#""s0", "s1""#, &[ok[0].clone(), link("h1", "s1", 10.0)]),
                "host `h1` cannot be reached from host `h0`",
            ),
            (
                &file(r#""h0", "h1""#, r#""s0""#, &[ok[0].clone(), link("h1", "s0", 25.0)]),
                "`h1`-`s0` has 25 Gbps (host `h1`)",
            ),
            (
                // Two spines between the ToRs, one of them slower.
                &file(
                    r#""h0", "h1""#,
                    r#""t0", "t1", "p0", "p1""#,
                    &[
                        link("h0", "t0", 10.0),
                        link("h1", "t1", 10.0),
                        link("t0", "p0", 40.0),
                        link("t0", "p1", 40.0),
                        link("p0", "t1", 40.0),
                        link("p1", "t1", 10.0),
                    ],
                ),
                "the equal-cost paths from switch `t1` to host `h0` differ: via `p0` (40 Gbps, 100 ns) and via `p1` (10 Gbps, 100 ns)",
            ),
        ] {
            let e = err(json);
            assert!(e.contains(needle), "{json}\n  gave: {e}\n  wanted: {needle}");
        }
    }
}
