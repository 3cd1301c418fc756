//! Numbers for the reference interpreters, written the plain way (no code shared with the VM's
//! `number` module): the JSON number grammar of basaltic B-10, sns rule 6 and stream S9, and
//! JavaScript's number-to-text of basaltic B-6.

/// The whole text is a JSON number (checked character class by character class) and finite as a
/// binary64 (B-10, rule 6, S9).
pub fn parse_number(text: &str) -> Option<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied();
    if at(i) == Some('-') {
        i += 1;
    }
    match at(i) {
        Some('0') => i += 1,
        Some('1'..='9') => {
            while matches!(at(i), Some('0'..='9')) {
                i += 1;
            }
        }
        _ => return None,
    }
    if at(i) == Some('.') {
        i += 1;
        if !matches!(at(i), Some('0'..='9')) {
            return None;
        }
        while matches!(at(i), Some('0'..='9')) {
            i += 1;
        }
    }
    if matches!(at(i), Some('e' | 'E')) {
        i += 1;
        if matches!(at(i), Some('+' | '-')) {
            i += 1;
        }
        if !matches!(at(i), Some('0'..='9')) {
            return None;
        }
        while matches!(at(i), Some('0'..='9')) {
            i += 1;
        }
    }
    if i != chars.len() {
        return None;
    }
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// B-6: how JavaScript prints a number. Rust's `{}` prints the shortest round-trip digits without
/// an exponent; JavaScript uses that form for 1e-7 < |x| < 1e21 and exponent form otherwise.
pub fn js_number_text(x: f64) -> String {
    if x == 0.0 {
        return "0".to_owned();
    }
    let magnitude = x.abs();
    if (1e-7..1e21).contains(&magnitude) && magnitude != 1e-7 {
        return format!("{x}");
    }
    // Exponent form: Rust writes `1e21`, `1.5e-7`; JavaScript writes `1e+21`, `1.5e-7`.
    let s = format!("{x:e}");
    match s.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_text_matches_javascript() {
        for (x, s) in [
            (100.0, "100"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-0.0, "0"),
            (1.5, "1.5"),
            (-2.5e-8, "-2.5e-8"),
        ] {
            assert_eq!(js_number_text(x), s, "{x}");
        }
    }

    #[test]
    fn number_grammar() {
        assert_eq!(parse_number("149.50"), Some(149.5));
        for bad in ["", "+1", "01", ".5", "5.", "1e", " 1", "1e400", "NaN"] {
            assert_eq!(parse_number(bad), None, "{bad}");
        }
    }
}
