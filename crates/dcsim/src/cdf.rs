//! Empirical flow-size CDFs (the papers' files, in packets, or files of sizes in bytes),
//! sampled three ways. A leaf: it knows nothing of the spec.
//!
//! A CDF file declares the unit of its sizes in a comment line, `# unit: packets` (packets of
//! 1460 B payload, as the papers' files and the shipped ones) or `# unit: bytes`: a file in
//! bytes read as packets would give flows 1460 times too large, without a word.

crate::choice! {
    /// How a CDF is sampled (the pFabric ns-2 scripts and the pHost authors' simulator differ).
    pub enum SizeSampling {
        /// Linear interpolation between CDF points, rounded up to whole packets (ns-2, the
        /// pHost authors' 2015 simulator).
        Interpolate = "interpolate",
        /// Linear interpolation rounded to the nearest packet (the pHost authors' 2016 code).
        InterpolateRound = "interpolate-round",
        /// Step CDF: the size of the first point whose probability is ≥ u.
        Step = "step",
    }
}

use crate::choice::Choice;
use crate::units::{MAX_FLOW_BYTES, MSS_BYTES};

const WEBSEARCH: &str = include_str!("../../../workloads/CDF_dctcp.txt");
const DATAMINING: &str = include_str!("../../../workloads/CDF_datamining.txt");
const IMC10: &str = include_str!("../../../workloads/CDF_aditya.txt");
const HOMA_W1: &str = include_str!("../../../workloads/homa/FacebookKeyValue_Sampled.txt");
const HOMA_W2: &str = include_str!("../../../workloads/homa/Google_SearchRPC.txt");
const HOMA_W3: &str = include_str!("../../../workloads/homa/Google_AllRPC.txt");
const HOMA_W4: &str = include_str!("../../../workloads/homa/Facebook_HadoopDist_All.txt");
const HOMA_W5: &str = include_str!("../../../workloads/homa/DCTCP_MsgSizeDist.txt");

/// The bytes of one of W5's packets: the authors' simulator multiplies the sizes of
/// `DCTCP_MsgSizeDist.txt` by 1500 − 20 (IP) − 8 (UDP) − 30 (Homa header) bytes
/// (`MsgSizeDistributions.cc`, `WorkloadEstimator.cc`).
pub const HOMA_W5_PACKET_BYTES: u64 = 1442;

crate::choice! {
    /// The unit of a CDF file's sizes, declared by a `# unit: <name>` line.
    pub enum CdfUnit {
        /// Packets of 1460 B payload (the papers' files and the shipped CDFs).
        Packets = "packets",
        /// Bytes.
        Bytes = "bytes",
    }
}

impl CdfUnit {
    /// Bytes per unit.
    pub fn bytes(self) -> u64 {
        match self {
            CdfUnit::Packets => MSS_BYTES as u64,
            CdfUnit::Bytes => 1,
        }
    }
}

/// The largest size a CDF in packets may reach: 1,000,000 packets (1.46 GB). The shipped CDFs
/// reach 666,667 (data mining); a file of byte counts read as packets goes far beyond.
pub const MAX_CDF_PACKETS: f64 = 1_000_000.0;

/// An empirical CDF over flow sizes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Cdf {
    /// (size in `unit`s, cumulative probability), non-decreasing in both.
    pub points: Vec<(f64, f64)>,
    /// The unit of the sizes.
    pub unit: CdfUnit,
}

/// The unit a `# unit: <name>` comment declares (`None`: the comment is something else).
fn declared_unit(comment: &str, at: &str) -> Option<Result<CdfUnit, String>> {
    let (key, name) = comment.split_once(':')?;
    if !key.trim().eq_ignore_ascii_case("unit") {
        return None;
    }
    let name = name.trim();
    Some(
        CdfUnit::OPTIONS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, u)| *u)
            .ok_or_else(|| {
                format!(
                    "{at}: unit \"{name}\" is not one of \"packets\" (of 1460 B payload) or \"bytes\""
                )
            }),
    )
}

impl Cdf {
    /// Parses the papers' format: one `size [ignored] cdf` row per line, blank lines and `#`
    /// comments skipped, and a `# unit: packets` or `# unit: bytes` line, required unless
    /// `known` gives the unit (the shipped files, kept byte for byte as published): the unit
    /// cannot be told from the numbers. Sizes in packets above [`MAX_CDF_PACKETS`] are
    /// rejected as implausible. `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str, known: Option<CdfUnit>) -> Result<Cdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut unit: Option<CdfUnit> = known;
        // The largest size and its line, checked against the unit once it is known.
        let mut largest: (f64, String) = (0.0, String::new());
        for (i, raw) in text.lines().enumerate() {
            let at = format!("{origin}, line {}", i + 1);
            let (line, comment) = raw.split_once('#').unwrap_or((raw, ""));
            if let Some(declared) = declared_unit(comment, &at) {
                let declared = declared?;
                if unit.is_some_and(|u| u != declared) {
                    return Err(format!(
                        "{at}: unit \"{}\" contradicts the unit already known, \"{}\"",
                        declared.name(),
                        unit.map_or("", CdfUnit::name)
                    ));
                }
                unit = Some(declared);
            }
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let nums: Result<Vec<f64>, _> =
                line.split_whitespace().map(str::parse::<f64>).collect();
            let nums = nums.map_err(|_| format!("{at}: \"{line}\" is not numbers"))?;
            let (size, p) = match nums.as_slice() {
                [s, p] | [s, _, p] => (*s, *p),
                _ => {
                    return Err(format!(
                        "{at}: expected `size cdf` or `size ignored cdf`, got {} columns",
                        nums.len()
                    ))
                }
            };
            if !(size > 0.0 && size.is_finite()) {
                return Err(format!("{at}: size {size} must be a positive number"));
            }
            if size > largest.0 {
                largest = (size, at.clone());
            }
            if !(0.0..=1.0).contains(&p) || p.is_nan() {
                return Err(format!("{at}: probability {p} is outside [0, 1]"));
            }
            if let Some(&(ps, pp)) = points.last() {
                if p < pp {
                    return Err(format!("{at}: the CDF decreases ({pp} then {p})"));
                }
                if size < ps {
                    return Err(format!("{at}: sizes must not decrease ({ps} then {size})"));
                }
            }
            points.push((size, p));
        }
        let unit = unit.ok_or_else(|| {
            format!(
                "{origin}: the file does not say in which unit its sizes are: add a line `# unit: packets` (packets of 1460 B payload, as in the papers' CDF files and dcsim's workloads/*.txt) or `# unit: bytes`"
            )
        })?;
        let (size, at) = largest;
        match unit {
            CdfUnit::Packets if size > MAX_CDF_PACKETS => {
                return Err(format!(
                    "{at}: {size} packets ({:.1} GB) is implausible for packets of 1460 B (at most {MAX_CDF_PACKETS}; the largest shipped CDF reaches 666,667): if the sizes are bytes, declare `# unit: bytes`",
                    size * MSS_BYTES as f64 / 1e9
                ))
            }
            CdfUnit::Bytes if size > MAX_FLOW_BYTES as f64 => {
                return Err(format!(
                    "{at}: {size} bytes is above the largest flow dcsim simulates, {MAX_FLOW_BYTES} (1 TB)"
                ))
            }
            _ => {}
        }
        match points.last() {
            None => Err(format!("{origin}: no CDF rows")),
            Some(&(_, p)) if (p - 1.0).abs() > 1e-9 => {
                Err(format!("{origin}: the CDF ends at {p}, not at 1"))
            }
            _ => Ok(Cdf { points, unit }),
        }
    }

    /// Parses the Homa authors' format (`MsgSizeDistributions.cc`): line 1 the mean size, then
    /// one `size cumulative-probability` row per line, sizes in units of `unit_bytes` bytes
    /// (1 for W1–W4, 1442 for W5). Returns the CDF in bytes and the mean the header declares,
    /// in bytes. Rows are checked as in [`Cdf::parse`] (non-decreasing sizes and
    /// probabilities, ending at 1).
    pub fn parse_homa(text: &str, origin: &str, unit_bytes: u64) -> Result<(Cdf, f64), String> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let (_, header) = lines.next().ok_or_else(|| format!("{origin}: empty file"))?;
        let mean = match header.trim().parse::<f64>() {
            Ok(m) if m > 0.0 && m.is_finite() => m * unit_bytes as f64,
            _ => {
                return Err(format!(
                    "{origin}, line 1: \"{}\" is not the mean size (one positive number)",
                    header.trim()
                ))
            }
        };
        let mut rows = String::from("# unit: bytes\n");
        for (i, line) in lines {
            let nums: Vec<&str> = line.split_whitespace().collect();
            let [size, p] = nums.as_slice() else {
                return Err(format!(
                    "{origin}, line {}: expected `size cumulative-probability`, got {} columns",
                    i + 1,
                    nums.len()
                ));
            };
            let size: f64 = size
                .parse()
                .map_err(|_| format!("{origin}, line {}: \"{size}\" is not a size", i + 1))?;
            rows.push_str(&format!("{} {p}\n", size * unit_bytes as f64));
        }
        Ok((Cdf::parse(&rows, origin, None)?, mean))
    }

    /// A size in whole units (packets or bytes, see [`Cdf::unit`]) for uniform draw `u` in
    /// [0, 1).
    #[inline]
    pub fn sample_units(&self, u: f64, mode: SizeSampling) -> u64 {
        let pts = &self.points;
        // First point with cumulative probability >= u.
        let i = pts.partition_point(|&(_, p)| p < u);
        let i = i.min(pts.len() - 1);
        let x = if i == 0 || mode == SizeSampling::Step {
            pts[i].0
        } else {
            let (x0, p0) = pts[i - 1];
            let (x1, p1) = pts[i];
            if p1 > p0 {
                x0 + (u - p0) / (p1 - p0) * (x1 - x0)
            } else {
                x1
            }
        };
        let units = match mode {
            SizeSampling::Interpolate => x.ceil(),
            SizeSampling::InterpolateRound => x.round(),
            SizeSampling::Step => x.ceil(),
        };
        (units as u64).max(1)
    }

    /// The exact mean size in units under `mode`, so the arrival rate matches the sampler
    /// (the exact mean of the interpolated or step distribution).
    pub fn mean_units(&self, mode: SizeSampling) -> f64 {
        // ∫₀^y frac(x) dx.
        fn frac_integral(y: f64) -> f64 {
            let f = y - y.floor();
            y.floor() * 0.5 + f * f * 0.5
        }
        let mut mean = self.points[0].0.ceil() * self.points[0].1;
        for w in self.points.windows(2) {
            let ((a, p0), (b, p1)) = (w[0], w[1]);
            let dp = p1 - p0;
            if dp <= 0.0 {
                continue;
            }
            let seg = if mode == SizeSampling::Step || b <= a {
                b.ceil()
            } else {
                let lin = (b * b - a * a) / 2.0;
                let integral = match mode {
                    SizeSampling::Interpolate => {
                        lin + (b - a) - (frac_integral(b) - frac_integral(a))
                    }
                    _ => lin + 0.5 * (b - a) - (frac_integral(b + 0.5) - frac_integral(a + 0.5)),
                };
                integral / (b - a)
            };
            mean += dp * seg;
        }
        mean
    }
}

/// The text of a shipped CDF.
pub fn named_cdf(name: &str) -> Option<&'static str> {
    match name {
        "websearch" => Some(WEBSEARCH),
        "datamining" => Some(DATAMINING),
        "imc10" => Some(IMC10),
        "homa-w1" => Some(HOMA_W1),
        "homa-w2" => Some(HOMA_W2),
        "homa-w3" => Some(HOMA_W3),
        "homa-w4" => Some(HOMA_W4),
        "homa-w5" => Some(HOMA_W5),
        _ => None,
    }
}

/// Names of the shipped CDFs: the papers' three in packets, then the Homa paper's W1–W5
/// (`workloads/homa/`, in the Homa authors' format: [`Cdf::parse_homa`]).
pub const NAMED_CDFS: [&str; 8] =
    ["websearch", "datamining", "imc10", "homa-w1", "homa-w2", "homa-w3", "homa-w4", "homa-w5"];

/// True for the Homa paper's workloads W1–W5, which its authors' simulator samples as steps.
pub fn is_homa_workload(name: &str) -> bool {
    name.starts_with("homa-w") && named_cdf(name).is_some()
}

/// Loads a shipped CDF by name, or a CDF file by path.
pub fn load(name_or_path: &str, is_file: bool) -> Result<Cdf, String> {
    if is_file {
        let text = std::fs::read_to_string(name_or_path)
            .map_err(|e| format!("cannot read CDF file {name_or_path}: {e}"))?;
        Cdf::parse(&text, name_or_path, None)
    } else {
        let text = named_cdf(name_or_path)
            .ok_or_else(|| format!("unknown workload \"{name_or_path}\""))?;
        if is_homa_workload(name_or_path) {
            let unit = if name_or_path == "homa-w5" { HOMA_W5_PACKET_BYTES } else { 1 };
            return Cdf::parse_homa(text, name_or_path, unit).map(|(cdf, _)| cdf);
        }
        Cdf::parse(text, name_or_path, Some(CdfUnit::Packets))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_engine::Rng;

    fn websearch() -> Cdf {
        Cdf::parse(WEBSEARCH, "websearch", Some(CdfUnit::Packets)).unwrap()
    }

    #[test]
    fn means_match_the_reference() {
        // Exact means of the shipped CDFs: interpolated 1140.98 (web search), 5116.60 (data mining),
        // 133.81 (IMC10) packets; step means 1622.94 and 9467.10. Rounding up adds ~0.5.
        let ws = websearch();
        let dm = Cdf::parse(DATAMINING, "dm", Some(CdfUnit::Packets)).unwrap();
        let imc = Cdf::parse(IMC10, "imc", Some(CdfUnit::Packets)).unwrap();
        assert!((ws.mean_units(SizeSampling::InterpolateRound) - 1140.98).abs() < 0.01);
        assert!((dm.mean_units(SizeSampling::InterpolateRound) - 5116.60).abs() < 0.01);
        assert!((imc.mean_units(SizeSampling::InterpolateRound) - 133.81).abs() < 0.01);
        assert!((ws.mean_units(SizeSampling::Step) - 1622.94).abs() < 0.01);
        assert!((dm.mean_units(SizeSampling::Step) - 9467.10).abs() < 0.01);
        let ceil = ws.mean_units(SizeSampling::Interpolate);
        assert!((ceil - 1141.41).abs() < 0.01, "{ceil}");
    }

    #[test]
    fn sampled_mean_matches_the_exact_mean() {
        let ws = websearch();
        for mode in [SizeSampling::Interpolate, SizeSampling::InterpolateRound, SizeSampling::Step]
        {
            let mut rng = Rng::new(3);
            let n = 400_000;
            let m: f64 = (0..n).map(|_| ws.sample_units(rng.next_f64(), mode) as f64).sum::<f64>()
                / n as f64;
            let exact = ws.mean_units(mode);
            assert!((m - exact).abs() / exact < 0.01, "{mode:?}: sampled {m}, exact {exact}");
        }
    }

    #[test]
    fn interpolation_points() {
        let ws = websearch();
        assert_eq!(ws.sample_units(0.0, SizeSampling::Interpolate), 6);
        assert_eq!(ws.sample_units(0.15, SizeSampling::Interpolate), 6);
        // Halfway between (13, 0.20) and (19, 0.30): 16.
        assert_eq!(ws.sample_units(0.25, SizeSampling::Interpolate), 16);
        assert_eq!(ws.sample_units(0.2501, SizeSampling::Interpolate), 17);
        assert_eq!(ws.sample_units(0.2501, SizeSampling::InterpolateRound), 16);
        assert_eq!(ws.sample_units(0.2501, SizeSampling::Step), 19);
        assert_eq!(ws.sample_units(0.999999, SizeSampling::Interpolate), 20000);
    }

    #[test]
    fn bad_cdfs_are_rejected_with_the_line() {
        let e = Cdf::parse("# unit: packets\n1 1 0\n5 1 0.6\n7 1 0.4\n9 1 1\n", "f.txt", None)
            .unwrap_err();
        assert!(e.contains("f.txt, line 4") && e.contains("decreases"), "{e}");
        let e = Cdf::parse("# unit: packets\n1 1 0\n5 1 0.6\n", "f.txt", None).unwrap_err();
        assert!(e.contains("ends at 0.6"), "{e}");
        let e = Cdf::parse("# unit: packets\n1 1 0\nx 1 1\n", "f.txt", None).unwrap_err();
        assert!(e.contains("line 3"), "{e}");
    }

    /// Issue 15 item 5: a CDF file says its unit; one in bytes is read in bytes, one without
    /// a unit or in implausibly many packets is rejected with what to write.
    #[test]
    fn a_cdf_declares_its_unit_and_implausible_packet_counts_are_rejected() {
        let rows = "100 1 0\n1000 1 0.5\n10000000 1 1\n";
        let e = Cdf::parse(rows, "mine.txt", None).unwrap_err();
        assert!(e.contains("mine.txt") && e.contains("add a line `# unit: packets`"), "{e}");
        let e = Cdf::parse(&format!("# unit: packets\n{rows}"), "mine.txt", None).unwrap_err();
        assert!(e.contains("mine.txt, line 4: 10000000 packets (14.6 GB) is implausible"), "{e}");
        assert!(e.contains("declare `# unit: bytes`"), "{e}");
        let bytes = Cdf::parse(&format!("#Unit: Bytes\n{rows}"), "mine.txt", None).unwrap();
        assert_eq!(bytes.unit, CdfUnit::Bytes);
        assert_eq!(bytes.sample_units(0.75, SizeSampling::Interpolate), 5_000_500);
        let e = Cdf::parse(&format!("# unit: kb\n{rows}"), "mine.txt", None).unwrap_err();
        assert!(e.contains("line 1: unit \"kb\" is not one of \"packets\""), "{e}");
        // The shipped files are in packets (known, not declared: they are kept as published),
        // the Homa paper's converted to bytes.
        for name in NAMED_CDFS {
            let unit = if is_homa_workload(name) { CdfUnit::Bytes } else { CdfUnit::Packets };
            assert_eq!(load(name, false).unwrap().unit, unit, "{name}");
        }
    }

    /// Issue 18, item 3: the Homa authors' format on a tiny file: the header is the mean, rows
    /// are steps (no size between rows is drawn), sizes scale by the unit, and errors name the
    /// line.
    #[test]
    fn the_homa_format_is_read_as_steps() {
        let (cdf, mean) = Cdf::parse_homa("3.5\n2 0.5\n5 1.0\n", "tiny.txt", 1).unwrap();
        assert_eq!(cdf.points, vec![(2.0, 0.5), (5.0, 1.0)]);
        assert_eq!((cdf.unit, mean), (CdfUnit::Bytes, 3.5));
        let draws: Vec<u64> = [0.0, 0.3, 0.5, 0.5001, 0.99]
            .iter()
            .map(|&u| cdf.sample_units(u, SizeSampling::Step))
            .collect();
        assert_eq!(draws, [2, 2, 2, 5, 5]);
        assert_eq!(cdf.mean_units(SizeSampling::Step), 3.5);
        // In packets of 1442 B (W5's unit): sizes and the mean scale.
        let (cdf, mean) = Cdf::parse_homa("3.5\n2 0.5\n5 1.0\n", "tiny.txt", 1442).unwrap();
        assert_eq!((cdf.points[1].0, mean), (5.0 * 1442.0, 3.5 * 1442.0));
        let e = Cdf::parse_homa("mean\n2 0.5\n", "bad.txt", 1).unwrap_err();
        assert!(e.contains("bad.txt, line 1") && e.contains("not the mean size"), "{e}");
        let e = Cdf::parse_homa("3\n2 0.5 7\n", "bad.txt", 1).unwrap_err();
        assert!(e.contains("bad.txt, line 2") && e.contains("3 columns"), "{e}");
        let e = Cdf::parse_homa("3\n2 0.5\n", "bad.txt", 1).unwrap_err();
        assert!(e.contains("ends at 0.5"), "{e}");
    }

    /// Issue 18, item 3: the shipped W1–W5 read with the means their headers declare (the
    /// step mean of the rows; W1's header is 0.14 % above its rows' mean), W5 in 1442-byte
    /// packets, and their extremes as published (README of `workloads/homa/`).
    #[test]
    fn the_homa_workloads_have_their_published_means_and_ranges() {
        for (name, header, lo, hi) in [
            ("homa-w1", 187.77, 1.0, 100_000.0),
            ("homa-w2", 440.7907, 2.0, 3_529_904.0),
            ("homa-w3", 2927.354, 3.0, 15_158_197.0),
            ("homa-w4", 127_796.6, 50.0, 10_000_000.0),
            ("homa-w5", 1744.70 * 1442.0, 1442.0, 20_000.0 * 1442.0),
        ] {
            let unit = if name == "homa-w5" { HOMA_W5_PACKET_BYTES } else { 1 };
            let (cdf, mean) = Cdf::parse_homa(named_cdf(name).unwrap(), name, unit).unwrap();
            assert!((mean - header).abs() < 1e-6 * header, "{name}: header {mean}");
            let rows = cdf.mean_units(SizeSampling::Step);
            let tolerance = if name == "homa-w1" { 0.0015 } else { 1e-4 };
            assert!((rows - mean).abs() / mean < tolerance, "{name}: rows' mean {rows} vs {mean}");
            assert_eq!((cdf.points[0].0, cdf.points.last().unwrap().0), (lo, hi), "{name}");
        }
        // W5 is not dcsim's web search: a larger mean even in its own packets.
        let w5 = load("homa-w5", false).unwrap().mean_units(SizeSampling::Step) / 1442.0;
        let ws = load("websearch", false).unwrap().mean_units(SizeSampling::Step);
        assert!((w5 - 1744.70).abs() < 0.01 && (ws - 1622.94).abs() < 0.01, "{w5} {ws}");
    }
}
