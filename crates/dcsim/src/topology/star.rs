//! A single switch with `hosts` hosts: the simplest fabric, and the testbed of the PIAS paper.

use super::Builder;
use crate::spec::TopologySpec;
use dcsim_engine::SimTime;

pub(super) fn build(b: &mut Builder, s: &TopologySpec) {
    b.hosts(s.hosts);
    let sw = b.switch();
    for h in 0..s.hosts {
        b.link(h, sw, s.host_rate(), SimTime::from_ns(s.link_delay_ns));
    }
}
