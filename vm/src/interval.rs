//! Interval sets over numbers: binary64 intervals ([`Interval`]) and exact-decimal ones
//! ([`DecInterval`]), as numeric tests read them. Plain values, below the instruction set.

use crate::number::Decimal;
use std::fmt;

/// One end of an interval over binary64 values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower bound (`-inf` for none).
    pub lo: f64,
    /// Whether `lo` itself is inside.
    pub lo_inclusive: bool,
    /// Upper bound (`+inf` for none).
    pub hi: f64,
    /// Whether `hi` itself is inside.
    pub hi_inclusive: bool,
}

impl Interval {
    /// The interval holding only `x`.
    pub fn point(x: f64) -> Interval {
        Interval {
            lo: x,
            lo_inclusive: true,
            hi: x,
            hi_inclusive: true,
        }
    }

    /// Every finite number.
    pub const ALL: Interval = Interval {
        lo: f64::NEG_INFINITY,
        lo_inclusive: false,
        hi: f64::INFINITY,
        hi_inclusive: false,
    };

    /// Whether `x` lies inside (NaN never does).
    #[inline]
    pub fn contains(&self, x: f64) -> bool {
        let above = if self.lo_inclusive {
            x >= self.lo
        } else {
            x > self.lo
        };
        let below = if self.hi_inclusive {
            x <= self.hi
        } else {
            x < self.hi
        };
        above & below
    }

    /// Whether no number lies inside.
    pub fn is_empty(&self) -> bool {
        self.lo.is_nan()
            || self.hi.is_nan()
            || self.lo > self.hi
            || (self.lo == self.hi && !(self.lo_inclusive && self.hi_inclusive))
    }

    /// The intersection.
    pub fn intersect(&self, other: &Interval) -> Interval {
        let (lo, lo_inclusive) = if self.lo > other.lo {
            (self.lo, self.lo_inclusive)
        } else if other.lo > self.lo {
            (other.lo, other.lo_inclusive)
        } else {
            (self.lo, self.lo_inclusive && other.lo_inclusive)
        };
        let (hi, hi_inclusive) = if self.hi < other.hi {
            (self.hi, self.hi_inclusive)
        } else if other.hi < self.hi {
            (other.hi, other.hi_inclusive)
        } else {
            (self.hi, self.hi_inclusive && other.hi_inclusive)
        };
        Interval {
            lo,
            lo_inclusive,
            hi,
            hi_inclusive,
        }
    }
}

/// An [`Interval`] with both ends inside: an excluded end is moved inward to the next binary64
/// value, so that membership is two comparisons. It holds exactly the numbers the interval holds
/// (NaN in neither): `x > lo` is `x >= lo.next_up()` for every `x` but NaN, as long as `lo` is not
/// `+inf` — and an interval excluding a lower end of `+inf` (or an upper end of `-inf`) is empty,
/// which becomes an interval holding nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ClosedInterval {
    lo: f64,
    hi: f64,
}

impl ClosedInterval {
    /// The closed form of `interval`.
    pub(crate) fn of(interval: &Interval) -> ClosedInterval {
        if interval.is_empty() {
            return ClosedInterval {
                lo: f64::INFINITY,
                hi: f64::NEG_INFINITY,
            };
        }
        ClosedInterval {
            lo: if interval.lo_inclusive {
                interval.lo
            } else {
                interval.lo.next_up()
            },
            hi: if interval.hi_inclusive {
                interval.hi
            } else {
                interval.hi.next_down()
            },
        }
    }
}

/// Membership of a binary64 value, for the numeric tests ([`crate::exec`]), whichever form the
/// intervals are held in.
pub(crate) trait Contains {
    /// Whether `x` lies inside (NaN never does).
    fn contains(&self, x: f64) -> bool;
}

impl Contains for Interval {
    #[inline(always)]
    fn contains(&self, x: f64) -> bool {
        Interval::contains(self, x)
    }
}

impl Contains for ClosedInterval {
    #[inline(always)]
    fn contains(&self, x: f64) -> bool {
        x >= self.lo && x <= self.hi
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lo == self.hi && self.lo_inclusive && self.hi_inclusive {
            return write!(f, "{{{}}}", self.lo);
        }
        f.write_str(if self.lo_inclusive { "[" } else { "(" })?;
        if self.lo == f64::NEG_INFINITY {
            f.write_str("-inf")?
        } else {
            write!(f, "{}", self.lo)?
        }
        f.write_str(", ")?;
        if self.hi == f64::INFINITY {
            f.write_str("+inf")?
        } else {
            write!(f, "{}", self.hi)?
        }
        f.write_str(if self.hi_inclusive { "]" } else { ")" })
    }
}

/// Writes an interval set as `[a, b) ∪ {c}`.
pub fn show_intervals(set: &[Interval]) -> String {
    if set.is_empty() {
        return "∅".to_owned();
    }
    set.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ∪ ")
}

/// An interval over exact decimals (EG-33); `None` bounds are unbounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecInterval {
    /// Lower bound and whether it is inside.
    pub lo: Option<(Decimal, bool)>,
    /// Upper bound and whether it is inside.
    pub hi: Option<(Decimal, bool)>,
    /// The bounds' texts, for display.
    pub text: Box<str>,
}

impl DecInterval {
    /// Whether `x` lies inside.
    pub fn contains(&self, x: &Decimal) -> bool {
        let above = match &self.lo {
            None => true,
            Some((lo, true)) => x >= lo,
            Some((lo, false)) => x > lo,
        };
        let below = match &self.hi {
            None => true,
            Some((hi, true)) => x <= hi,
            Some((hi, false)) => x < hi,
        };
        above && below
    }
}

/// Writes a decimal interval set.
pub fn show_dec_intervals(set: &[DecInterval]) -> String {
    if set.is_empty() {
        return "∅".to_owned();
    }
    set.iter()
        .map(|d| d.text.to_string())
        .collect::<Vec<_>>()
        .join(" ∪ ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_intervals_hold_exactly_what_their_intervals_hold() {
        let ends = [
            f64::NEG_INFINITY,
            -f64::MAX,
            -1.5,
            -0.0,
            0.0,
            f64::from_bits(1),
            1.0,
            1.0f64.next_up(),
            2.0,
            f64::MAX,
            f64::INFINITY,
        ];
        let mut probes: Vec<f64> = ends
            .iter()
            .flat_map(|&x| [x, x.next_up(), x.next_down()])
            .collect();
        probes.push(f64::NAN);
        for &lo in &ends {
            for &hi in &ends {
                for (lo_inclusive, hi_inclusive) in
                    [(false, false), (false, true), (true, false), (true, true)]
                {
                    let interval = Interval {
                        lo,
                        lo_inclusive,
                        hi,
                        hi_inclusive,
                    };
                    let closed = ClosedInterval::of(&interval);
                    for &x in &probes {
                        assert_eq!(
                            Contains::contains(&closed, x),
                            interval.contains(x),
                            "{interval} at {x:e}"
                        );
                    }
                }
            }
        }
    }
}
