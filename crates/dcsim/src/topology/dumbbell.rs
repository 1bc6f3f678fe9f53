//! Dumbbell: `hosts_per_side` hosts on each of two switches joined by one bottleneck link
//! (at the core rate). Hosts `0..n` are on the left, `n..2n` on the right.

use super::Builder;
use crate::spec::TopologySpec;
use dcsim_engine::SimTime;

pub(super) fn build(b: &mut Builder, s: &TopologySpec) {
    let n = s.hosts_per_side;
    let delay = SimTime::from_ns(s.link_delay_ns);
    b.hosts(2 * n);
    let left = b.switch();
    let right = b.switch();
    for h in 0..2 * n {
        let (sw, rack) = if h < n { (left, 0) } else { (right, 1) };
        b.set_rack(h, rack);
        b.link(h, sw, s.host_rate(), delay);
    }
    b.link(left, right, s.core_rate(), delay);
}
