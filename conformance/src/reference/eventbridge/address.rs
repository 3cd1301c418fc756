//! IP address text and CIDR blocks (`docs/dialects/eventbridge-patterns.md` EB-13, EB-27,
//! EB-28, EB-29), written from the rules' words.

/// An address (EB-28): an IPv6 address in `::ffff:0:0/96` is the IPv4 address of its last 32
/// bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Address {
    /// IPv4.
    V4(u32),
    /// IPv6.
    V6(u128),
}

/// How a text reads as an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// Not address-shaped: neither four dot-separated digit runs nor hex digits and colons with
    /// at least one colon.
    NotShaped,
    /// Shaped like an address but not one (`10.0.0.256`, `1::2::3`).
    Invalid,
    /// An address.
    Address(Address),
}

/// EB-28: reads `text` as an address.
pub(super) fn read(text: &str) -> Reading {
    if is_ipv4_shaped(text) {
        return ipv4(text).map_or(Reading::Invalid, |a| Reading::Address(Address::V4(a)));
    }
    if text.contains(':') && text.bytes().all(|b| b == b':' || b.is_ascii_hexdigit()) {
        return match ipv6(text) {
            Some(a) if a >> 32 == 0xffff => {
                Reading::Address(Address::V4(u32::try_from(a & 0xffff_ffff).unwrap_or(0)))
            }
            Some(a) => Reading::Address(Address::V6(a)),
            None => Reading::Invalid,
        };
    }
    Reading::NotShaped
}

/// The address `text` is, if any.
pub(super) fn address(text: &str) -> Option<Address> {
    match read(text) {
        Reading::Address(a) => Some(a),
        Reading::NotShaped | Reading::Invalid => None,
    }
}

/// Exactly four dot-separated runs of ASCII digits.
fn is_ipv4_shaped(text: &str) -> bool {
    let runs: Vec<&str> = text.split('.').collect();
    runs.len() == 4
        && runs
            .iter()
            .all(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
}

/// Each run at most 255 in decimal, leading zeros allowed and read as decimal.
fn ipv4(text: &str) -> Option<u32> {
    let mut out = 0u32;
    for run in text.split('.') {
        let mut value = 0u32;
        for b in run.bytes() {
            value = value * 10 + u32::from(b - b'0');
            if value > 255 {
                return None;
            }
        }
        out = (out << 8) | value;
    }
    Some(out)
}

/// One group: one or more hex digits (leading zeros allowed) of value at most `FFFF`.
fn group(text: &str) -> Option<u128> {
    if text.is_empty() {
        return None;
    }
    let mut value = 0u128;
    for c in text.chars() {
        value = value * 16 + u128::from(c.to_digit(16)?);
        if value > 0xffff {
            return None;
        }
    }
    Some(value)
}

/// Groups separated by single colons (none for the empty text).
fn groups(text: &str) -> Option<Vec<u128>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    text.split(':').map(group).collect()
}

/// Eight groups, or fewer with one `::` standing for one or more zero groups.
fn ipv6(text: &str) -> Option<u128> {
    let all = match text.split_once("::") {
        Some((head, tail)) => {
            if tail.contains("::") {
                return None;
            }
            let (head, tail) = (groups(head)?, groups(tail)?);
            if head.len() + tail.len() > 7 {
                return None;
            }
            let zeros = 8 - head.len() - tail.len();
            let mut all = head;
            all.extend(std::iter::repeat_n(0, zeros));
            all.extend(tail);
            all
        }
        None => groups(text)?,
    };
    if all.len() != 8 {
        return None;
    }
    Some(all.iter().fold(0u128, |acc, g| (acc << 16) | g))
}

/// A CIDR block (EB-27): the first and last address it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Block {
    /// IPv4 addresses from the first to the last, inclusive.
    V4(u32, u32),
    /// IPv6 addresses from the first to the last, inclusive.
    V6(u128, u128),
}

impl Block {
    /// EB-29: an address of the block's family inside it.
    pub(super) fn contains(self, address: Address) -> bool {
        match (self, address) {
            (Block::V4(lo, hi), Address::V4(a)) => (lo..=hi).contains(&a),
            (Block::V6(lo, hi), Address::V6(a)) => (lo..=hi).contains(&a),
            _ => false,
        }
    }
}

/// Java's `String.split("/")`: the parts between slashes, trailing empty parts dropped.
fn java_split_slash(text: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = text.split('/').collect();
    while parts.len() > 1 && parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    if parts.len() == 1 && parts.first().is_some_and(|p| p.is_empty()) && !text.is_empty() {
        // Only slashes: every part is a trailing empty part.
        parts.clear();
    }
    parts
}

/// Java's `Integer.parseInt`: an optional sign and decimal digits, within 32 bits.
fn java_parse_int(text: &str) -> Option<i32> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i32>().ok()
}

/// EB-27: reads a `cidr` operand, or gives event-ruler's message (the checks in EB-31's order).
pub(super) fn cidr(text: &str) -> Result<Block, String> {
    let parts = java_split_slash(text);
    let [addr, bits] = parts.as_slice() else {
        return Err("Malformed CIDR, one '/' required".to_owned());
    };
    let bits =
        java_parse_int(bits).ok_or("Malformed CIDR, mask bits must be an integer".to_owned())?;
    let bits = u32::try_from(bits)
        .map_err(|_| "Malformed CIDR, mask bits must not be negative".to_owned())?;
    let address = match read(addr) {
        Reading::NotShaped => return Err(format!("Nonstandard IP address: {addr}")),
        Reading::Invalid => return Err(format!("Invalid IP address: {addr}")),
        Reading::Address(a) => a,
    };
    // Host bits are ignored: the block is the address with its host bits cleared, to the
    // address with them all set.
    match address {
        Address::V4(a) => {
            if bits > 31 {
                return Err("IPv4 mask bits must be < 32".to_owned());
            }
            let host = u32::MAX.checked_shr(bits).unwrap_or(0);
            Ok(Block::V4(a & !host, a | host))
        }
        Address::V6(a) => {
            if bits > 127 {
                return Err("IPv6 mask bits must be < 128".to_owned());
            }
            let host = u128::MAX.checked_shr(bits).unwrap_or(0);
            Ok(Block::V6(a & !host, a | host))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn address_text_eb_28() {
        assert_eq!(address("10.0.0.1"), Some(Address::V4(0x0a00_0001)));
        assert_eq!(address("010.0.0.1"), address("10.0.0.1"));
        assert_eq!(address("0000010.000.0.001"), address("10.0.0.1"));
        assert_eq!(read("10.0.0.256"), Reading::Invalid);
        assert_eq!(read("10.0.0"), Reading::NotShaped);
        assert_eq!(read("10.0.0.1.2"), Reading::NotShaped);
        assert_eq!(read(" 10.0.0.1"), Reading::NotShaped);
        assert_eq!(read("xx.11.xx"), Reading::NotShaped);
        assert_eq!(address("2001:db8::1"), address("2001:DB8:0:0:0:0:0:1"));
        assert_eq!(address("2001:db8::1"), address("2001:0db8:0000::00001"));
        assert_eq!(address("::"), Some(Address::V6(0)));
        assert_eq!(address("::1"), Some(Address::V6(1)));
        assert_eq!(address("1::"), Some(Address::V6(1 << 112)));
        assert_eq!(address("::ffff:a00:1"), address("10.0.0.1"));
        assert_eq!(address("0:0:0:0:0:ffff:0a00:0001"), address("10.0.0.1"));
        assert_eq!(read("::ffff:10.0.0.1"), Reading::NotShaped);
        for bad in [
            "1::2::3",
            ":::",
            ":1::",
            "1:2:3:4:5:6:7:8:9",
            "1:2:3:4:5:6:7",
            "1:2:3:4:5:6:7::8",
            "1:2:3:4:5:6:7:8::",
            "10000::",
            ":",
            "1:",
        ] {
            assert_eq!(read(bad), Reading::Invalid, "{bad}");
        }
        assert_eq!(
            address("1:2:3:4:5:6::7"),
            Some(Address::V6(0x0001_0002_0003_0004_0005_0006_0000_0007))
        );
        for not_shaped in ["[::1]", "fe80::1%eth0", "g::1", "::1 ", "abc"] {
            assert_eq!(read(not_shaped), Reading::NotShaped, "{not_shaped}");
        }
    }

    #[test]
    fn cidr_checks_in_order_eb_27() {
        let err = |t: &str| cidr(t).unwrap_err();
        assert_eq!(err("bad-filter"), "Malformed CIDR, one '/' required");
        assert_eq!(err("10.0.0.0//8"), "Malformed CIDR, one '/' required");
        assert_eq!(err("10.0.0.0/"), "Malformed CIDR, one '/' required");
        assert_eq!(err("/"), "Malformed CIDR, one '/' required");
        assert_eq!(err(""), "Malformed CIDR, one '/' required");
        assert_eq!(
            err("bad-/64filter"),
            "Malformed CIDR, mask bits must be an integer"
        );
        assert_eq!(
            err("10.0.0.0/2147483648"),
            "Malformed CIDR, mask bits must be an integer"
        );
        assert_eq!(
            err("10.0.0.0/ 8"),
            "Malformed CIDR, mask bits must be an integer"
        );
        assert_eq!(
            err("10.0.0.0/-1"),
            "Malformed CIDR, mask bits must not be negative"
        );
        assert_eq!(err("xx.11.xx/8"), "Nonstandard IP address: xx.11.xx");
        assert_eq!(err("/8"), "Nonstandard IP address: ");
        assert_eq!(err("10.0.0.256/24"), "Invalid IP address: 10.0.0.256");
        assert_eq!(err("10.0.0.1/32"), "IPv4 mask bits must be < 32");
        assert_eq!(err("::/128"), "IPv6 mask bits must be < 128");
        assert_eq!(err("::ffff:a00:0/104"), "IPv4 mask bits must be < 32");
        assert_eq!(cidr("10.0.0.0/8/").unwrap(), cidr("10.0.0.0/8").unwrap());
        assert_eq!(cidr("10.0.0.0/+8").unwrap(), cidr("10.0.0.0/8").unwrap());
        assert_eq!(cidr("10.0.0.0/-0").unwrap(), cidr("10.0.0.0/0").unwrap());
        assert_eq!(
            cidr("10.0.0.5/30").unwrap(),
            Block::V4(0x0a00_0004, 0x0a00_0007)
        );
        assert_eq!(cidr("0.0.0.0/0").unwrap(), Block::V4(0, u32::MAX));
        let v6 = cidr("2001:db8::/32").unwrap();
        assert!(v6.contains(address("2001:DB8:ffff::1").unwrap()));
        assert!(!v6.contains(address("2001:db9::1").unwrap()));
        assert!(!cidr("0.0.0.0/0").unwrap().contains(address("::1").unwrap()));
    }
}
