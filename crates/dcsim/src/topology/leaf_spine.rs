//! Two-tier leaf-spine: `racks` ToRs with `hosts_per_rack` hosts each, full mesh to `spines`.
//! The papers' default is 9 × 16 hosts, 4 spines, 10/40 Gbps (pFabric SIGCOMM'13 §5, pHost §4.1).

use super::Builder;
use crate::spec::TopologySpec;
use dcsim_engine::SimTime;

pub(super) fn build(b: &mut Builder, s: &TopologySpec) {
    let delay = SimTime::from_ns(s.link_delay_ns);
    let n_hosts = s.racks * s.hosts_per_rack;
    b.hosts(n_hosts);
    let tors: Vec<u32> = (0..s.racks).map(|_| b.switch()).collect();
    let spines: Vec<u32> = (0..s.spines).map(|_| b.switch()).collect();
    for (r, &tor) in tors.iter().enumerate() {
        for i in 0..s.hosts_per_rack {
            let h = r as u32 * s.hosts_per_rack + i;
            b.set_rack(h, r as u32);
            b.link(h, tor, s.host_rate(), delay);
        }
    }
    for &tor in &tors {
        for &sp in &spines {
            b.link(tor, sp, s.core_rate(), delay);
        }
    }
}
