//! Number text: the JSON number grammar (basaltic B-10, stream S9), canonical text (basaltic B-6)
//! and exact decimal comparison (Event Grid EG-33).
//!
//! - [`parse_json_number`] accepts exactly the JSON number grammar (RFC 8259 §6) and returns the
//!   value rounded to binary64, or `None` when that rounding overflows.
//! - [`canonical_number_text`] writes a binary64 the way ECMAScript `Number::toString` (radix 10)
//!   does.
//! - [`Decimal`] is the exact decimal value of JSON number text, totally ordered, so that `5`,
//!   `5.0`, `5e0` and `50e-1` are equal while `9007199254740993` and `9007199254740992` are not.

use std::cmp::Ordering;
use std::fmt;

/// The pieces of a text that matched the JSON number grammar. All slices are ASCII digits.
#[derive(Debug, Clone, Copy)]
struct JsonNumberParts<'a> {
    /// A leading `-` was present.
    negative: bool,
    /// The integer part: `0` or a digit string without a leading zero. Never empty.
    int_digits: &'a [u8],
    /// The fraction digits after `.`; empty when there is no fraction part.
    frac_digits: &'a [u8],
    /// The exponent was written with a `-` sign.
    exp_negative: bool,
    /// The exponent digits after `e`/`E` and the optional sign; empty when there is no exponent.
    exp_digits: &'a [u8],
}

/// Counts the ASCII digits at the start of `bytes`.
fn digit_run(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// Splits `bytes` after `n` bytes; `None` when `n` is out of range (it never is for our callers).
fn split(bytes: &[u8], n: usize) -> Option<(&[u8], &[u8])> {
    bytes.split_at_checked(n)
}

/// Matches the whole of `text` against `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
/// Linear in the length of `text`; never allocates.
fn scan(text: &str) -> Option<JsonNumberParts<'_>> {
    let mut rest = text.as_bytes();

    let negative = rest.first() == Some(&b'-');
    if negative {
        rest = rest.get(1..)?;
    }

    // Integer part: `0` alone, or a non-zero digit followed by digits.
    let int_len = match rest.first() {
        Some(b'0') => 1,
        Some(b'1'..=b'9') => digit_run(rest),
        _ => return None,
    };
    let (int_digits, after_int) = split(rest, int_len)?;
    rest = after_int;

    // Fraction part: `.` and at least one digit.
    let mut frac_digits: &[u8] = &[];
    if rest.first() == Some(&b'.') {
        let after_dot = rest.get(1..)?;
        let n = digit_run(after_dot);
        if n == 0 {
            return None;
        }
        let (digits, after) = split(after_dot, n)?;
        frac_digits = digits;
        rest = after;
    }

    // Exponent part: `e`/`E`, an optional sign and at least one digit.
    let mut exp_negative = false;
    let mut exp_digits: &[u8] = &[];
    if matches!(rest.first(), Some(b'e' | b'E')) {
        let mut after_e = rest.get(1..)?;
        match after_e.first() {
            Some(b'+') => after_e = after_e.get(1..)?,
            Some(b'-') => {
                exp_negative = true;
                after_e = after_e.get(1..)?;
            }
            _ => {}
        }
        let n = digit_run(after_e);
        if n == 0 {
            return None;
        }
        let (digits, after) = split(after_e, n)?;
        exp_digits = digits;
        rest = after;
    }

    if !rest.is_empty() {
        return None;
    }
    Some(JsonNumberParts {
        negative,
        int_digits,
        frac_digits,
        exp_negative,
        exp_digits,
    })
}

/// Parses `text` as a number iff the whole text matches the JSON number grammar
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` and is finite as a binary64.
///
/// The grammar is ASCII only: no surrounding white space, no leading `+`, no `.5`, `5.` or `05`,
/// no hexadecimal, no digit separators, no `NaN`/`Infinity`. The value is the text rounded to the
/// nearest binary64 (ties to even); `None` when that rounding overflows (`1e400`, `-1e400`).
/// Underflow is not an error: `1e-400` is `Some(0.0)`. `-0` is `Some(-0.0)`. Runs in time linear in
/// the length of `text`, however many digits it has.
pub fn parse_json_number(text: &str) -> Option<f64> {
    if let Some(value) = short_integer(text) {
        return Some(value);
    }
    scan(text)?;
    // The grammar is a subset of what `f64::from_str` accepts, so this only fails on a bug.
    let value = text.parse::<f64>().ok()?;
    value.is_finite().then_some(value)
}

/// The value of `text` when it is a JSON integer of at most 15 digits (`0`, `-0`, `100`, no
/// leading zero), the usual number in a policy: every such integer is a binary64 exactly, so it
/// is summed digit by digit, without the general parser. `None` for any other text, which
/// [`parse_json_number`] reads the general way (and rejects if it is not a JSON number).
fn short_integer(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || digits.len() > 15 || (digits.len() > 1 && digits.first() == Some(&b'0'))
    {
        return None;
    }
    let mut n: u64 = 0;
    for &b in digits {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        // At most 15 digits: below 10^15, far from overflowing.
        n = n * 10 + u64::from(digit);
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "below 10^15 < 2^53: every such integer is a binary64 exactly"
    )]
    let magnitude = n as f64;
    Some(if negative { -magnitude } else { magnitude })
}

/// Whether JSON number `text` is *comparable* (EventBridge EB-17): its binary64 value `d` (the
/// nearest, ties to even) is finite and `text` denotes exactly the decimal Java's
/// `Double.toString(d)` writes (JDK 19 and later: the shortest decimal that rounds to `d`; when
/// that has one digit, the closest of the two-digit ones). For normal doubles this is "`text` is
/// the shortest round-trip form of `d`, in any notation": `300`, `3.0e2`, `0.1`,
/// `0.30000000000000004` and `1e308` are comparable; `9007199254740993`, `1.00000000000000001`,
/// `1152921504606846976` (shortest form `1.152921504606847e18`), `5e-324` (Java writes
/// `4.9E-324`) and `1e400` are not. Zero of either sign is comparable; `1e-400` (which rounds to
/// zero) is not.
///
/// Returns the value (`+0.0` for zero) when comparable, `None` otherwise, and `None` for text
/// that is not a JSON number.
pub fn comparable(text: &str) -> Option<f64> {
    scan(text)?;
    let value = text.parse::<f64>().ok()?;
    is_comparable(text, value).then_some(if value == 0.0 { 0.0 } else { value })
}

/// [`comparable`] for JSON number `text` whose binary64 value `value` is already known (as a
/// bound number leaf carries it): no allocation when the text has at most 15 significant digits
/// and the value is a normal double (most numbers); otherwise the shortest form is written out
/// and compared exactly.
pub fn is_comparable(text: &str, value: f64) -> bool {
    // Most numbers: an integer of at most 15 digits is its binary64 exactly, and its shortest
    // form is itself (JSON has no leading zeros but `0`).
    let b = text.as_bytes();
    let magnitude = b.strip_prefix(b"-").unwrap_or(b);
    if !magnitude.is_empty() && magnitude.len() <= 15 && magnitude.iter().all(u8::is_ascii_digit) {
        return true;
    }
    if !value.is_finite() {
        return false;
    }
    // Significant digits: from the first non-zero digit of the mantissa to its last non-zero one.
    let mantissa = text
        .split(['e', 'E'])
        .next()
        .unwrap_or(text)
        .trim_start_matches('-');
    let digits = || mantissa.bytes().filter(u8::is_ascii_digit);
    let Some(first) = digits().position(|d| d != b'0') else {
        // Every digit is zero: the value is zero, written any way.
        return value == 0.0;
    };
    if value == 0.0 {
        // A non-zero decimal that rounds to zero (`1e-400`): Java writes `0.0`.
        return false;
    }
    let trailing = digits().rev().take_while(|&d| d == b'0').count();
    let significant = digits().count() - first - trailing;
    // At most 15 significant digits (DBL_DIG): no two such decimals round to the same normal
    // double, so the shortest form of `value` (which has at most as many digits as `text` and
    // rounds to it too) is `text`'s own value, and so is Java's (its one-digit rule only rewrites
    // the notation of a normal double).
    if significant <= 15 && value.is_normal() {
        return true;
    }
    let mut shortest = format!("{value:e}");
    let one_digit = shortest
        .split('e')
        .next()
        .is_some_and(|m| m.bytes().filter(u8::is_ascii_digit).count() == 1);
    if one_digit {
        // JDK 19+: the closest decimal of two digits (`4.9e-324` for `5e-324`); Rust's `{:.1e}`
        // rounds the exact binary value to two digits, ties to even.
        shortest = format!("{value:.1e}");
    }
    match (Decimal::parse(text), Decimal::parse(&shortest)) {
        (Some(written), Some(java)) => written == java,
        _ => false,
    }
}

/// The canonical text of a number (basaltic B-6): the shortest decimal that reads back to the
/// same binary64, written the way JavaScript's `Number.prototype.toString` writes it.
///
/// This is ECMAScript's `Number::toString(x, 10)`: `NaN`, `Infinity`, `-Infinity`; `-0` is `"0"`;
/// plain notation when `1e-7 <= |x| < 1e21` (`"100"`, `"1.5"`, `"0.000001"`), otherwise exponent
/// notation with an explicit exponent sign (`"1e+21"`, `"1e-7"`, `"-1.5e-10"`).
pub fn canonical_number_text(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if value == 0.0 {
        // Both +0 and -0.
        return "0".to_owned();
    }

    // Rust's `{:e}` writes the shortest round-trip digits: `d[.ddd]e[-]X`.
    let sci = format!("{:e}", value.abs());
    let (mantissa, exp_text) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sci_exp: i64 = exp_text.parse().unwrap_or(0);

    // In the spec's terms: s = digits, k = digit count, n = position of the decimal point.
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let n = sci_exp.saturating_add(1);

    let mut out = String::with_capacity(digits.len() + 8);
    if value < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        // Integer: the digits then n - k zeros.
        out.push_str(&digits);
        for _ in k..n {
            out.push('0');
        }
    } else if 0 < n && n <= 21 {
        // The decimal point falls inside the digits.
        let point = usize::try_from(n).unwrap_or(0);
        let (int_part, frac_part) = digits.split_at_checked(point).unwrap_or((&digits, ""));
        out.push_str(int_part);
        out.push('.');
        out.push_str(frac_part);
    } else if -6 < n && n <= 0 {
        // Small fraction: "0." then -n zeros then the digits.
        out.push_str("0.");
        for _ in n..0 {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        // Exponent notation: d[.ddd]e±X with X = |n - 1|.
        let mut chars = digits.chars();
        if let Some(first) = chars.next() {
            out.push(first);
        }
        let rest = chars.as_str();
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if n - 1 > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).unsigned_abs().to_string());
    }
    out
}

/// An exact decimal value parsed from JSON number text (Event Grid EG-33).
///
/// Normalized so that equal values have equal representations: `5`, `5.0`, `5e0`, `50e-1` and
/// `0.5e1` are the same `Decimal`, `-0` is the same as `0`, and `9007199254740993` differs from
/// `9007199254740992`. The derived `PartialEq`/`Eq` therefore agree with `Ord`, which orders by
/// numeric value. Every JSON number has one, whatever the size of its exponent
/// (`1e99999999999999999999` and `1e-99999999999999999999` compare exactly too). Parsing,
/// comparing and equality are linear in the length of the text.
///
/// Representation: the value is `sign × 0.d₁d₂…dₖ × 10^point` where `d₁…dₖ` are the significant
/// digits (no leading or trailing zeros); zero has no digits, point `0` and a positive sign.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The value is below zero (never set for zero).
    negative: bool,
    /// Significant digits as ASCII, without leading or trailing zeros; empty for zero.
    digits: Box<str>,
    /// Decimal exponent of the position just before the first significant digit (0 for zero).
    point: Exponent,
}

/// A decimal exponent of any size, in one canonical form (so that the derived `Eq` and `Hash`
/// are the value's): [`Exponent::Small`] exactly when it fits an `i64`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Exponent {
    /// An exponent in the `i64` range.
    Small(i64),
    /// An exponent beyond the `i64` range.
    Big(Box<BigExponent>),
}

/// The sign and magnitude of an exponent beyond the `i64` range.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct BigExponent {
    negative: bool,
    /// ASCII digits without leading zeros (at least 19 of them).
    magnitude: Box<str>,
}

/// Written exponents of at most this many digits are shifted in `i128` (they are below 10^36,
/// far from its limit of 1.7 × 10^38 whatever `i64` is added); longer ones are larger than any
/// `i64` shift, so shifting them never changes their sign.
const I128_DIGITS: usize = 36;

impl Exponent {
    /// The exponent `±digits + shift`, for a written exponent of any length.
    fn written_plus(negative: bool, digits: &[u8], shift: i64) -> Exponent {
        let lead = digits.iter().take_while(|&&b| b == b'0').count();
        let digits = digits.get(lead..).unwrap_or_default();
        if digits.len() <= I128_DIGITS {
            let magnitude = digits
                .iter()
                .fold(0i128, |n, &d| n * 10 + i128::from(d.wrapping_sub(b'0')));
            let value = if negative { -magnitude } else { magnitude };
            return Exponent::from_i128(value + i128::from(shift));
        }
        // |±digits| >= 10^36 > |shift|: the sign stays; the magnitude grows when the shift points
        // the same way, and shrinks otherwise.
        let mut magnitude = digits.to_vec();
        if (shift < 0) == negative {
            add_to_digits(&mut magnitude, shift.unsigned_abs());
        } else {
            subtract_from_digits(&mut magnitude, shift.unsigned_abs());
        }
        Exponent::Big(Box::new(BigExponent {
            negative,
            magnitude: String::from_utf8(magnitude)
                .unwrap_or_default()
                .into_boxed_str(),
        }))
    }

    fn from_i128(value: i128) -> Exponent {
        match i64::try_from(value) {
            Ok(small) => Exponent::Small(small),
            Err(_) => Exponent::Big(Box::new(BigExponent {
                negative: value < 0,
                magnitude: value.unsigned_abs().to_string().into_boxed_str(),
            })),
        }
    }

    /// This exponent plus `shift`.
    fn plus(&self, shift: i64) -> Exponent {
        match self {
            Exponent::Small(n) => Exponent::from_i128(i128::from(*n) + i128::from(shift)),
            Exponent::Big(big) => {
                Exponent::written_plus(big.negative, big.magnitude.as_bytes(), shift)
            }
        }
    }
}

/// Adds `amount` to the ASCII decimal number `digits` in place.
fn add_to_digits(digits: &mut Vec<u8>, mut amount: u64) {
    for d in digits.iter_mut().rev() {
        if amount == 0 {
            return;
        }
        let sum = u64::from(d.wrapping_sub(b'0')) + amount % 10;
        amount = amount / 10 + sum / 10;
        *d = b'0' + (sum % 10) as u8;
    }
    // A carry past the first digit becomes new leading digits.
    let mut head = Vec::new();
    while amount > 0 {
        head.push(b'0' + (amount % 10) as u8);
        amount /= 10;
    }
    head.reverse();
    digits.splice(0..0, head);
}

/// Subtracts `amount` from the ASCII decimal number `digits` in place (`digits` is the larger),
/// then removes the leading zeros the subtraction left.
fn subtract_from_digits(digits: &mut Vec<u8>, mut amount: u64) {
    for d in digits.iter_mut().rev() {
        if amount == 0 {
            break;
        }
        let digit = u64::from(d.wrapping_sub(b'0'));
        let take = amount % 10;
        amount /= 10;
        let value = if digit >= take {
            digit - take
        } else {
            amount += 1;
            digit + 10 - take
        };
        *d = b'0' + value as u8;
    }
    let lead = digits.iter().take_while(|&&b| b == b'0').count();
    digits.drain(..lead.min(digits.len().saturating_sub(1)));
}

impl Ord for Exponent {
    fn cmp(&self, other: &Self) -> Ordering {
        // Magnitudes without leading zeros: the longer is the larger; of equal length, byte
        // order is numeric order.
        let magnitude = |a: &BigExponent, b: &BigExponent| {
            a.magnitude
                .len()
                .cmp(&b.magnitude.len())
                .then_with(|| a.magnitude.cmp(&b.magnitude))
        };
        match (self, other) {
            (Exponent::Small(a), Exponent::Small(b)) => a.cmp(b),
            // A big exponent lies beyond every small one, on its sign's side.
            (Exponent::Small(_), Exponent::Big(b)) => {
                if b.negative {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (Exponent::Big(a), Exponent::Small(_)) => {
                if a.negative {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (Exponent::Big(a), Exponent::Big(b)) => match (a.negative, b.negative) {
                (false, false) => magnitude(a, b),
                (true, true) => magnitude(b, a),
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
            },
        }
    }
}

impl PartialOrd for Exponent {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Exponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exponent::Small(n) => write!(f, "{n}"),
            Exponent::Big(big) => {
                if big.negative {
                    f.write_str("-")?;
                }
                f.write_str(&big.magnitude)
            }
        }
    }
}

impl Decimal {
    /// Parses JSON number text exactly. `None` when `text` is not a JSON number.
    ///
    /// Accepts exactly the grammar of [`parse_json_number`], at any size: there is no overflow to
    /// infinity here (`1e400` is a valid, exact `Decimal`), and no limit on the exponent
    /// (`1e99999999999999999999`, `1e-99999999999999999999`).
    pub fn parse(text: &str) -> Option<Decimal> {
        let parts = scan(text)?;

        // The significant digits of int ++ frac, and the position of the first one relative to
        // the decimal point (`0.d₁d₂… × 10^first_point` before the written exponent).
        let int_lead = parts.int_digits.iter().take_while(|&&b| b == b'0').count();
        let (first_point, mut all_digits) = match parts.int_digits.get(int_lead..) {
            Some(sig_int) if !sig_int.is_empty() => {
                let mut all = Vec::with_capacity(sig_int.len() + parts.frac_digits.len());
                all.extend_from_slice(sig_int);
                all.extend_from_slice(parts.frac_digits);
                (i64::try_from(sig_int.len()).ok()?, all)
            }
            _ => {
                // The integer part is `0`: the first non-zero fraction digit leads.
                let frac_lead = parts.frac_digits.iter().take_while(|&&b| b == b'0').count();
                let sig_frac = parts.frac_digits.get(frac_lead..).unwrap_or_default();
                if sig_frac.is_empty() {
                    return Some(Decimal::zero());
                }
                (-i64::try_from(frac_lead).ok()?, sig_frac.to_vec())
            }
        };
        let trailing = all_digits.iter().rev().take_while(|&&b| b == b'0').count();
        all_digits.truncate(all_digits.len().saturating_sub(trailing));

        let point = Exponent::written_plus(parts.exp_negative, parts.exp_digits, first_point);
        let digits = String::from_utf8(all_digits).ok()?.into_boxed_str();
        Some(Decimal {
            negative: parts.negative,
            digits,
            point,
        })
    }

    /// The value zero.
    pub fn zero() -> Decimal {
        Decimal {
            negative: false,
            digits: Box::from(""),
            point: Exponent::Small(0),
        }
    }

    /// The value is zero (`0`, `-0`, `0.000e5`, ...).
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// The value is below zero (`-0` is not).
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// The binary64 equal to this decimal, only when one represents it exactly.
    ///
    /// Conservative: returns `Some(x)` exactly when the value is zero, or when, writing the value
    /// as `m / 10^j` with `j` the number of digits after the decimal point (at least 0) and `m`
    /// an integer, `|m|` fits a `u64`, `j <= 27`, and `m / 5^j` is an integer of magnitude at most
    /// 2^53. Every value it accepts is exactly `x` (`0.5`, `-2.75`, `9007199254740992`,
    /// `1e15`); it returns `None` for values that are not exact in binary64 (`0.1`,
    /// `9007199254740993`) and also for some that are but fall outside that rule (`2^60`, `2^-30`).
    /// Zero gives `+0.0`.
    pub fn as_f64_exact(&self) -> Option<f64> {
        if self.is_zero() {
            return Some(0.0);
        }
        // value = digits × 10^scale. An exponent beyond the i64 range puts the value far outside
        // what the rule admits (an integer up to 2^53, at most 27 decimal places).
        let Exponent::Small(point) = self.point else {
            return None;
        };
        let count = i64::try_from(self.digits.len()).ok()?;
        let scale = point.checked_sub(count)?;

        let mut significand: u64 = 0;
        for b in self.digits.bytes() {
            significand = significand
                .checked_mul(10)?
                .checked_add(u64::from(b.wrapping_sub(b'0')))?;
        }

        exact_binary64(significand, scale, self.negative)
    }

    /// Compares magnitudes, ignoring signs.
    fn cmp_magnitude(&self, other: &Self) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            // Both non-zero: the leading digit's position decides, then the digits. With no
            // trailing zeros, a strict prefix is the smaller value, as byte order says.
            (false, false) => self
                .point
                .cmp(&other.point)
                .then_with(|| self.digits.as_bytes().cmp(other.digits.as_bytes())),
        }
    }
}

impl Default for Decimal {
    fn default() -> Self {
        Decimal::zero()
    }
}

impl fmt::Display for Decimal {
    /// Writes the value in normalized scientific form: `0`, `5`, `-1.25e-3`, `1e400`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        if self.negative {
            f.write_str("-")?;
        }
        let mut chars = self.digits.chars();
        if let Some(first) = chars.next() {
            write!(f, "{first}")?;
        }
        let rest = chars.as_str();
        if !rest.is_empty() {
            write!(f, ".{rest}")?;
        }
        let exponent = self.point.plus(-1);
        if exponent != Exponent::Small(0) {
            write!(f, "e{exponent}")?;
        }
        Ok(())
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.negative, other.negative) {
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
        }
    }
}

/// 2^53: every integer up to it is exactly a binary64.
const MAX_EXACT: u64 = 1 << 53;

/// `±significand × 10^scale` as a binary64, when that value is exactly representable by the
/// conservative rule of [`Decimal::as_f64_exact`] (an integer up to 2^53, or at most 27 decimal
/// places whose odd part fits 2^53); `None` otherwise. Shared by the decimal fast path of the VM.
pub(crate) fn exact_binary64(significand: u64, scale: i64, negative: bool) -> Option<f64> {
    let magnitude = if scale >= 0 {
        let integer = 10u64
            .checked_pow(u32::try_from(scale).ok()?)
            .and_then(|p| significand.checked_mul(p))?;
        if integer > MAX_EXACT {
            return None;
        }
        // Exact: an integer no larger than 2^53.
        integer as f64
    } else {
        let places = u32::try_from(scale.unsigned_abs()).ok()?;
        if places > 27 {
            return None;
        }
        let five_pow = 5u64.checked_pow(places)?;
        if !significand.is_multiple_of(five_pow) {
            return None;
        }
        let odd_part = significand / five_pow;
        if odd_part > MAX_EXACT {
            return None;
        }
        // value = odd_part / 2^places; both conversions and the division are exact.
        odd_part as f64 / (1u64 << places) as f64
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// The binary64 value of JSON number `text` when it is exactly that value, without allocating.
///
/// The same conservative rule as [`Decimal::as_f64_exact`]: with the value written
/// `m × 10^e` (`m` an integer without trailing zeros), `Some` when `m` fits a `u64`, and either
/// `e >= 0` and `m × 10^e <= 2^53`, or `e < 0`, `-e <= 27`, `5^-e` divides `m` and
/// `m / 5^-e <= 2^53`. `None` for everything else (the caller then compares exactly).
pub(crate) fn exact_f64(text: &str) -> Option<f64> {
    let mut bytes = text.bytes().peekable();
    let negative = bytes.next_if_eq(&b'-').is_some();
    let mut significand: u64 = 0;
    let mut scale: i64 = 0;
    let mut digits = 0usize;
    let mut push = |significand: &mut u64, d: u8| -> Option<()> {
        digits += 1;
        *significand = significand
            .checked_mul(10)?
            .checked_add(u64::from(d.wrapping_sub(b'0')))?;
        Some(())
    };
    while let Some(d) = bytes.next_if(u8::is_ascii_digit) {
        push(&mut significand, d)?;
    }
    if bytes.next_if_eq(&b'.').is_some() {
        while let Some(d) = bytes.next_if(u8::is_ascii_digit) {
            push(&mut significand, d)?;
            scale = scale.checked_sub(1)?;
        }
    }
    if bytes.next_if(|&b| b == b'e' || b == b'E').is_some() {
        let exp_negative = bytes.next_if(|&b| b == b'+' || b == b'-') == Some(b'-');
        let mut exponent: i64 = 0;
        while let Some(d) = bytes.next_if(u8::is_ascii_digit) {
            exponent = exponent
                .checked_mul(10)?
                .checked_add(i64::from(d.wrapping_sub(b'0')))?;
        }
        scale = scale.checked_add(if exp_negative { -exponent } else { exponent })?;
    }
    if bytes.next().is_some() || digits == 0 {
        return None;
    }
    if significand == 0 {
        return Some(0.0);
    }
    while significand.is_multiple_of(10) {
        significand /= 10;
        scale = scale.checked_add(1)?;
    }
    exact_binary64(significand, scale, negative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eg_33_exact_f64_agrees_with_decimal() {
        let texts = "0 -0 5 5.0 5e0 50e-1 0.5 -2.75 1e15 9007199254740992 9007199254740993 0.1 \
            1e400 1E-400 123456789012345678901234567890 0.000000000000000000000000000001 2.5E+3 \
            -0.0e5 1e-27 3814697265625e-27 1e-28 18446744073709551615 18446744073709551616";
        for text in texts.split_whitespace() {
            let d = Decimal::parse(text).unwrap();
            assert_eq!(exact_f64(text), d.as_f64_exact(), "{text}");
        }
        assert_eq!(exact_f64("9007199254740993"), None);
        assert_eq!(exact_f64("5e0"), Some(5.0));
    }
    use std::time::{Duration, Instant};

    fn dec(text: &str) -> Decimal {
        Decimal::parse(text).unwrap_or_else(|| panic!("{text:?} should parse"))
    }

    #[test]
    fn eb_17_comparable_numbers() {
        for yes in [
            "300",
            "3.0e2",
            "3e2",
            "300.00",
            "30000e-2",
            "0.1",
            "0.30000000000000004",
            "1e308",
            "-1e308",
            "3.141592653589793",
            "9007199254740992",
            "1.7976931348623157e308",
            "0",
            "-0",
            "0.0e5",
            "4.9e-324",
            "2e23",
            "8.41e21",
            "123456789012345",
            "-5",
            "1152921504606847e3",
            "2.2250738585072014e-308",
        ] {
            assert!(comparable(yes).is_some(), "{yes} is comparable");
        }
        for no in [
            "9007199254740993",
            "1.00000000000000001",
            "0.30000000000000001",
            "12345678901234567890",
            "1152921504606846976",
            "1e400",
            "-1e400",
            "1e-400",
            "5e-324",
            "3.1415926535897932",
            "123456789012345678",
            "not a number",
        ] {
            assert!(comparable(no).is_none(), "{no} is not comparable");
        }
        assert_eq!(comparable("-0").map(f64::to_bits), Some(0.0f64.to_bits()));
        assert_eq!(comparable("3.0e2"), Some(300.0));
        // The fast path agrees with the exact comparison on short texts.
        for text in ["1.5", "123.25", "1e-300", "-7.0e10", "99999999999999.9"] {
            let value = text.parse::<f64>().unwrap();
            let shortest = format!("{value:e}");
            assert_eq!(
                is_comparable(text, value),
                Decimal::parse(text) == Decimal::parse(&shortest),
                "{text}"
            );
        }
    }

    /// The short-integer path gives what the general parser gives, sign of zero included, and
    /// leaves every other text (leading zeros, 16 digits, fractions, signs) to it.
    #[test]
    fn short_integers_read_as_the_general_parser_reads_them() {
        let texts = [
            "0",
            "-0",
            "7",
            "-7",
            "100",
            "1000",
            "-1000",
            "999999999999999",
            "-999999999999999",
            "1000000000000000",
            "9007199254740993",
            "01",
            "-01",
            "00",
            "-",
            "",
            "1a",
            "1.0",
            "1e3",
            "+1",
            " 1",
            "1 ",
            "--1",
            "12345678901234567890",
        ];
        for text in texts {
            let general = scan(text).and_then(|_| text.parse::<f64>().ok());
            let got = parse_json_number(text);
            assert_eq!(
                got.map(f64::to_bits),
                general.filter(|v| v.is_finite()).map(f64::to_bits),
                "{text:?}"
            );
            if let Some(short) = short_integer(text) {
                assert_eq!(Some(short.to_bits()), general.map(f64::to_bits), "{text:?}");
            }
        }
        assert_eq!(
            short_integer("1000000000000000"),
            None,
            "16 digits go the general way"
        );
        assert_eq!(short_integer("01"), None);
        assert_eq!(short_integer("-"), None);
    }

    #[test]
    fn parse_json_number_accepts_the_grammar() {
        let cases: &[(&str, f64)] = &[
            ("5", 5.0),
            ("-5", -5.0),
            ("5.0", 5.0),
            ("0", 0.0),
            ("-0", 0.0),
            ("1e3", 1000.0),
            ("1E3", 1000.0),
            ("1e+3", 1000.0),
            ("1.5e-3", 0.0015),
            ("50e-1", 5.0),
            ("0.5", 0.5),
            ("-0.0e-0", 0.0),
            ("123456789", 123_456_789.0),
            ("1e-400", 0.0),
            ("0e99999999999999999999999", 0.0),
            ("1.7976931348623157e308", f64::MAX),
        ];
        for &(text, want) in cases {
            assert_eq!(parse_json_number(text), Some(want), "{text:?}");
        }
        let neg_zero = parse_json_number("-0").unwrap();
        assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
        assert!(parse_json_number("0").unwrap().is_sign_positive());
    }

    #[test]
    fn parse_json_number_rejects_everything_else() {
        let cases = [
            " 5",
            "5 ",
            "\t5",
            "5\n",
            "+5",
            ".5",
            "5.",
            "05",
            "00",
            "-05",
            "0x10",
            "1_000",
            "1,000",
            "NaN",
            "nan",
            "inf",
            "Infinity",
            "-inf",
            "-Infinity",
            "",
            "-",
            "1e",
            "1e+",
            "1e-",
            "e3",
            "E3",
            "--5",
            "-+5",
            "1.2.3",
            "1e3e3",
            "1e3.5",
            "1.e3",
            "1e400",
            "-1e400",
            "1.8e308",
            "\u{0665}",
            "5\u{0665}",
            "\u{FF15}",
            "5\u{00A0}",
            "\u{FEFF}5",
            "١",
            "0.",
            "-.5",
            "1ee3",
            "0b1",
            "5f",
            "5d",
        ];
        for text in cases {
            assert_eq!(parse_json_number(text), None, "{text:?}");
            if !matches!(text, "1e400" | "-1e400" | "1.8e308") {
                assert_eq!(Decimal::parse(text), None, "{text:?}");
            }
        }
    }

    #[test]
    fn parse_json_number_long_inputs_are_fast() {
        let huge = format!("1{}", "0".repeat(10_000));
        assert_eq!(parse_json_number(&huge), None);
        let tiny = format!("0.{}", "1234567890".repeat(1_000));
        let got = parse_json_number(&tiny).unwrap();
        assert!((got - 0.123_456_789).abs() < 1e-9);
        let tiny_exp = format!("0.{}1", "0".repeat(10_000));
        assert_eq!(parse_json_number(&tiny_exp), Some(0.0));
        let mixed = format!("-{}.{}e-4990", "9".repeat(5_000), "9".repeat(5_000));
        assert_eq!(parse_json_number(&mixed), Some(-1e10));
        let long_int = format!("{}e-9990", "1".repeat(10_000));
        assert!(parse_json_number(&long_int).unwrap() > 1.0);
        // Linear in the digits: 4 times as many cost at most about 4 times as much.
        let ratio = growth(250_000, |n| {
            let huge = format!("1{}", "0".repeat(n));
            let half = n / 2;
            let mixed = format!("-{}.{}e-{}", "9".repeat(half), "9".repeat(half), half - 10);
            for _ in 0..2 {
                assert_eq!(parse_json_number(&huge), None);
                assert!(parse_json_number(&mixed).is_some());
            }
        });
        assert!(
            ratio < 8.0,
            "4 times the digits took {ratio:.1} times as long"
        );
    }

    /// How the cost of `work(n)` grows from `n` to `4n`: the fastest of 7 runs at each size,
    /// divided. Linear work gives about 4 and quadratic about 16, so tests bound it by 8, which a
    /// loaded machine (which only ever slows a run down) does not reach by itself. The sizes are
    /// chosen so that the data outgrows the first-level caches at both, or the step from cache to
    /// memory would look like growth.
    /// `cost(4n) / cost(n)`, each the fastest of its runs; the two sizes alternate, at least 7
    /// runs each and more for 300 ms, since a loaded machine preempts a run that outlasts the
    /// scheduler's slice more often than not (as `conformance/src/growth.rs` measures).
    fn growth(n: usize, work: impl Fn(usize)) -> f64 {
        // The thread's CPU time: time spent preempted by other processes does not count (as
        // `conformance/src/growth.rs` explains).
        let timed = |n: usize| match cpu_time::ThreadTime::try_now() {
            Ok(start) => {
                work(n);
                start.try_elapsed().unwrap_or(Duration::MAX)
            }
            Err(_) => {
                let start = Instant::now();
                work(n);
                start.elapsed()
            }
        };
        let started = Instant::now();
        let (mut small, mut large) = (Duration::MAX, Duration::MAX);
        for done in 1..=500 {
            small = small.min(timed(n));
            large = large.min(timed(4 * n));
            if done >= 7 && started.elapsed() >= Duration::from_millis(300) {
                break;
            }
        }
        large.as_secs_f64() / small.as_secs_f64().max(1e-9)
    }

    #[test]
    fn canonical_text_matches_ecmascript() {
        let cases: &[(f64, &str)] = &[
            (100.0, "100"),
            (1e2, "100"),
            (1.5, "1.5"),
            (-1.5, "-1.5"),
            (0.0, "0"),
            (-0.0, "0"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (123_456_789_012_345_680_000.0, "123456789012345680000"),
            (0.1 + 0.2, "0.30000000000000004"),
            (5e-324, "5e-324"),
            (-5e-324, "-5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (-1.5e-10, "-1.5e-10"),
            (1.5e21, "1.5e+21"),
            (1.2345e-7, "1.2345e-7"),
            (1.2345e-6, "0.0000012345"),
            (123.456, "123.456"),
            (0.5, "0.5"),
            (1.0, "1"),
            (-1.0, "-1"),
            (9_007_199_254_740_993.0, "9007199254740992"),
            (2e-7, "2e-7"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for &(value, want) in cases {
            assert_eq!(canonical_number_text(value), want, "{value:e}");
        }
    }

    #[test]
    fn canonical_text_round_trips() {
        let mut x: f64 = 1.234_567_890_123_46e-310;
        while x < 1e308 {
            for v in [x, -x, x * 3.0, x / 7.0] {
                let text = canonical_number_text(v);
                assert_eq!(text.parse::<f64>().unwrap(), v, "{text}");
            }
            x *= 13.7;
        }
    }

    #[test]
    fn decimal_equalities() {
        for text in [
            "5.0", "5e0", "50e-1", "0.5e1", "5.000", "500e-2", "0.0005e4",
        ] {
            assert_eq!(dec(text), dec("5"), "{text}");
            assert_eq!(dec(text).cmp(&dec("5")), Ordering::Equal);
        }
        assert_eq!(dec("-0"), dec("0"));
        assert_eq!(dec("-0.000e-7"), Decimal::zero());
        assert_eq!(dec("0e99999999999999999999"), Decimal::zero());
        assert!(!dec("-0").is_negative());
        assert_ne!(dec("9007199254740993"), dec("9007199254740992"));
        assert_ne!(dec("5"), dec("-5"));
        assert_ne!(dec("1e400"), dec("1e401"));
        assert_eq!(dec("1e400"), dec("10e399"));
    }

    #[test]
    fn decimal_ordering() {
        let ordered = [
            "-1e300",
            "-1",
            "-0.5",
            "-1e-30",
            "0",
            "1e-30",
            "0.1",
            "0.12",
            "0.123",
            "1",
            "9007199254740992",
            "9007199254740993",
            "10000000000000000",
            "1e300",
            "1e400",
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(dec(a).cmp(&dec(b)), i.cmp(&j), "{a} vs {b}");
                assert_eq!(dec(a) == dec(b), i == j, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn decimal_rejects() {
        assert_eq!(Decimal::parse("01"), None);
        assert_eq!(Decimal::parse("1e"), None);
        assert_eq!(Decimal::parse("1e+-5"), None);
    }

    #[test]
    fn decimal_exponents_of_any_size() {
        // Beyond i64 (written, or once shifted by the leading digit's position), beyond i128,
        // and 10,000 digits long: each parses, prints back, and orders by value.
        let long = format!("1{}", "0".repeat(10_000));
        let ordered = [
            format!("-1e{long}"),
            "-1e99999999999999999999".to_owned(),
            "-1e9223372036854775807".to_owned(),
            "-1".to_owned(),
            format!("-1e-{long}"),
            "0".to_owned(),
            format!("1e-{long}"),
            "1e-170141183460469231731687303715884105729".to_owned(),
            "1e-99999999999999999999".to_owned(),
            "1e-9223372036854775809".to_owned(),
            "1e-9223372036854775808".to_owned(),
            "1e-400".to_owned(),
            "1".to_owned(),
            "1e400".to_owned(),
            "1e9223372036854775807".to_owned(),
            "9.99e9223372036854775807".to_owned(),
            "1e9223372036854775808".to_owned(),
            "1e99999999999999999998".to_owned(),
            "1e99999999999999999999".to_owned(),
            "1e170141183460469231731687303715884105728".to_owned(),
            format!("1e{long}"),
            format!("1.5e{long}"),
        ];
        for (i, a) in ordered.iter().enumerate() {
            let d = dec(a);
            assert_eq!(dec(&d.to_string()), d, "{a} prints as {d}");
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(d.cmp(&dec(b)), i.cmp(&j), "{a} vs {b}");
            }
        }
        // Equal values written with different exponents are one Decimal, at every size.
        for (a, b) in [
            ("1e99999999999999999999", "10e99999999999999999998"),
            ("1e99999999999999999999", "0.00001e100000000000000000004"),
            ("1e-99999999999999999999", "0.01e-99999999999999999997"),
            ("1e9223372036854775807", "0.1e9223372036854775808"),
            ("1e-9223372036854775808", "10e-9223372036854775809"),
            (
                "1e1000000000000000000000000000000000000000",
                "100000000000000000000e999999999999999999999999999999999999980",
            ),
            (
                "1e-1000000000000000000000000000000000000000",
                "0.00000000000000000001e-999999999999999999999999999999999999980",
            ),
        ] {
            assert_eq!(dec(a), dec(b), "{a} = {b}");
            assert_eq!(dec(a).to_string(), dec(b).to_string());
        }
        assert_eq!(
            dec("1e99999999999999999999").to_string(),
            "1e99999999999999999999"
        );
        assert_eq!(
            dec("-12e-99999999999999999999").to_string(),
            "-1.2e-99999999999999999998"
        );
        assert_eq!(dec("0e99999999999999999999"), Decimal::zero());
        assert_eq!(dec("1e99999999999999999999").as_f64_exact(), None);
        assert_eq!(dec("1e-99999999999999999999").as_f64_exact(), None);
    }

    #[test]
    fn digit_arithmetic_carries_and_borrows() {
        let run = |digits: &str, amount: u64, add: bool| {
            let mut v = digits.as_bytes().to_vec();
            if add {
                add_to_digits(&mut v, amount);
            } else {
                subtract_from_digits(&mut v, amount);
            }
            String::from_utf8(v).unwrap()
        };
        assert_eq!(run("999", 1, true), "1000");
        assert_eq!(run("1", u64::MAX, true), "18446744073709551616");
        assert_eq!(run("12345", 0, true), "12345");
        assert_eq!(run("1000", 1, false), "999");
        assert_eq!(run("18446744073709551616", u64::MAX, false), "1");
        assert_eq!(
            run("50000000000000000000", 1, false),
            "49999999999999999999"
        );
    }

    #[test]
    fn decimal_long_inputs_compare_in_linear_time() {
        let a = dec(&format!("1{}", "0".repeat(10_000)));
        let b = dec(&format!("{}1", "9".repeat(10_000)));
        let c = dec(&format!("1{}.{}1", "0".repeat(10_000), "0".repeat(10_000)));
        let d = dec(&format!("0.{}1", "0".repeat(10_000)));
        let e = dec(&format!("1e{}", 10_000));
        assert!(b > a && c > a && e == a && d > Decimal::zero() && d < dec("1e-9999"));
        // Parsing and comparing numbers of n digits at n and 4n ([`growth`]).
        let ratio = growth(250_000, |n| {
            let a = dec(&format!("1{}", "0".repeat(n)));
            let b = dec(&format!("{}1", "9".repeat(n)));
            let c = dec(&format!("1{}.{}1", "0".repeat(n), "0".repeat(n)));
            for _ in 0..200 {
                assert!(c > a);
                assert!(c != b);
            }
        });
        assert!(
            ratio < 8.0,
            "4 times the digits took {ratio:.1} times as long"
        );
    }

    #[test]
    fn decimal_display() {
        assert_eq!(dec("0").to_string(), "0");
        assert_eq!(dec("-0.00").to_string(), "0");
        assert_eq!(dec("50e-1").to_string(), "5");
        assert_eq!(dec("-0.00125").to_string(), "-1.25e-3");
        assert_eq!(dec("1e400").to_string(), "1e400");
        assert_eq!(dec("120").to_string(), "1.2e2");
    }

    #[test]
    fn decimal_as_f64_exact() {
        let exact: &[(&str, f64)] = &[
            ("0", 0.0),
            ("-0", 0.0),
            ("5", 5.0),
            ("-5.0", -5.0),
            ("0.5", 0.5),
            ("-2.75", -2.75),
            ("1e15", 1e15),
            ("9007199254740992", 9_007_199_254_740_992.0),
            ("-9007199254740992", -9_007_199_254_740_992.0),
            ("0.0000000298023223876953125", 2f64.powi(-25)),
            ("123.125", 123.125),
        ];
        for &(text, want) in exact {
            assert_eq!(dec(text).as_f64_exact(), Some(want), "{text}");
        }
        for text in [
            "0.1",
            "9007199254740993",
            "1e300",
            "1e-30",
            "1152921504606846976", // 2^60: exact in binary64 but outside the rule
            "0.000000000931322574615478515625", // 2^-30, likewise
            "3.3",
        ] {
            assert_eq!(dec(text).as_f64_exact(), None, "{text}");
        }
    }
}
