//! Ideal: a flow-level simulation of end-to-end SRPT (pFabric HotNets'12 §2.1 and §3,
//! SIGCOMM'13 §5.1).
//!
//! "A central scheduler with a full view of all flows preemptively schedules existing flows in
//! nondecreasing order of size, and in a maximal manner. Only the edge link capacity
//! constraints are considered and the internals of the fabric are ignored." At every arrival
//! and departure the active flows are ordered by remaining size (ties: earlier arrival first);
//! going down that list, a flow is served at full line rate if neither its source NIC nor its
//! destination NIC is already taken by a smaller flow. That is the greedy maximal matching on
//! edge links the paper proves a 2-approximation of the optimum. With `transport.ideal_order =
//! "size"` the list is ordered by the flows' original sizes instead (preemptive shortest job
//! first), a reading of §2.1's greedy "in non-decreasing order of size".
//!
//! Work is measured in picoseconds at the host link rate (a flow of `b` bytes on the wire
//! needs `8b/C`), so the simulation is exact integer arithmetic and deterministic.
//!
//! The solver returns when each flow's last byte would have been transmitted. A packet-level
//! FCT also includes the path's propagation and pipeline delay and the final ACK; so that
//! Ideal's normalized FCTs compare like with like, the simulation adds to each flow the part of
//! its ideal (idle-network) FCT that is not transmission: an uncontended flow then has
//! slowdown exactly 1, as under the packet-level protocols.

use crate::spec::IdealOrder;

/// One flow for the solver.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Arrival, ps.
    pub start_ps: u64,
    /// Transmission time at line rate, ps (> 0).
    pub work_ps: u64,
}

/// Completion time (ps) of every job under greedy end-to-end SRPT on `n_hosts` hosts whose
/// NICs each carry one flow at a time. Jobs must be sorted by `start_ps`.
pub fn srpt(jobs: &[Job], n_hosts: u32) -> Vec<u64> {
    greedy(jobs, n_hosts, IdealOrder::Remaining)
}

/// Completion time (ps) of every job under the greedy end-to-end schedule in `order` (module
/// docs) on `n_hosts` hosts whose NICs each carry one flow at a time. Jobs must be sorted by
/// `start_ps`.
pub fn greedy(jobs: &[Job], n_hosts: u32, order: IdealOrder) -> Vec<u64> {
    debug_assert!(jobs.windows(2).all(|w| w[0].start_ps <= w[1].start_ps));
    let by_size = order == IdealOrder::Size;
    let mut finish = vec![u64::MAX; jobs.len()];
    // Active flows as (key, job index, remaining work), kept sorted by (key, job index); the
    // key is the remaining work (SRPT) or the job's whole work (by size).
    let mut active: Vec<(u64, usize, u64)> = Vec::new();
    let mut src_busy = vec![false; n_hosts as usize];
    let mut dst_busy = vec![false; n_hosts as usize];
    let mut served: Vec<usize> = Vec::new(); // positions in `active`
    let mut next = 0usize;
    let mut now = 0u64;
    while next < jobs.len() || !active.is_empty() {
        // Admit every arrival at `now` (or jump to the next arrival when idle).
        if active.is_empty() && next < jobs.len() && jobs[next].start_ps > now {
            now = jobs[next].start_ps;
        }
        while next < jobs.len() && jobs[next].start_ps <= now {
            let work = jobs[next].work_ps;
            let pos = active.partition_point(|&(k, j, _)| (k, j) < (work, next));
            active.insert(pos, (work, next, work));
            next += 1;
        }
        // Greedy maximal matching in the list's order.
        served.clear();
        for (pos, &(_, j, _)) in active.iter().enumerate() {
            let (s, d) = (jobs[j].src as usize, jobs[j].dst as usize);
            if !src_busy[s] && !dst_busy[d] {
                src_busy[s] = true;
                dst_busy[d] = true;
                served.push(pos);
            }
        }
        for &pos in &served {
            let j = active[pos].1;
            src_busy[jobs[j].src as usize] = false;
            dst_busy[jobs[j].dst as usize] = false;
        }
        // Advance to the next arrival or completion.
        let first_done = served.iter().map(|&pos| active[pos].2).min().unwrap_or(u64::MAX);
        let until_arrival = if next < jobs.len() { jobs[next].start_ps - now } else { u64::MAX };
        let step = first_done.min(until_arrival);
        debug_assert!(step < u64::MAX);
        now += step;
        for &pos in &served {
            active[pos].2 -= step;
            if !by_size {
                active[pos].0 -= step;
            }
        }
        // Record completions, then restore the order (with SRPT, served flows only moved
        // earlier; by size, the order never changes).
        active.retain(|&(_, j, rem)| {
            if rem == 0 {
                finish[j] = now;
                false
            } else {
                true
            }
        });
        if !by_size {
            for i in 1..active.len() {
                let mut k = i;
                while k > 0 && active[k] < active[k - 1] {
                    active.swap(k, k - 1);
                    k -= 1;
                }
            }
        }
    }
    finish
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(src: u32, dst: u32, start: u64, work: u64) -> Job {
        Job { src, dst, start_ps: start, work_ps: work }
    }

    #[test]
    fn hand_solved_four_flows() {
        // Hosts 0..3. At t = 0: A (0→1, 4) and D (2→3, 3) start; both are served (disjoint).
        // At t = 1: B (2→1, 1) and C (0→3, 2) arrive. Remaining: A 3, D 2, B 1, C 2.
        // SRPT order B(1), C(2), D(2, earlier arrival than C? no: D is job 1, C is job 3, so D
        // first on the tie), A(3). Matching: B takes src 2 and dst 1; D needs src 2: blocked;
        // C takes src 0 and dst 3; A needs src 0: blocked. So B and C run.
        // t = 2: B done (finish 2). Remaining A 3, D 2, C 1. Order C(1), D(2), A(3): C runs
        // (0→3); D needs dst 3: blocked; A needs src 0: blocked.
        // t = 3: C done (finish 3). A 3, D 2: D (2→3) and A (0→1) both run.
        // t = 5: D done (finish 5). t = 6: A done (finish 6).
        let jobs = [job(0, 1, 0, 4), job(2, 3, 0, 3), job(2, 1, 1, 1), job(0, 3, 1, 2)];
        assert_eq!(srpt(&jobs, 4), vec![6, 5, 2, 3]);
    }

    #[test]
    fn single_link_is_srpt() {
        // One source, one destination: plain preemptive SRPT on one link.
        let jobs = [job(0, 1, 0, 10), job(0, 1, 2, 3), job(0, 1, 3, 1), job(0, 1, 20, 5)];
        // 0-2: job0 (rem 8). 2-3: job1 (rem 2 < 8). 3-4: job2 (1) done at 4. 4-6: job1 done at
        // 6. 6-14: job0 done at 14. 20-25: job3.
        assert_eq!(srpt(&jobs, 2), vec![14, 6, 4, 25]);
    }

    #[test]
    fn by_size_a_nearly_done_large_flow_yields_to_a_smaller_one() {
        // One link. A (work 10) from 0; B (work 6) arrives at 5, when A has 5 left. SRPT keeps
        // A (5 < 6): A done at 10, B at 16. By size B (6 < 10) takes the link: B done at 11,
        // A at 16.
        let jobs = [job(0, 1, 0, 10), job(0, 1, 5, 6)];
        assert_eq!(greedy(&jobs, 2, IdealOrder::Remaining), vec![10, 16]);
        assert_eq!(greedy(&jobs, 2, IdealOrder::Size), vec![16, 11]);
        // The four flows above: every flow that runs at t = 1 is also the smaller by size, so
        // both orders agree there.
        let four = [job(0, 1, 0, 4), job(2, 3, 0, 3), job(2, 1, 1, 1), job(0, 3, 1, 2)];
        assert_eq!(greedy(&four, 4, IdealOrder::Size), vec![6, 5, 2, 3]);
    }

    /// Mean response time of M/G/1 preemptive SRPT (Schrage & Miller 1966) for service times
    /// uniform on [a, b] at arrival rate λ, by numerical integration:
    /// E[T(x)] = (λ∫₀ˣt²dF + λx²(1−F(x))) / (2(1−ρ(x))²) + ∫₀ˣ dt/(1−ρ(t)), ρ(x) = λ∫₀ˣ t dF.
    fn mg1_srpt_uniform(lambda: f64, a: f64, b: f64) -> f64 {
        let n = 4000;
        let h = (b - a) / n as f64;
        let rho = |x: f64| lambda * (x * x - a * a) / (2.0 * (b - a));
        let m2 = |x: f64| lambda * (x * x * x - a * a * a) / (3.0 * (b - a));
        let f = |x: f64| (x - a) / (b - a);
        // Residence part ∫ₐˣ dt/(1−ρ(t)) + the constant part for t < a (ρ = 0 there).
        let mut mean = 0.0;
        let mut residence = a; // ∫₀ᵃ dt
        let mut prev = a;
        for i in 0..n {
            let x = a + (i as f64 + 0.5) * h;
            // Advance the residence integral from prev to x (midpoint rule on a fine grid).
            let steps = 4;
            let dh = (x - prev) / steps as f64;
            for k in 0..steps {
                let t = prev + (k as f64 + 0.5) * dh;
                residence += dh / (1.0 - rho(t));
            }
            prev = x;
            let waiting = (m2(x) + lambda * x * x * (1.0 - f(x))) / (2.0 * (1.0 - rho(x)).powi(2));
            mean += (waiting + residence) * h / (b - a);
        }
        mean
    }

    #[test]
    fn matches_mg1_srpt_on_one_link() {
        // Poisson arrivals, service uniform on [1, 10] (arbitrary time unit: 1 µs), load 0.7.
        let (a, b, load) = (1.0f64, 10.0f64, 0.7f64);
        let mean_service = (a + b) / 2.0;
        let lambda = load / mean_service;
        let mut rng = dcsim_engine::Rng::new(5);
        let mut t = 0.0f64;
        let n = 400_000;
        let jobs: Vec<Job> = (0..n)
            .map(|_| {
                t += rng.exponential(1.0 / lambda);
                let s = a + (b - a) * rng.next_f64();
                job(0, 1, (t * 1e6) as u64, (s * 1e6) as u64)
            })
            .collect();
        let done = srpt(&jobs, 2);
        let warm = n / 20;
        let measured: f64 =
            (warm..n).map(|i| (done[i] - jobs[i].start_ps) as f64 / 1e6).sum::<f64>()
                / (n - warm) as f64;
        let expected = mg1_srpt_uniform(lambda, a, b);
        let err = (measured - expected).abs() / expected;
        assert!(
            err < 0.03,
            "measured {measured:.4}, M/G/1-SRPT {expected:.4} ({:.2} %)",
            err * 100.0
        );
    }
}
