//! Three-tier k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation
//! switches, (k/2)² core switches, k³/4 hosts. k = 6 is the pFabric HotNets'12 54-host fabric.

use super::Builder;
use crate::spec::TopologySpec;
use dcsim_engine::SimTime;

pub(super) fn build(b: &mut Builder, s: &TopologySpec) {
    let k = s.k;
    let half = k / 2;
    let delay = SimTime::from_ns(s.link_delay_ns);
    b.hosts(k * k * k / 4);
    let mut edges = Vec::new();
    let mut aggs = Vec::new();
    for _pod in 0..k {
        edges.push((0..half).map(|_| b.switch()).collect::<Vec<_>>());
        aggs.push((0..half).map(|_| b.switch()).collect::<Vec<_>>());
    }
    let cores: Vec<u32> = (0..half * half).map(|_| b.switch()).collect();
    for pod in 0..k as usize {
        for (e, &edge) in edges[pod].iter().enumerate() {
            for i in 0..half {
                let h = (pod as u32 * half + e as u32) * half + i;
                b.set_rack(h, pod as u32 * half + e as u32);
                b.link(h, edge, s.host_rate(), delay);
            }
            for &agg in &aggs[pod] {
                b.link(edge, agg, s.core_rate(), delay);
            }
        }
        // Aggregation switch j of every pod connects to cores j·k/2 .. (j+1)·k/2, at the
        // switch rate divided by `oversubscription` (1: full bisection).
        for (j, &agg) in aggs[pod].iter().enumerate() {
            for c in 0..half as usize {
                b.link(agg, cores[j * half as usize + c], s.fat_tree_core_rate(), delay);
            }
        }
    }
}
