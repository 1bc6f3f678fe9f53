//! Simulated time as an integer count of picoseconds.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time (or a span of it), in picoseconds.
///
/// `u64` picoseconds cover about 213 days of simulated time, far beyond any run. Arithmetic
/// that would go below zero saturates at zero in `saturating_sub`; plain `-` panics in debug
/// builds, because a negative duration is always a bug in the caller.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SimTime(pub u64);

impl SimTime {
    /// Time zero, the start of every simulation.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable time, used as "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// From picoseconds.
    #[inline]
    pub const fn from_ps(ps: u64) -> Self {
        SimTime(ps)
    }
    /// From nanoseconds.
    #[inline]
    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns * 1_000)
    }
    /// From microseconds.
    #[inline]
    pub const fn from_us(us: u64) -> Self {
        SimTime(us * 1_000_000)
    }
    /// From milliseconds.
    #[inline]
    pub const fn from_ms(ms: u64) -> Self {
        SimTime(ms * 1_000_000_000)
    }
    /// From (fractional) seconds, rounded to the nearest picosecond. For configuration input
    /// only; the core never computes with floating-point time.
    pub fn from_secs_f64(s: f64) -> Self {
        SimTime((s * 1e12).round().max(0.0) as u64)
    }
    /// From (fractional) microseconds, rounded to the nearest picosecond.
    pub fn from_us_f64(us: f64) -> Self {
        SimTime((us * 1e6).round().max(0.0) as u64)
    }
    /// Picoseconds.
    #[inline]
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Nanoseconds as a float (for reporting).
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    /// Microseconds as a float (for reporting).
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// Seconds as a float (for reporting).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
    /// `self - other`, or zero if `other` is later.
    #[inline]
    pub const fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
    /// Multiply a duration by an integer.
    #[inline]
    pub const fn mul(self, k: u64) -> SimTime {
        SimTime(self.0 * k)
    }
}

impl Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}

impl AddAssign for SimTime {
    #[inline]
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 += rhs.0;
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, rhs: SimTime) -> SimTime {
        debug_assert!(self.0 >= rhs.0, "negative SimTime: {} - {}", self.0, rhs.0);
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps >= 1_000_000_000_000 {
            write!(f, "{:.6} s", self.as_secs_f64())
        } else if ps >= 1_000_000_000 {
            write!(f, "{:.6} ms", ps as f64 / 1e9)
        } else if ps >= 1_000_000 {
            write!(f, "{:.3} us", self.as_us_f64())
        } else {
            write!(f, "{ps} ps")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_are_exact() {
        assert_eq!(SimTime::from_ns(200).as_ps(), 200_000);
        assert_eq!(SimTime::from_us(45), SimTime(45_000_000));
        assert_eq!(SimTime::from_ms(2), SimTime(2_000_000_000));
        assert_eq!(SimTime::from_secs_f64(1.5), SimTime(1_500_000_000_000));
        assert_eq!(SimTime::from_us_f64(2.5), SimTime(2_500_000));
        assert_eq!(SimTime(5).saturating_sub(SimTime(7)), SimTime::ZERO);
    }

    #[test]
    fn display_picks_a_unit() {
        assert_eq!(SimTime(12).to_string(), "12 ps");
        assert_eq!(SimTime::from_us(3).to_string(), "3.000 us");
    }
}
