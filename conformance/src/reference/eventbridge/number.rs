//! Numbers (`docs/dialects/eventbridge-patterns.md` EB-16, EB-17, EB-18): which JSON numbers are
//! *comparable*, and their binary64 value.
//!
//! EB-17: a JSON number x is comparable when d, the binary64 nearest to x, is finite and x equals
//! exactly (as a decimal) the decimal Java's `Double.toString(d)` denotes (JDK 19+). That decimal
//! is the shortest one that rounds to d, the closest to d among those; when the shortest has one
//! digit, the closest to d among the one- and two-digit decimals that round to d. Rust's `{:e}`
//! prints the shortest closest digits; the one-digit case is settled here by exact decimal
//! comparison. Decimals are compared exactly, digit by digit, never through floating point.

use std::cmp::Ordering;

/// A finite decimal, exactly: `±digits × 10^exp`, `digits` without leading or trailing zeros
/// (empty for zero, which is never negative).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exp: i64,
}

/// Exponents beyond this are clamped: such numbers are 0 or infinite as a binary64, so their
/// exact value never equals a double's shortest decimal (unless the digits are all zero).
const EXP_CLAMP: i64 = 1 << 40;

impl Decimal {
    /// The decimal with these digits (ASCII `0`-`9`, possibly with leading or trailing zeros)
    /// times `10^exp`.
    fn new(negative: bool, ascii_digits: &[u8], exp: i64) -> Decimal {
        let digits: Vec<u8> = ascii_digits.iter().map(|b| b.wrapping_sub(b'0')).collect();
        let start = digits.iter().position(|&d| d != 0);
        let Some(start) = start else {
            return Decimal {
                negative: false,
                digits: Vec::new(),
                exp: 0,
            };
        };
        let end = digits
            .iter()
            .rposition(|&d| d != 0)
            .map_or(start, |e| e + 1);
        let trailing = i64::try_from(digits.len() - end).unwrap_or(0);
        Decimal {
            negative,
            digits: digits.get(start..end).unwrap_or_default().to_vec(),
            exp: exp.saturating_add(trailing),
        }
    }

    /// Reads a JSON number's text (`-?int(.frac)?([eE][+-]?exp)?`) or a scientific text printed
    /// by Rust (`1.5e-7`); `None` for anything else.
    fn parse(text: &str) -> Option<Decimal> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(i) => (rest.get(..i)?, Some(rest.get(i + 1..)?)),
            None => (rest, None),
        };
        let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let (int, frac) = match mantissa.split_once('.') {
            Some((int, frac)) if all_digits(frac) => (int, frac),
            Some(_) => return None,
            None => (mantissa, ""),
        };
        if !all_digits(int) {
            return None;
        }
        let exp = match exponent {
            None => 0,
            Some(e) => {
                let (sign, digits) = match e.strip_prefix('-') {
                    Some(d) => (-1, d),
                    None => (1, e.strip_prefix('+').unwrap_or(e)),
                };
                if !all_digits(digits) {
                    return None;
                }
                sign * digits.parse::<i64>().unwrap_or(EXP_CLAMP).min(EXP_CLAMP)
            }
        };
        let mut ascii = int.as_bytes().to_vec();
        ascii.extend_from_slice(frac.as_bytes());
        let frac_len = i64::try_from(frac.len()).unwrap_or(EXP_CLAMP);
        Some(Decimal::new(negative, &ascii, exp.saturating_sub(frac_len)))
    }

    /// `m × 10^e`.
    fn from_int(m: u64, e: i64) -> Decimal {
        Decimal::new(false, m.to_string().as_bytes(), e)
    }

    /// The position of the leading digit (`10^k ≤ |x| < 10^(k+1)`); `None` for zero.
    fn magnitude(&self) -> Option<i64> {
        let len = i64::try_from(self.digits.len()).ok()?;
        (len > 0).then(|| self.exp + len - 1)
    }

    /// Compares the absolute values.
    fn cmp_abs(&self, other: &Decimal) -> Ordering {
        match (self.magnitude(), other.magnitude()) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            // Same leading position: digit strings without trailing zeros compare as written.
            (Some(a), Some(b)) => a.cmp(&b).then_with(|| self.digits.cmp(&other.digits)),
        }
    }
}

/// The exact value of a finite, positive double, as a decimal (a double has at most 767
/// significant decimal digits; Rust prints exact digits at any precision).
fn exact(d: f64) -> Option<Decimal> {
    Decimal::parse(&format!("{d:.800e}"))
}

/// A candidate of at most two digits: `m × 10^e`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Short {
    m: u64,
    e: i64,
}

impl Short {
    fn decimal(self) -> Decimal {
        Decimal::from_int(self.m, self.e)
    }

    /// Whether this decimal rounds to `d` (Rust's reading is correctly rounded, ties to even).
    fn rounds_to(self, d: f64) -> bool {
        format!("{}e{}", self.m, self.e).parse::<f64>().ok() == Some(d)
    }
}

/// The exact midpoint of two short decimals.
fn midpoint(a: Short, b: Short) -> Decimal {
    let e = a.e.min(b.e);
    let scale = |s: Short| {
        let shift = u32::try_from(s.e - e).unwrap_or(0);
        s.m.saturating_mul(10u64.saturating_pow(shift))
    };
    Decimal::from_int((scale(a) + scale(b)).saturating_mul(5), e - 1)
}

/// The decimal Java's `Double.toString(d)` denotes (JDK 19+), for a finite `d`.
fn java_decimal(d: f64) -> Option<Decimal> {
    if d == 0.0 {
        return Some(Decimal::new(false, b"0", 0));
    }
    let negative = d < 0.0;
    let a = d.abs();
    let mut shortest = Decimal::parse(&format!("{a:e}"))?;
    if shortest.digits.len() == 1 {
        shortest = closest_of_one_and_two_digits(a, &shortest)?;
    }
    shortest.negative = negative;
    Some(shortest)
}

/// JDK 19+ `Double.toString`: when the shortest decimal that rounds to `a` has one digit, the
/// closest to `a` of the one- and two-digit decimals that round to it (the even digit on a tie).
fn closest_of_one_and_two_digits(a: f64, one: &Decimal) -> Option<Decimal> {
    let one = Short {
        m: u64::from(*one.digits.first()?),
        e: one.exp,
    };
    // `a` correctly rounded to two digits is the closest two-digit decimal; its neighbours are
    // the only others that can be nearer than the one-digit decimal once it is out of range.
    let two = format!("{a:.1e}");
    let (mantissa, exp) = two.split_once('e')?;
    let m: u64 = mantissa.replace('.', "").parse().ok()?;
    let e: i64 = exp.parse::<i64>().ok()? - 1;
    if (Short { m, e }).decimal() == one.decimal() {
        // The one-digit decimal is `a` rounded to two digits: none is closer.
        return Some(one.decimal());
    }
    let below = if m > 10 {
        Short { m: m - 1, e }
    } else {
        Short { m: 99, e: e - 1 }
    };
    let above = if m < 99 {
        Short { m: m + 1, e }
    } else {
        Short { m: 10, e: e + 1 }
    };
    let mut candidates: Vec<Short> = [one, below, Short { m, e }, above]
        .into_iter()
        .filter(|c| c.rounds_to(a))
        .collect();
    candidates.sort_by(|x, y| x.decimal().cmp_abs(&y.decimal()));
    candidates.dedup_by(|x, y| x.decimal() == y.decimal());
    let exact = exact(a)?;
    let mut best = *candidates.first()?;
    for &c in candidates.iter().skip(1) {
        // Candidates ascend, so the distance to `a` falls and then rises: move on while the
        // next one is nearer.
        match exact.cmp_abs(&midpoint(best, c)) {
            Ordering::Greater => best = c,
            Ordering::Equal if c.m % 2 == 0 && best.m % 2 == 1 => best = c,
            _ => {}
        }
    }
    Some(best.decimal())
}

/// EB-17: the binary64 value of the JSON number `text` when it is comparable (`-0` reads as
/// `+0`); `None` when it is not (or is not a JSON number).
pub(super) fn comparable(text: &str) -> Option<f64> {
    let d: f64 = text.parse().ok()?;
    if !d.is_finite() {
        return None;
    }
    let x = Decimal::parse(text)?;
    let java = java_decimal(d)?;
    // Zero of either sign is +0 (EB-17); `Decimal` has no negative zero.
    (x == java).then_some(if d == 0.0 { 0.0 } else { d })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn decimals_read_exactly() {
        assert_eq!(Decimal::parse("300"), Decimal::parse("3.0e2"));
        assert_eq!(Decimal::parse("300"), Decimal::parse("30000e-2"));
        assert_eq!(Decimal::parse("-0.0"), Decimal::parse("0"));
        assert_ne!(Decimal::parse("1"), Decimal::parse("1.00000000000000001"));
        assert_eq!(
            Decimal::parse("0e999999999999999999999"),
            Decimal::parse("0")
        );
        for bad in ["", "-", "1.", ".5", "1e", "1e+", "a"] {
            assert_eq!(Decimal::parse(bad), None, "{bad}");
        }
        let a = Decimal::parse("0.125").unwrap();
        let b = Decimal::parse("0.13").unwrap();
        assert_eq!(a.cmp_abs(&b), Ordering::Less);
        assert_eq!(b.cmp_abs(&a), Ordering::Greater);
        assert_eq!(
            Decimal::parse("1e3")
                .unwrap()
                .cmp_abs(&Decimal::parse("999").unwrap()),
            Ordering::Greater
        );
    }

    #[test]
    fn java_prints_two_digits_when_they_are_closer() {
        // JDK 19+: Double.MIN_VALUE prints 4.9E-324, twice it 9.9E-324 (Rust: 5e-324, 1e-323).
        assert_eq!(
            java_decimal(5e-324).unwrap(),
            Decimal::parse("4.9e-324").unwrap()
        );
        assert_eq!(
            java_decimal(1e-323).unwrap(),
            Decimal::parse("9.9e-324").unwrap()
        );
        assert_eq!(java_decimal(300.0).unwrap(), Decimal::parse("300").unwrap());
        assert_eq!(java_decimal(0.1).unwrap(), Decimal::parse("0.1").unwrap());
        assert_eq!(java_decimal(2e23).unwrap(), Decimal::parse("2e23").unwrap());
    }

    #[test]
    fn comparable_numbers_eb_17() {
        for text in [
            "300",
            "3.0e2",
            "3e2",
            "300.00",
            "30000e-2",
            "0.1",
            "0.30000000000000004",
            "1e308",
            "-0",
            "0",
            "0.0e5",
            "-1.5",
            "4.9e-324",
            "1.7976931348623157e308",
        ] {
            assert!(comparable(text).is_some(), "{text} is comparable");
        }
        for text in [
            "9007199254740993",
            "1.00000000000000001",
            "0.30000000000000001",
            "12345678901234567890",
            "1152921504606846976",
            "1e400",
            "-1e400",
            "1e-400",
            "5e-324",
            "3.141592653589793238",
        ] {
            assert!(comparable(text).is_none(), "{text} is not comparable");
        }
        assert_eq!(comparable("-0"), Some(0.0));
        assert_eq!(comparable("3.0e2"), Some(300.0));
        assert_eq!(
            comparable("1152921504606847000"),
            Some(1_152_921_504_606_847e3)
        );
    }
}
