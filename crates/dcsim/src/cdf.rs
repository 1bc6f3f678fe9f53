//! Empirical flow-size CDFs in packets (the papers' files), sampled three ways. A leaf: it
//! knows nothing of the spec.

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

const WEBSEARCH: &str = include_str!("../../../workloads/CDF_dctcp.txt");
const DATAMINING: &str = include_str!("../../../workloads/CDF_datamining.txt");
const IMC10: &str = include_str!("../../../workloads/CDF_aditya.txt");

/// An empirical CDF over flow sizes in packets of 1460 B payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Cdf {
    /// (size in packets, cumulative probability), non-decreasing in both.
    pub points: Vec<(f64, f64)>,
}

impl Cdf {
    /// Parses the papers' format: one `size [ignored] cdf` row per line; blank lines and
    /// `#` comments are skipped. `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Cdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let nums: Result<Vec<f64>, _> =
                line.split_whitespace().map(str::parse::<f64>).collect();
            let at = format!("{origin}, line {}", i + 1);
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
            let max_pkts = (crate::units::MAX_FLOW_BYTES / crate::units::MSS_BYTES as u64) as f64;
            if !(size > 0.0 && size <= max_pkts) {
                return Err(format!(
                    "{at}: size {size} must be a positive number of 1460-byte packets, at most {max_pkts} (1 TB)"
                ));
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
        match points.last() {
            None => Err(format!("{origin}: no CDF rows")),
            Some(&(_, p)) if (p - 1.0).abs() > 1e-9 => {
                Err(format!("{origin}: the CDF ends at {p}, not at 1"))
            }
            _ => Ok(Cdf { points }),
        }
    }

    /// A size in packets for uniform draw `u` in [0, 1).
    #[inline]
    pub fn sample_pkts(&self, u: f64, mode: SizeSampling) -> u64 {
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
        let pkts = match mode {
            SizeSampling::Interpolate => x.ceil(),
            SizeSampling::InterpolateRound => x.round(),
            SizeSampling::Step => x.ceil(),
        };
        (pkts as u64).max(1)
    }

    /// The exact mean size in packets under `mode`, so the arrival rate matches the sampler
    /// (the exact mean of the interpolated or step distribution).
    pub fn mean_pkts(&self, mode: SizeSampling) -> f64 {
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
        _ => None,
    }
}

/// Names of the shipped CDFs.
pub const NAMED_CDFS: [&str; 3] = ["websearch", "datamining", "imc10"];

/// Loads a shipped CDF by name, or a CDF file by path.
pub fn load(name_or_path: &str, is_file: bool) -> Result<Cdf, String> {
    if is_file {
        let text = std::fs::read_to_string(name_or_path)
            .map_err(|e| format!("cannot read CDF file {name_or_path}: {e}"))?;
        Cdf::parse(&text, name_or_path)
    } else {
        let text = named_cdf(name_or_path)
            .ok_or_else(|| format!("unknown workload \"{name_or_path}\""))?;
        Cdf::parse(text, name_or_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_engine::Rng;

    fn websearch() -> Cdf {
        Cdf::parse(WEBSEARCH, "websearch").unwrap()
    }

    #[test]
    fn means_match_the_reference() {
        // Exact means of the shipped CDFs: interpolated 1140.98 (web search), 5116.60 (data mining),
        // 133.81 (IMC10) packets; step means 1622.94 and 9467.10. Rounding up adds ~0.5.
        let ws = websearch();
        let dm = Cdf::parse(DATAMINING, "dm").unwrap();
        let imc = Cdf::parse(IMC10, "imc").unwrap();
        assert!((ws.mean_pkts(SizeSampling::InterpolateRound) - 1140.98).abs() < 0.01);
        assert!((dm.mean_pkts(SizeSampling::InterpolateRound) - 5116.60).abs() < 0.01);
        assert!((imc.mean_pkts(SizeSampling::InterpolateRound) - 133.81).abs() < 0.01);
        assert!((ws.mean_pkts(SizeSampling::Step) - 1622.94).abs() < 0.01);
        assert!((dm.mean_pkts(SizeSampling::Step) - 9467.10).abs() < 0.01);
        let ceil = ws.mean_pkts(SizeSampling::Interpolate);
        assert!((ceil - 1141.41).abs() < 0.01, "{ceil}");
    }

    #[test]
    fn sampled_mean_matches_the_exact_mean() {
        let ws = websearch();
        for mode in [SizeSampling::Interpolate, SizeSampling::InterpolateRound, SizeSampling::Step]
        {
            let mut rng = Rng::new(3);
            let n = 400_000;
            let m: f64 =
                (0..n).map(|_| ws.sample_pkts(rng.next_f64(), mode) as f64).sum::<f64>() / n as f64;
            let exact = ws.mean_pkts(mode);
            assert!((m - exact).abs() / exact < 0.01, "{mode:?}: sampled {m}, exact {exact}");
        }
    }

    #[test]
    fn interpolation_points() {
        let ws = websearch();
        assert_eq!(ws.sample_pkts(0.0, SizeSampling::Interpolate), 6);
        assert_eq!(ws.sample_pkts(0.15, SizeSampling::Interpolate), 6);
        // Halfway between (13, 0.20) and (19, 0.30): 16.
        assert_eq!(ws.sample_pkts(0.25, SizeSampling::Interpolate), 16);
        assert_eq!(ws.sample_pkts(0.2501, SizeSampling::Interpolate), 17);
        assert_eq!(ws.sample_pkts(0.2501, SizeSampling::InterpolateRound), 16);
        assert_eq!(ws.sample_pkts(0.2501, SizeSampling::Step), 19);
        assert_eq!(ws.sample_pkts(0.999999, SizeSampling::Interpolate), 20000);
    }

    #[test]
    fn bad_cdfs_are_rejected_with_the_line() {
        let e = Cdf::parse("1 1 0\n5 1 0.6\n7 1 0.4\n9 1 1\n", "f.txt").unwrap_err();
        assert!(e.contains("f.txt, line 3") && e.contains("decreases"), "{e}");
        let e = Cdf::parse("1 1 0\n5 1 0.6\n", "f.txt").unwrap_err();
        assert!(e.contains("ends at 0.6"), "{e}");
        let e = Cdf::parse("1 1 0\nx 1 1\n", "f.txt").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }
}
