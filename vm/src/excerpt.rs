//! User input quoted in an error message, cut to a bounded prefix.
//!
//! Errors quote what they are about (a key, a value, a number, an option, an address), and that
//! text comes from whoever wrote the policy, the message or the program file. Every error that
//! quotes such text does it through [`excerpt`], so that an error about a one-megabyte key is one
//! short line and not a megabyte.
//!
//! ```
//! use filtervm_vm::excerpt::{EXCERPT_CHARS, excerpt};
//! assert_eq!(excerpt("order.paid").to_string(), "order.paid");
//! let key = "k".repeat(1_000_000);
//! let quoted = excerpt(&key).to_string();
//! assert_eq!(quoted, format!("{}… (1000000 bytes)", "k".repeat(EXCERPT_CHARS)));
//! ```

use std::fmt::{self, Write as _};

/// The most characters of user input an error message quotes.
pub const EXCERPT_CHARS: usize = 64;

/// `text` as an error message quotes it: whole when its text has at most [`EXCERPT_CHARS`]
/// characters, else its first [`EXCERPT_CHARS`] characters, `…` and its whole length in bytes
/// (`aaaa… (1048576 bytes)`). Any [`fmt::Display`] works (a JSON value prints as JSON); it is
/// formatted once, in constant memory.
pub fn excerpt<T: fmt::Display>(text: T) -> Excerpt<T> {
    Excerpt(text)
}

/// The [`fmt::Display`] of [`excerpt`].
#[derive(Debug, Clone, Copy)]
pub struct Excerpt<T>(T);

impl<T: fmt::Display> fmt::Display for Excerpt<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut head = Head::default();
        // `Head` never fails; an error here could only come from `T`'s own `Display`.
        write!(head, "{}", self.0)?;
        f.write_str(&head.kept)?;
        if head.cut {
            write!(f, "… ({} bytes)", head.bytes)?;
        }
        Ok(())
    }
}

/// Keeps the first [`EXCERPT_CHARS`] characters written to it and counts the bytes of the rest.
#[derive(Default)]
struct Head {
    kept: String,
    chars: usize,
    bytes: usize,
    cut: bool,
}

impl fmt::Write for Head {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.bytes += s.len();
        if !self.cut {
            for c in s.chars() {
                if self.chars == EXCERPT_CHARS {
                    self.cut = true;
                    break;
                }
                self.kept.push(c);
                self.chars += 1;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_quoted_whole_and_long_text_is_cut() {
        let exact = "é".repeat(EXCERPT_CHARS);
        assert_eq!(excerpt(&exact).to_string(), exact);
        let over = "é".repeat(EXCERPT_CHARS + 1);
        assert_eq!(
            excerpt(&over).to_string(),
            format!("{exact}… ({} bytes)", over.len())
        );
        assert_eq!(excerpt("").to_string(), "");
        // Any Display: the bytes counted are those of its whole text.
        let debug = format!("{}", excerpt(format_args!("{:?}", "\"".repeat(100))));
        assert!(debug.ends_with("… (202 bytes)"), "{debug}");
        assert_eq!(
            debug.chars().count(),
            EXCERPT_CHARS + "… (202 bytes)".len() - 2
        );
    }
}
