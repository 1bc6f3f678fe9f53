//! The run summary: slowdown and FCT statistics overall and by size bin, plus counters.

use super::FlowRecords;
use serde::Serialize;
use std::collections::BTreeMap;

/// The size bins of the papers (pFabric SIGCOMM'13 §5, pHost §4, PIAS §5): (0,100KB], (100KB,10MB], (10MB,∞).
pub const BINS: [(&str, u64, u64); 3] =
    [("0-100KB", 0, 100_000), ("100KB-10MB", 100_000, 10_000_000), ("10MB+", 10_000_000, u64::MAX)];

/// Statistics of one group of flows.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct BinStats {
    /// Completed flows in the group.
    pub count: u64,
    /// Mean of FCT / ideal FCT.
    pub mean_slowdown: f64,
    /// Median slowdown.
    pub median_slowdown: f64,
    /// 99th-percentile slowdown (element ⌊0.99·n⌋ of the sorted list).
    pub p99_slowdown: f64,
    /// Mean FCT, µs.
    pub mean_fct_us: f64,
    /// 99th-percentile FCT, µs.
    pub p99_fct_us: f64,
    /// Mean FCT / mean ideal FCT.
    pub nfct: f64,
}

/// Counters the simulation hands to the summary.
#[derive(Debug, Clone, Serialize, Default)]
pub struct RunCounters {
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds of the event loop.
    pub wall_seconds: f64,
    /// Simulated time at the end, µs.
    pub sim_time_us: f64,
    /// Data packets put on the wire by hosts (first transmissions and retransmissions).
    pub data_packets_injected: u64,
    /// Control packets (ACKs, …) put on the wire by hosts.
    pub control_packets_injected: u64,
    /// Packets that reached their destination host.
    pub packets_delivered: u64,
    /// Packets dropped, by hop kind name.
    pub drops_by_hop: BTreeMap<String, u64>,
    /// Packets ECN-marked, by hop kind name.
    pub marks_by_hop: BTreeMap<String, u64>,
    /// Most packets alive at once.
    pub peak_packets_in_flight: u64,
    /// Partitions the fabric ran as (1: a sequential run; docs/parallel.md).
    pub partitions: u64,
    /// Windows a partitioned run synchronised its partitions at (0 for a sequential run).
    pub windows: u64,
    /// Flows whose FCT came out below the ideal (must be 0).
    pub fct_below_ideal: u64,
    /// Flows left unfinished when the run ran out of events with no time limit: stalled,
    /// nothing left that could move them (must be 0).
    pub flows_stalled: u64,
    /// Packets unaccounted for by the conservation check (must be 0).
    pub conservation_error: i64,
    /// Data bytes (on the wire) delivered to receivers while flows were still arriving, per
    /// second of that period, Gbps (whole fabric): the delivered rate of the loaded network,
    /// free of the drain at the end of a run. The run's flows only (not the long-lived ones).
    pub throughput_during_arrivals_gbps: f64,
    /// The load the run's arrivals offered, in `workload.load`'s terms (their bytes per second
    /// to the last arrival against the rate the load asked for); `None` without an arrival
    /// rate (a trace, flows all at time 0).
    pub offered_load: Option<f64>,
    /// The transport's own counters (e.g. PASE's arbitration messages), by name.
    pub transport_counters: BTreeMap<String, u64>,
    /// Distinct payload bytes the long-lived flows (`workload.long_lived_flows`) delivered to
    /// their receivers during the run.
    pub long_lived_bytes_delivered: u64,
    /// Those bytes per second of the run (time 0 to its end), Gbps: the long-lived flows'
    /// goodput, all of them together.
    pub long_lived_goodput_gbps: f64,
    /// Rows of `timeseries.parquet` (`output.timeseries_us`; 0 when off).
    pub timeseries_rows: u64,
    /// True if the time series stopped at [`MAX_SAMPLES`] rows.
    pub timeseries_truncated: bool,
    /// Rows of `ports.parquet` (`output.ports_sample_us`; 0 when off).
    pub ports_rows: u64,
    /// True if the port samples stopped at `output.ports_max_rows`.
    pub ports_truncated: bool,
    /// Rows of `packets.parquet` (`output.packet_trace`; 0 when off).
    pub packets_rows: u64,
    /// True if the packet trace stopped at `output.packet_trace_max_rows`.
    pub packets_truncated: bool,
}

/// The run's state sampled at regular simulated times (pHost Fig. 7's stability view), written
/// to `timeseries.parquet`.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Timeseries {
    /// Sample times, µs.
    pub t_us: Vec<f64>,
    /// Data packets of the flows that have arrived so far (the packets "arrived at the
    /// sources").
    pub arrived_packets: Vec<u64>,
    /// Distinct data packets the sources have put on the wire so far (first transmissions; the
    /// long-lived flows' included).
    pub injected_packets: Vec<u64>,
    /// Flows finished so far.
    pub flows_done: Vec<u64>,
    /// True if the series stopped at [`MAX_SAMPLES`] samples (raise `output.timeseries_us`).
    pub truncated: bool,
}

/// The most samples a time series keeps (a few MB in `timeseries.parquet`).
pub const MAX_SAMPLES: usize = 100_000;

/// The summary of one run; `summary.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Flows generated.
    pub flows_total: u64,
    /// Flows that finished.
    pub flows_completed: u64,
    /// Flows left out as warm-up.
    pub flows_warmup: u64,
    /// Mean slowdown over completed, measured flows.
    pub mean_slowdown: f64,
    /// Median slowdown.
    pub median_slowdown: f64,
    /// 99th-percentile slowdown.
    pub p99_slowdown: f64,
    /// Mean FCT, µs.
    pub mean_fct_us: f64,
    /// Mean FCT / mean ideal FCT.
    pub nfct: f64,
    /// By size bin.
    pub bins: BTreeMap<String, BinStats>,
    /// Completed payload bits over the span from first arrival to last completion, Gbps
    /// (whole fabric).
    pub throughput_gbps: f64,
    /// Counters from the run.
    #[serde(flatten)]
    pub counters: RunCounters,
    /// Events per wall-clock second.
    pub events_per_sec: f64,
    /// Mean incast request completion time (first arrival to last flow done), µs; 0 if none.
    pub mean_request_completion_us: f64,
    /// Measured flows that have a deadline.
    pub deadline_flows: u64,
    /// Fraction of them that finished by their deadline (0 if none have one).
    pub deadline_met_fraction: f64,
}

fn percentile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v[((q * v.len() as f64).floor() as usize).min(v.len() - 1)]
}

fn stats(rows: &[(f64, f64, f64)]) -> BinStats {
    // rows: (slowdown, fct_us, ideal_us)
    let n = rows.len();
    if n == 0 {
        return BinStats::default();
    }
    let mut sd: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let mut fct: Vec<f64> = rows.iter().map(|r| r.1).collect();
    sd.sort_by(f64::total_cmp);
    fct.sort_by(f64::total_cmp);
    let mean_fct = fct.iter().sum::<f64>() / n as f64;
    let mean_ideal = rows.iter().map(|r| r.2).sum::<f64>() / n as f64;
    BinStats {
        count: n as u64,
        mean_slowdown: sd.iter().sum::<f64>() / n as f64,
        median_slowdown: percentile_sorted(&sd, 0.5),
        p99_slowdown: percentile_sorted(&sd, 0.99),
        mean_fct_us: mean_fct,
        p99_fct_us: percentile_sorted(&fct, 0.99),
        nfct: mean_fct / mean_ideal,
    }
}

/// Computes the summary of `records`, leaving out the first `warmup` flows. Flows still open
/// when the run stopped count only towards deadlines already missed by then.
pub fn summarize(records: &FlowRecords, warmup: usize, counters: RunCounters) -> Summary {
    let end_ps = (counters.sim_time_us * 1e6) as u64;
    let mut all = Vec::new();
    let mut by_bin: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); BINS.len()];
    let (mut first, mut last, mut bits) = (u64::MAX, 0u64, 0f64);
    let mut completed = 0u64;
    let mut requests: BTreeMap<u32, (u64, u64, bool)> = BTreeMap::new();
    let (mut with_deadline, mut met) = (0u64, 0u64);
    for i in 0..records.len() {
        let r = records.request[i];
        if r != u32::MAX {
            let e = requests.entry(r).or_insert((u64::MAX, 0, true));
            e.0 = e.0.min(records.start_ps[i]);
            e.1 = e.1.max(records.finish_ps[i]);
            e.2 &= records.finish_ps[i] != u64::MAX;
        }
        let open = records.finish_ps[i] == u64::MAX;
        if i >= warmup
            && records.deadline_ps[i] != u64::MAX
            && (!open || records.deadline_ps[i] <= end_ps)
        {
            with_deadline += 1;
            met += u64::from(records.finish_ps[i] <= records.deadline_ps[i]);
        }
        let Some(fct) = records.fct(i) else { continue };
        completed += 1;
        if i < warmup {
            continue;
        }
        let ideal = records.ideal_ps[i] as f64;
        let row = (fct.as_ps() as f64 / ideal, fct.as_us_f64(), ideal / 1e6);
        all.push(row);
        let size = records.size_bytes[i];
        if let Some(b) = BINS.iter().position(|&(_, lo, hi)| size > lo && size <= hi) {
            by_bin[b].push(row);
        }
        first = first.min(records.start_ps[i]);
        last = last.max(records.finish_ps[i]);
        bits += size as f64 * 8.0;
    }
    let overall = stats(&all);
    let bins = BINS
        .iter()
        .zip(by_bin.iter())
        .map(|(&(name, _, _), rows)| (name.to_string(), stats(rows)))
        .collect();
    let span_s = if last > first { (last - first) as f64 / 1e12 } else { 0.0 };
    let done: Vec<f64> =
        requests.values().filter(|r| r.2).map(|r| (r.1 - r.0) as f64 / 1e6).collect();
    let events_per_sec = if counters.wall_seconds > 0.0 {
        counters.events as f64 / counters.wall_seconds
    } else {
        0.0
    };
    Summary {
        flows_total: records.len() as u64,
        flows_completed: completed,
        flows_warmup: warmup.min(records.len()) as u64,
        mean_slowdown: overall.mean_slowdown,
        median_slowdown: overall.median_slowdown,
        p99_slowdown: overall.p99_slowdown,
        mean_fct_us: overall.mean_fct_us,
        nfct: overall.nfct,
        bins,
        throughput_gbps: if span_s > 0.0 { bits / span_s / 1e9 } else { 0.0 },
        events_per_sec,
        mean_request_completion_us: if done.is_empty() {
            0.0
        } else {
            done.iter().sum::<f64>() / done.len() as f64
        },
        deadline_flows: with_deadline,
        deadline_met_fraction: if with_deadline > 0 {
            met as f64 / with_deadline as f64
        } else {
            0.0
        },
        counters,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{FlowArrival, NONE};
    use dcsim_engine::SimTime;

    #[test]
    fn bins_percentiles_and_nfct() {
        let mut r = FlowRecords::default();
        // 100 flows of 50 KB with slowdowns 1..=100; one 20 MB flow with slowdown 2.
        for k in 0..101u64 {
            let size = if k < 100 { 50_000 } else { 20_000_000 };
            let f = FlowArrival {
                id: k as u32,
                label: k,
                src: 0,
                dst: 1,
                size_bytes: size,
                start: SimTime(0),
                deadline: SimTime::MAX,
                tenant: 0,
                request: NONE,
            };
            let i = r.push(&f, SimTime::from_us(10));
            let slowdown = if k < 100 { k + 1 } else { 2 };
            r.finish_ps[i] = slowdown * 10_000_000;
        }
        let s = summarize(&r, 0, RunCounters::default());
        let small = &s.bins["0-100KB"];
        assert_eq!(small.count, 100);
        assert!((small.mean_slowdown - 50.5).abs() < 1e-9);
        assert_eq!(small.p99_slowdown, 100.0); // element ⌊0.99·100⌋ = index 99
        assert_eq!(small.median_slowdown, 51.0);
        assert_eq!(s.bins["10MB+"].count, 1);
        assert_eq!(s.bins["100KB-10MB"].count, 0);
        assert_eq!(s.flows_completed, 101);
        // NFCT = mean FCT / mean ideal.
        assert!((s.nfct - (50.5 * 100.0 + 2.0) / 101.0).abs() < 1e-9);
        // Warm-up drops the first flows from the statistics only.
        let w = summarize(&r, 50, RunCounters::default());
        assert_eq!(w.bins["0-100KB"].count, 50);
        assert_eq!(w.flows_completed, 101);
    }
}
