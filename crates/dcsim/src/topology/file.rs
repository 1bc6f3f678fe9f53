//! Builds the network of a topology file ([`crate::topology_file`]).

use super::Builder;
use crate::topology_file::FileTopology;
use std::collections::HashMap;

/// Adds the file's hosts, switches and links to `b`. A host's rack is its switch's position
/// among the switches that have hosts, in file order.
pub(super) fn build(b: &mut Builder, t: &FileTopology) {
    let n_hosts = t.hosts.len() as u32;
    b.hosts(n_hosts);
    for _ in &t.switches {
        b.switch();
    }
    // Node ids in the builder: hosts, then the reserved service hosts, then switches.
    let offset = b.kinds.len() as u32 - n_hosts - t.switches.len() as u32;
    let node = |n: u32| if n < n_hosts { n } else { n + offset };
    let mut rack_of_switch: HashMap<u32, u32> = HashMap::new();
    for l in &t.links {
        // Host first: the service hosts attach to the switch at the far end of host 0's link.
        let (x, y) = if l.b < n_hosts { (l.b, l.a) } else { (l.a, l.b) };
        b.link(node(x), node(y), l.rate, l.delay);
        for (host, switch) in [(l.a, l.b), (l.b, l.a)] {
            if host < n_hosts {
                let next = rack_of_switch.len() as u32;
                let rack = *rack_of_switch.entry(switch).or_insert(next);
                b.set_rack(host, rack);
            }
        }
    }
}
