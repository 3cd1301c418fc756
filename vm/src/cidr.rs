//! CIDR prefixes (sns rule 32, 40, 43a, D-5).
//!
//! [`Cidr::parse`] checks, in the order of rule 40 (the compiler has already checked that the
//! operand is a string, step 1):
//!
//! 2. exactly one `/`, else "Malformed CIDR, one '/' required" (so a bare IP is invalid);
//! 3. the mask is an integer (ASCII digits only, at least one), else "Malformed CIDR, mask bits
//!    must be an integer";
//! 4. the address is a valid IPv4 or IPv6 address (the `std::net` parsers), else "Nonstandard IP
//!    address: X";
//! 5. the mask is at most 32 (IPv4) or 128 (IPv6), else "Malformed CIDR, mask bits must be
//!    between 0 and 32" (or 128) (D-5).
//!
//! The network is stored with the mask applied, so `10.1.2.3/8` and `10.0.0.0/8` contain the same
//! addresses (they stay different blocks for equality, which follows the source text).
//!
//! [`Cidr::contains_text`] parses the value with the same `std::net` parsers. Text that is not an
//! IP address never matches (`10.0.0.256`, surrounding spaces, zone ids like `fe80::1%eth0`). IPv6
//! addresses are compared by value, whatever their text form. IPv4 values never match IPv6 blocks
//! and IPv6 values never match IPv4 blocks. An IPv4-mapped IPv6 address such as `::ffff:10.0.0.1`
//! is an IPv6 address: it matches IPv6 blocks (`::ffff:0:0/96`) and not `10.0.0.0/8`, and likewise
//! the block `::ffff:10.0.0.0/104` is an IPv6 block that `10.0.0.1` does not match.

use crate::excerpt::excerpt;
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The network of a block, mask applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Net {
    /// An IPv4 block.
    V4 {
        /// The network address, host bits cleared.
        network: u32,
        /// The mask, `bits` leading ones.
        mask: u32,
        /// The prefix length, 0..=32.
        bits: u8,
    },
    /// An IPv6 block.
    V6 {
        /// The network address, host bits cleared.
        network: u128,
        /// The mask, `bits` leading ones.
        mask: u128,
        /// The prefix length, 0..=128.
        bits: u8,
    },
}

/// A compiled CIDR block, IPv4 or IPv6.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cidr {
    source: Box<str>,
    net: Net,
}

impl fmt::Display for Cidr {
    /// Prints the block's source text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Why a CIDR was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CidrError {
    /// AWS wording ("Malformed CIDR, one '/' required", "Nonstandard IP address: X", ...).
    pub message: String,
}

impl CidrError {
    fn new(message: String) -> CidrError {
        CidrError { message }
    }
}

/// The mask with `bits` leading ones, `bits` at most 32.
fn mask_v4(bits: u8) -> u32 {
    u32::MAX
        .checked_shl(32u32.saturating_sub(u32::from(bits)))
        .unwrap_or(0)
}

/// The mask with `bits` leading ones, `bits` at most 128.
fn mask_v6(bits: u8) -> u128 {
    u128::MAX
        .checked_shl(128u32.saturating_sub(u32::from(bits)))
        .unwrap_or(0)
}

impl Cidr {
    /// Parses a CIDR block.
    ///
    /// The checks run in the order of sns rule 40; see the module documentation.
    pub fn parse(source: &str) -> Result<Cidr, CidrError> {
        // Rule 40 (2): exactly one '/'.
        let (address, mask_text) = match source.split_once('/') {
            Some((a, m)) if !m.contains('/') => (a, m),
            _ => {
                return Err(CidrError::new(
                    "Malformed CIDR, one '/' required".to_string(),
                ));
            }
        };
        // Rule 40 (3), 43a: the mask is an integer.
        if mask_text.is_empty() || !mask_text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(CidrError::new(
                "Malformed CIDR, mask bits must be an integer".to_string(),
            ));
        }
        // All digits: only overflow can fail, and an overflowing mask is too large (step 5).
        let bits: Option<u32> = mask_text.parse().ok();
        // Rule 40 (4): the address is valid.
        let (v6, value) = if let Ok(a) = address.parse::<Ipv4Addr>() {
            (false, u128::from(u32::from(a)))
        } else if let Ok(a) = address.parse::<Ipv6Addr>() {
            (true, u128::from(a))
        } else {
            return Err(CidrError::new(format!(
                "Nonstandard IP address: {}",
                excerpt(address)
            )));
        };
        // D-5: the mask fits the address family.
        let max: u8 = if v6 { 128 } else { 32 };
        let bits = match bits.and_then(|b| u8::try_from(b).ok()) {
            Some(b) if b <= max => b,
            _ => {
                return Err(CidrError::new(format!(
                    "Malformed CIDR, mask bits must be between 0 and {max}, got {}",
                    excerpt(mask_text)
                )));
            }
        };
        let net = if v6 {
            let mask = mask_v6(bits);
            Net::V6 {
                network: value & mask,
                mask,
                bits,
            }
        } else {
            let mask = mask_v4(bits);
            let network = u32::try_from(value).unwrap_or(0) & mask;
            Net::V4 {
                network,
                mask,
                bits,
            }
        };
        Ok(Cidr {
            source: source.into(),
            net,
        })
    }

    /// Whether the IP address written in `value` lies in this block (non-IP text: false).
    ///
    /// IPv4 values only match IPv4 blocks and IPv6 values only IPv6 blocks; an IPv4-mapped IPv6
    /// value (`::ffff:10.0.0.1`) is IPv6.
    pub fn contains_text(&self, value: &str) -> bool {
        match self.net {
            Net::V4 { network, mask, .. } => value
                .parse::<Ipv4Addr>()
                .is_ok_and(|a| u32::from(a) & mask == network),
            Net::V6 { network, mask, .. } => value
                .parse::<Ipv6Addr>()
                .is_ok_and(|a| u128::from(a) & mask == network),
        }
    }

    /// The block's source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether this is an IPv6 block.
    pub fn is_v6(&self) -> bool {
        matches!(self.net, Net::V6 { .. })
    }

    /// The prefix length (mask bits): 0..=32 for IPv4, 0..=128 for IPv6.
    pub fn prefix_len(&self) -> u8 {
        match self.net {
            Net::V4 { bits, .. } | Net::V6 { bits, .. } => bits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cidr(s: &str) -> Cidr {
        match Cidr::parse(s) {
            Ok(c) => c,
            Err(e) => panic!("cidr {s:?} rejected: {e}"),
        }
    }

    fn err(s: &str) -> String {
        match Cidr::parse(s) {
            Ok(_) => panic!("cidr {s:?} should be rejected"),
            Err(e) => e.message,
        }
    }

    fn yes(block: &str, values: &[&str]) {
        let c = cidr(block);
        for v in values {
            assert!(c.contains_text(v), "{block} should contain {v:?}");
        }
    }

    fn no(block: &str, values: &[&str]) {
        let c = cidr(block);
        for v in values {
            assert!(!c.contains_text(v), "{block} should not contain {v:?}");
        }
    }

    // ---- rule 40 (2): one '/' ----

    #[test]
    fn rule40_one_slash_required() {
        for s in [
            "10.0.0.1",
            "",
            "10.0.0.0/8/8",
            "//",
            "::1",
            "10.0.0.0//8",
            "abc",
        ] {
            assert_eq!(err(s), "Malformed CIDR, one '/' required", "{s}");
        }
    }

    // ---- rule 40 (3), 43a: integer mask ----

    #[test]
    fn rule40_mask_must_be_an_integer() {
        for s in [
            "10.0.0.0/",
            "10.0.0.0/x",
            "10.0.0.0/8.0",
            "10.0.0.0/-1",
            "10.0.0.0/+8",
            "10.0.0.0/ 8",
            "10.0.0.0/8 ",
            "10.0.0.0/\u{661}",
            "::/1e2",
            // Step 3 comes before step 4: a bad address with a bad mask reports the mask.
            "nonsense/abc",
        ] {
            let m = err(s);
            assert!(m.contains("mask bits must be an integer"), "{s}: {m}");
        }
    }

    // ---- rule 40 (4): valid address ----

    #[test]
    fn rule40_nonstandard_address() {
        for (s, a) in [
            ("10.0.0.256/8", "10.0.0.256"),
            ("10.0.0/8", "10.0.0"),
            ("/8", ""),
            ("abc/8", "abc"),
            (" 10.0.0.0/8", " 10.0.0.0"),
            ("2001:db8::g/32", "2001:db8::g"),
            ("fe80::1%eth0/64", "fe80::1%eth0"),
            // Step 4 comes before step 5.
            ("nonsense/999", "nonsense"),
        ] {
            assert_eq!(err(s), format!("Nonstandard IP address: {a}"), "{s}");
        }
    }

    // ---- D-5: mask range ----

    #[test]
    fn d5_mask_range() {
        for s in [
            "10.0.0.0/33",
            "10.0.0.0/128",
            "::/129",
            "::/256",
            "10.0.0.0/99999999999999",
        ] {
            let m = err(s);
            assert!(m.contains("mask"), "{s}: {m}");
            assert!(!m.contains("integer"), "{s}: {m}");
        }
        assert!(err("10.0.0.0/33").contains("between 0 and 32"));
        assert!(err("::/129").contains("between 0 and 128"));
        assert_eq!(cidr("10.0.0.0/32").prefix_len(), 32);
        assert_eq!(cidr("::/128").prefix_len(), 128);
        assert_eq!(cidr("10.0.0.0/008").prefix_len(), 8);
        assert_eq!(cidr("10.0.0.0/0").prefix_len(), 0);
    }

    // ---- containment, IPv4 ----

    #[test]
    fn v4_containment_and_boundaries() {
        yes("10.0.0.0/24", &["10.0.0.0", "10.0.0.1", "10.0.0.255"]);
        no(
            "10.0.0.0/24",
            &["10.0.1.0", "9.255.255.255", "10.0.0.256", "11.0.0.0"],
        );
        yes("192.168.1.128/25", &["192.168.1.128", "192.168.1.255"]);
        no("192.168.1.128/25", &["192.168.1.127", "192.168.2.0"]);
    }

    #[test]
    fn v4_host_bits_are_masked() {
        let c = cidr("10.1.2.3/8");
        assert!(c.contains_text("10.255.255.255"));
        assert!(c.contains_text("10.0.0.0"));
        assert!(!c.contains_text("11.0.0.0"));
        assert_eq!(c.source(), "10.1.2.3/8");
        assert_eq!(c.to_string(), "10.1.2.3/8");
    }

    #[test]
    fn v4_slash_0_and_32() {
        yes("0.0.0.0/0", &["0.0.0.0", "255.255.255.255", "10.0.0.1"]);
        no("0.0.0.0/0", &["::1", "::ffff:10.0.0.1", "not an ip", ""]);
        yes("1.2.3.4/0", &["200.1.1.1"]);
        yes("10.0.0.1/32", &["10.0.0.1"]);
        no("10.0.0.1/32", &["10.0.0.0", "10.0.0.2"]);
        yes("255.255.255.255/32", &["255.255.255.255"]);
        no("255.255.255.255/32", &["255.255.255.254"]);
    }

    #[test]
    fn non_ip_values_never_match() {
        no(
            "0.0.0.0/0",
            &[
                "10.0.0.256",
                " 10.0.0.1",
                "10.0.0.1 ",
                "10.0.0",
                "10.0.0.1/32",
                "010.0.0.1",
                "x",
            ],
        );
        no(
            "::/0",
            &[
                "",
                "::g",
                "fe80::1%eth0",
                "[::1]",
                "10.0.0.1",
                "2001:db8::/32",
            ],
        );
    }

    // ---- containment, IPv6 ----

    #[test]
    fn v6_text_forms_compared_by_value() {
        yes(
            "2001:db8:1234:1a00::/64",
            &[
                "2001:0db8:1234:1a00:0000:0000:0000:0001",
                "2001:db8:1234:1a00::1",
                "2001:DB8:1234:1A00:FFFF:FFFF:FFFF:FFFF",
                "2001:db8:1234:1a00::",
            ],
        );
        no(
            "2001:db8:1234:1a00::/64",
            &[
                "2001:db8:1234:1a01::",
                "2001:db8:1234:19ff:ffff:ffff:ffff:ffff",
            ],
        );
        yes("2001:0DB8:1234:1a00:0:0:0:0/64", &["2001:db8:1234:1a00::5"]);
    }

    #[test]
    fn v6_slash_0_and_128() {
        yes(
            "::/0",
            &[
                "::",
                "::1",
                "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                "::ffff:10.0.0.1",
            ],
        );
        no("::/0", &["10.0.0.1", "0.0.0.0"]);
        yes("::1/128", &["::1", "0:0:0:0:0:0:0:1"]);
        no("::1/128", &["::", "::2"]);
        yes(
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128",
            &["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
        );
    }

    #[test]
    fn v6_boundaries() {
        yes(
            "2001:db8::/32",
            &["2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"],
        );
        no(
            "2001:db8::/32",
            &["2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::"],
        );
        yes("2001:db8::8000/113", &["2001:db8::8000", "2001:db8::ffff"]);
        no("2001:db8::8000/113", &["2001:db8::7fff", "2001:db8::1:0"]);
    }

    #[test]
    fn families_do_not_mix() {
        // IPv4-mapped IPv6 text is IPv6 (documented decision).
        no("10.0.0.0/8", &["::ffff:10.0.0.1", "::ffff:a00:1"]);
        yes("::ffff:0:0/96", &["::ffff:10.0.0.1", "::ffff:a00:1"]);
        no("::ffff:0:0/96", &["10.0.0.1"]);
        let mapped = cidr("::ffff:10.0.0.0/104");
        assert!(mapped.is_v6());
        assert!(mapped.contains_text("::ffff:10.1.2.3"));
        assert!(!mapped.contains_text("10.1.2.3"));
        assert!(!cidr("10.0.0.0/8").is_v6());
        assert!(cidr("::/0").is_v6());
    }

    #[test]
    fn identity() {
        assert_eq!(cidr("10.0.0.0/8"), cidr("10.0.0.0/8"));
        assert_ne!(cidr("10.0.0.0/8"), cidr("10.1.0.0/8"));
        let mut set = std::collections::HashSet::new();
        set.insert(cidr("::/0"));
        assert!(set.contains(&cidr("::/0")));
    }
}
