//! IP addresses and address blocks as EventBridge patterns read them (`docs/dialects/
//! eventbridge-patterns.md` EB-13, EB-27..EB-29).
//!
//! These rules are event-ruler's (its `CIDR` class over `java.net.InetAddress`), which differ from
//! the `std::net` reading of [`crate::cidr`] (sns D-5):
//!
//! - **Address text** (EB-28), the same for pattern operands and event strings. IPv4: exactly four
//!   dot-separated runs of ASCII digits, each at most 255 in decimal (leading zeros allowed and
//!   read as decimal: `010.0.0.1` is 10.0.0.1). IPv6: only hex digits and `:`, with at least one
//!   `:`; eight groups, or fewer with one `::` standing for one or more zero groups; each group one
//!   or more hex digits of value at most FFFF; case-insensitive; no embedded IPv4, zone,
//!   brackets or spaces. An IPv6 address in `::ffff:0:0/96` *is* the IPv4 address of its last 32
//!   bits (`::ffff:a00:1` is 10.0.0.1), as Java's `InetAddress` makes it.
//! - **Blocks** (EB-27): `ADDR/BITS`, split on `/` as Java's `String.split` splits (trailing empty
//!   parts dropped, so `10.0.0.0/8/` is accepted); BITS an optional sign and decimal digits
//!   fitting 32 bits, not negative; an IPv4 mask at most 31, an IPv6 mask at most 127 (`/32` and
//!   `/128` are invalid). Host bits are ignored. The errors come in that order, with
//!   event-ruler's wording ([`Block::cidr`]).
//! - **Matching** (EB-29, EB-13): a block holds a string that is an address of its family inside
//!   it; other strings and the other family never match. A pattern string that is itself an
//!   address ([`Block::address`]) is the block of that one address.

use crate::excerpt::excerpt;
use std::fmt;

/// An IP address (EB-28): IPv4-mapped IPv6 addresses are IPv4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Address {
    /// An IPv4 address.
    V4(u32),
    /// An IPv6 address outside `::ffff:0:0/96`.
    V6(u128),
}

/// Whether `text` looks like an address to event-ruler (`[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+` or
/// `[0-9a-fA-F:]*:[0-9a-fA-F:]*`, whole text): shaped text that is no address is "Invalid",
/// other text "Nonstandard" (EB-31).
fn shaped(text: &str) -> bool {
    let b = text.as_bytes();
    let v4 = {
        let mut runs = 0;
        let mut ok = true;
        for run in b.split(|&c| c == b'.') {
            runs += 1;
            ok &= !run.is_empty() && run.iter().all(u8::is_ascii_digit);
        }
        ok && runs == 4
    };
    v4 || (b.contains(&b':') && b.iter().all(|&c| c == b':' || c.is_ascii_hexdigit()))
}

/// Parses four dot-separated decimal runs, each at most 255 (leading zeros allowed).
fn parse_v4(text: &str) -> Option<u32> {
    let mut value: u32 = 0;
    let mut runs = 0;
    for run in text.split('.') {
        runs += 1;
        if runs > 4 || run.is_empty() {
            return None;
        }
        let mut n: u32 = 0;
        for c in run.bytes() {
            if !c.is_ascii_digit() {
                return None;
            }
            n = n * 10 + u32::from(c - b'0');
            if n > 255 {
                return None;
            }
        }
        value = value << 8 | n;
    }
    (runs == 4).then_some(value)
}

/// Parses the groups of one side of `::` (or the whole text): `None` for an empty group or one
/// over FFFF. An empty side has no groups.
fn groups(side: &str) -> Option<Vec<u16>> {
    if side.is_empty() {
        return Some(Vec::new());
    }
    side.split(':')
        .map(|g| {
            if g.is_empty() {
                return None;
            }
            let mut n: u32 = 0;
            for c in g.bytes() {
                n = n << 4 | char::from(c).to_digit(16)?;
                if n > 0xFFFF {
                    return None;
                }
            }
            u16::try_from(n).ok()
        })
        .collect()
}

/// Parses IPv6 text as EB-28 reads it (hex digits and colons only).
fn parse_v6(text: &str) -> Option<u128> {
    if !text.contains(':') || !text.bytes().all(|c| c == b':' || c.is_ascii_hexdigit()) {
        return None;
    }
    let all: Vec<u16> = match text.split_once("::") {
        Some((head, tail)) => {
            if tail.contains("::") {
                return None;
            }
            let (head, tail) = (groups(head)?, groups(tail)?);
            // `::` stands for at least one zero group.
            if head.len() + tail.len() > 7 {
                return None;
            }
            let mut all = head;
            all.resize(8 - tail.len(), 0);
            all.extend(tail);
            all
        }
        None => groups(text)?,
    };
    (all.len() == 8).then(|| all.iter().fold(0u128, |v, &g| v << 16 | u128::from(g)))
}

impl Address {
    /// Reads address text (EB-28); `None` when `text` is no address.
    pub fn parse(text: &str) -> Option<Address> {
        if text.contains('.') {
            return parse_v4(text).map(Address::V4);
        }
        let v6 = parse_v6(text)?;
        // ::ffff:0:0/96 is IPv4 (java.net.InetAddress returns an Inet4Address for it).
        if v6 >> 32 == 0xFFFF {
            return Some(Address::V4(u32::try_from(v6 & 0xFFFF_FFFF).unwrap_or(0)));
        }
        Some(Address::V6(v6))
    }
}

/// A block of addresses of one family: a CIDR block (EB-27) or one address (EB-13).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Block {
    /// The operand as written (`10.0.0.0/8`, or the address of a one-address block).
    source: Box<str>,
    /// Whether the block is IPv6.
    v6: bool,
    /// The network, host bits cleared (an IPv4 address in the low 32 bits).
    network: u128,
    /// The mask (for IPv4, of the low 32 bits).
    mask: u128,
}

/// Why a CIDR operand was rejected: event-ruler's message (EB-31).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BlockError {
    /// The message ("Malformed CIDR, one '/' required", "IPv4 mask bits must be < 32", ...).
    pub message: String,
}

fn fail<T>(message: impl Into<String>) -> Result<T, BlockError> {
    Err(BlockError {
        message: message.into(),
    })
}

/// Java's `Integer.parseInt` over ASCII digits: an optional sign and digits fitting an `i32`.
fn parse_int(text: &str) -> Option<i32> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    text.parse::<i32>().ok()
}

impl Block {
    /// Parses a `cidr` operand (EB-27), its checks and messages in event-ruler's order.
    pub fn cidr(source: &str) -> Result<Block, BlockError> {
        // Java's `split("/")`: trailing empty parts are dropped.
        let mut parts: Vec<&str> = source.split('/').collect();
        while parts.last().is_some_and(|p| p.is_empty()) {
            parts.pop();
        }
        let [address, bits] = parts.as_slice() else {
            return fail("Malformed CIDR, one '/' required");
        };
        let Some(bits) = parse_int(bits) else {
            return fail("Malformed CIDR, mask bits must be an integer");
        };
        let Ok(bits) = u32::try_from(bits) else {
            return fail("Malformed CIDR, mask bits must not be negative");
        };
        let Some(parsed) = Address::parse(address) else {
            return fail(if shaped(address) {
                format!("Invalid IP address: {}", excerpt(address))
            } else {
                format!("Nonstandard IP address: {}", excerpt(address))
            });
        };
        let (v6, value, width) = match parsed {
            Address::V4(a) => {
                if bits > 31 {
                    return fail("IPv4 mask bits must be < 32");
                }
                (false, u128::from(a), 32)
            }
            Address::V6(a) => {
                if bits > 127 {
                    return fail("IPv6 mask bits must be < 128");
                }
                (true, a, 128)
            }
        };
        let mask = mask(width, bits);
        Ok(Block {
            source: source.into(),
            v6,
            network: value & mask,
            mask,
        })
    }

    /// The block of the one address `text` is (EB-13), when it is one.
    pub fn address(text: &str) -> Option<Block> {
        let (v6, value, width) = match Address::parse(text)? {
            Address::V4(a) => (false, u128::from(a), 32),
            Address::V6(a) => (true, a, 128),
        };
        Some(Block {
            source: text.into(),
            v6,
            network: value,
            mask: mask(width, width),
        })
    }

    /// Reads a block from its source text, as [`Block::source`] writes it: a CIDR block when it
    /// holds a `/`, else one address.
    pub fn from_source(source: &str) -> Result<Block, BlockError> {
        if source.contains('/') {
            Block::cidr(source)
        } else {
            Block::address(source).ok_or_else(|| BlockError {
                message: format!("not an IP address: {}", excerpt(source)),
            })
        }
    }

    /// Whether the string `value` is an address (EB-28) of this block's family inside it.
    pub fn contains_text(&self, value: &str) -> bool {
        let (v6, value) = match Address::parse(value) {
            Some(Address::V4(a)) => (false, u128::from(a)),
            Some(Address::V6(a)) => (true, a),
            None => return false,
        };
        v6 == self.v6 && value & self.mask == self.network
    }

    /// The operand as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the block holds one address.
    pub fn is_single(&self) -> bool {
        self.mask == mask(if self.v6 { 128 } else { 32 }, 128)
    }

    /// Whether this is an IPv6 block.
    pub fn is_v6(&self) -> bool {
        self.v6
    }
}

/// The mask of `bits` leading ones over a `width`-bit address (`bits` capped at `width`).
fn mask(width: u32, bits: u32) -> u128 {
    let all: u128 = if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    };
    let host = width - bits.min(width);
    all & !(if host >= 128 {
        u128::MAX
    } else {
        (1u128 << host) - 1
    })
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eb_28_address_text() {
        assert_eq!(Address::parse("10.0.0.1"), Some(Address::V4(0x0A00_0001)));
        assert_eq!(Address::parse("010.0.0.1"), Some(Address::V4(0x0A00_0001)));
        assert_eq!(
            Address::parse("000000010.0.0.1"),
            Some(Address::V4(0x0A00_0001))
        );
        for no in [
            "10.0.0.256",
            "10.0.0",
            "10.0.0.1.2",
            "10..0.1",
            " 10.0.0.1",
            "a.b.c.d",
        ] {
            assert_eq!(Address::parse(no), None, "{no}");
        }
        assert_eq!(
            Address::parse("2001:DB8:0:0:0:0:0:1"),
            Address::parse("2001:db8::1")
        );
        assert_eq!(Address::parse("::"), Some(Address::V6(0)));
        assert_eq!(Address::parse("::1"), Some(Address::V6(1)));
        assert_eq!(Address::parse("1::"), Some(Address::V6(1 << 112)));
        assert_eq!(
            Address::parse("0001:0:0:0:0:0:0:00001"),
            Some(Address::V6(1 << 112 | 1))
        );
        for no in [
            ":",
            ":1",
            "1:",
            "1:::2",
            "1::2::3",
            "1:2:3:4:5:6:7",
            "1:2:3:4:5:6:7:8:9",
            "1:2:3:4:5:6:7::8",
            "10000::",
            "::ffff:10.0.0.1",
            "fe80::1%eth0",
            "[::1]",
            "",
        ] {
            assert_eq!(Address::parse(no), None, "{no}");
        }
        // IPv4-mapped IPv6 is IPv4.
        assert_eq!(
            Address::parse("::ffff:a00:1"),
            Some(Address::V4(0x0A00_0001))
        );
        assert_eq!(
            Address::parse("::FFFF:0A00:0001"),
            Some(Address::V4(0x0A00_0001))
        );
    }

    #[test]
    fn eb_27_cidr_errors_in_order() {
        let e = |s: &str| Block::cidr(s).unwrap_err().message;
        assert_eq!(e("bad-filter"), "Malformed CIDR, one '/' required");
        assert_eq!(e("a/b/c"), "Malformed CIDR, one '/' required");
        assert_eq!(e("/"), "Malformed CIDR, one '/' required");
        assert_eq!(e(""), "Malformed CIDR, one '/' required");
        assert_eq!(
            e("bad-/64filter"),
            "Malformed CIDR, mask bits must be an integer"
        );
        assert_eq!(
            e("10.0.0.0/99999999999"),
            "Malformed CIDR, mask bits must be an integer"
        );
        assert_eq!(
            e("10.0.0.0/-1"),
            "Malformed CIDR, mask bits must not be negative"
        );
        assert_eq!(e("xx.11.xx/8"), "Nonstandard IP address: xx.11.xx");
        assert_eq!(e("/8"), "Nonstandard IP address: ");
        assert_eq!(e("10.0.0.256/24"), "Invalid IP address: 10.0.0.256");
        assert_eq!(e("1:2/8"), "Invalid IP address: 1:2");
        assert_eq!(e("10.0.0.1/32"), "IPv4 mask bits must be < 32");
        assert_eq!(e("::ffff:a00:0/96"), "IPv4 mask bits must be < 32");
        assert_eq!(e("::/128"), "IPv6 mask bits must be < 128");
        assert!(Block::cidr("10.0.0.0/8/").is_ok());
        assert!(Block::cidr("10.0.0.0/+8").is_ok());
        assert!(Block::cidr("::/127").is_ok());
        assert!(Block::cidr("10.0.0.0/31").is_ok());
    }

    #[test]
    fn eb_29_blocks_hold_their_family_only() {
        let b = Block::cidr("10.0.0.5/30").unwrap();
        for yes in ["10.0.0.4", "10.0.0.7", "010.0.0.6", "::ffff:a00:5"] {
            assert!(b.contains_text(yes), "{yes}");
        }
        for no in ["10.0.0.8", "10.0.0.3", "::a00:5", "x", ""] {
            assert!(!b.contains_text(no), "{no}");
        }
        let v6 = Block::cidr("2001:db8::/32").unwrap();
        assert!(v6.contains_text("2001:DB8:ffff::1"));
        assert!(!v6.contains_text("2001:db9::1"));
        assert!(!v6.contains_text("32.1.13.184"));
        let all = Block::cidr("0.0.0.0/0").unwrap();
        assert!(all.contains_text("203.0.113.9"));
        assert!(!all.contains_text("::1"));
        assert!(!all.contains_text("5"));
        // A mapped operand is an IPv4 block.
        let mapped = Block::cidr("::ffff:a00:0/24").unwrap();
        assert!(mapped.contains_text("10.0.0.200"));
        assert!(!mapped.is_v6());
    }

    #[test]
    fn eb_13_one_address_blocks() {
        let b = Block::address("10.0.0.1").unwrap();
        assert!(b.is_single());
        assert!(b.contains_text("010.0.0.1"));
        assert!(b.contains_text("::ffff:a00:1"));
        assert!(!b.contains_text("10.0.0.2"));
        let v6 = Block::address("2001:db8::1").unwrap();
        assert!(v6.is_single());
        assert!(v6.contains_text("2001:DB8:0:0:0:0:0:1"));
        assert!(Block::address("1:2").is_none());
        assert!(Block::address("10.0.0.256").is_none());
        assert_eq!(Block::from_source("10.0.0.1").unwrap(), b);
        assert_eq!(
            Block::from_source("10.0.0.0/8").unwrap(),
            Block::cidr("10.0.0.0/8").unwrap()
        );
        assert!(!Block::cidr("10.0.0.0/8").unwrap().is_single());
    }
}
