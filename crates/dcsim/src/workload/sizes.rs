//! Flow sizes: drawn from an empirical CDF, fixed, or bimodal.

use crate::cdf::{Cdf, SizeSampling};
use crate::error::SpecError;
use crate::spec::{FlowSizes, WorkloadSpec};
use dcsim_engine::Rng;

/// Draws flow sizes in bytes.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum FlowSizeSampler {
    /// From an empirical CDF (in packets or bytes).
    Cdf(Cdf, SizeSampling),
    /// Always the same size.
    Fixed(u64),
    /// Uniform in `[lo, hi]` bytes.
    Uniform(u64, u64),
    /// `small` with probability `p_small`, else `large`.
    Bimodal {
        /// Small size, bytes.
        small: u64,
        /// Large size, bytes.
        large: u64,
        /// Probability of a small flow.
        p_small: f64,
    },
}

impl FlowSizeSampler {
    /// Builds the sampler the workload spec asks for, reading a CDF file if named.
    pub fn from_spec(w: &WorkloadSpec) -> Result<Self, SpecError> {
        FlowSizeSampler::new(&w.flow_sizes, w)
    }

    /// The sampler for `sizes`, with `w`'s sampling mode and bimodal settings.
    pub fn new(sizes: &FlowSizes, w: &WorkloadSpec) -> Result<Self, SpecError> {
        let err = |m: String| SpecError::new("workload.flow_sizes", m);
        Ok(match sizes {
            FlowSizes::Named(_) | FlowSizes::File(_) => {
                let cdf: Cdf = sizes.cdf().expect("a CDF choice").map_err(err)?;
                FlowSizeSampler::Cdf(cdf, w.size_sampling)
            }
            FlowSizes::Fixed(b) => FlowSizeSampler::Fixed(*b),
            FlowSizes::Uniform(lo, hi) => FlowSizeSampler::Uniform(*lo, *hi),
            FlowSizes::Bimodal => FlowSizeSampler::Bimodal {
                small: w.bimodal.small_bytes.max(1),
                large: w.bimodal.large_bytes.max(1),
                p_small: w.bimodal.p_small,
            },
        })
    }

    /// One flow size, bytes.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            FlowSizeSampler::Cdf(cdf, mode) => {
                cdf.sample_units(rng.next_f64(), *mode) * cdf.unit.bytes()
            }
            FlowSizeSampler::Fixed(b) => *b,
            FlowSizeSampler::Uniform(lo, hi) => lo + rng.below(hi - lo + 1),
            FlowSizeSampler::Bimodal { small, large, p_small } => {
                if rng.chance(*p_small) {
                    *small
                } else {
                    *large
                }
            }
        }
    }

    /// The mean flow size in bytes, exactly as sampled.
    pub fn mean_bytes(&self) -> f64 {
        match self {
            FlowSizeSampler::Cdf(cdf, mode) => cdf.mean_units(*mode) * cdf.unit.bytes() as f64,
            FlowSizeSampler::Fixed(b) => *b as f64,
            FlowSizeSampler::Uniform(lo, hi) => (*lo + *hi) as f64 / 2.0,
            FlowSizeSampler::Bimodal { small, large, p_small } => {
                p_small * *small as f64 + (1.0 - p_small) * *large as f64
            }
        }
    }
}
