//! One validating JSON reader over raw bytes, for messages and for policies.
//!
//! - **Policies** are read into an owned tree, [`Value`], by [`parse`] / [`parse_with`]: numbers
//!   keep their exact source text ([`Number`]: `1.50`, `1e400` and `-0` stay as written), objects
//!   keep their member order ([`Map`]). A front end that keeps nothing of the tree reads it as a
//!   borrowed one instead, [`ValueRef`], held in an [`Arena`] ([`Arena::parse_str`]; a [`Value`]
//!   converts with [`Arena::value`]).
//! - **Messages** are read by an [`Extractor`] with a [`Selector`] (the paths a program or a
//!   subscription set reads): the whole input is validated, but only the wanted members are kept,
//!   in a pruned document ([`Node`]) that borrows the input and a per-message arena.
//! - [`validate`] checks a document without keeping anything.
//! - [`outline`] reads a document's top level member by member (or element by element), each
//!   value as its exact text: how a message's shape is told before any part of it is read.
//!
//! All three share one reader: a pull parser over the bytes that never recurses (open arrays
//! and objects are one bit each on an explicit stack, the first 64 levels without allocating), so
//! any nesting depth is read in time linear in the input and memory of one bit per level, valid
//! or not. The only depth limit is the owned tree's ([`ParseOptions::max_depth`], 128 by default),
//! since an owned tree is dropped recursively.
//!
//! # The grammar (RFC 8259)
//!
//! Exactly RFC 8259, nothing more:
//!
//! - **Text.** The input must be UTF-8 (§8.1), checked once up front by the standard library; the
//!   first invalid byte is reported when the reader reaches it, so errors come in document order.
//!   No byte-order mark, no comments, no trailing commas, no single quotes.
//! - **White space** between tokens is space, tab, line feed and carriage return only (§2).
//! - **Values** are `null`, `true`, `false`, numbers, strings, arrays and objects; one value per
//!   document (any kind at the top level, §2), followed by nothing but white space.
//! - **Numbers** follow `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` (§6), at any length: no
//!   `+1`, `.5`, `5.`, `01`, `NaN` or `Infinity`. Their text is kept, never rounded on reading;
//!   [`Number::as_f64`] rounds to binary64 on request (`None` for `1e400`).
//! - **Strings** (§7): no raw control characters (U+0000 to U+001F), only the escapes `\"` `\\`
//!   `\/` `\b` `\f` `\n` `\r` `\t` and `\uXXXX` (hex digits in either case). A `\u` escape of a
//!   high surrogate followed by one of a low surrogate is one character.
//! - **Lone surrogates.** A surrogate escape that is not half of such a pair (`"\ud800"`,
//!   `"\udc00"`, `"\ud800x"`) is grammatical JSON (§7 allows it; §8.2 calls its behaviour
//!   unpredictable). **Decision:** the *message* reader accepts it and decodes each lone surrogate
//!   as U+FFFD REPLACEMENT CHARACTER: AWS accepts any valid JSON body, and Java strings (hence many
//!   publishers) can hold lone surrogates, so such a message must still be judged; no Rust `str`
//!   can hold the surrogate itself, and U+FFFD is what every lossy UTF-16 decoder produces. The
//!   *policy* reader rejects it ([`ErrorKind::LoneSurrogate`], with the escape's offset), as
//!   `serde_json` does: a policy should say what it means. ([`LoneSurrogates`] chooses.)
//! - **Duplicate member names** (§4 says names SHOULD be unique). The owned tree keeps the last
//!   value at the position of the first occurrence, as `serde_json` with `preserve_order` does,
//!   and remembers the name ([`Map::first_duplicate`]) so a front end or the CLI can reject it;
//!   [`Duplicates::Reject`] makes it an error ([`ErrorKind::DuplicateName`]) instead. The message
//!   reader applies the same rule to the members it keeps.
//!
//! Errors ([`Error`]) carry a byte offset and an [`ErrorKind`], and read like
//! ``unexpected `]` at byte 17 (expected a value)``, `invalid UTF-8 in a string at byte 40` or
//! ``lone surrogate `\ud800` at byte 9``.
//!
//! # What a message document keeps
//!
//! A [`Selector`] names what the binder reads; the pruned document keeps exactly enough for the
//! binder to compute the same bindings as on the full document (a property test checks this on
//! random documents against the binders of [`crate::bind`]):
//!
//! - The top level: an object keeps its wanted members; any other value is kept as itself, an
//!   array or object empty (the binders need only its kind).
//! - A wanted member is always kept (so repeated names resolve as they would in the full
//!   document). Its value, when a path continues below it and it is an object, keeps the members
//!   wanted there; an object no path continues into is kept empty; a scalar is kept as is.
//! - SNS body paths ([`Selector::body_paths`], sns rules 14-21): a member name may consume
//!   several dotted segments (`a.b.c` reaches `{"a":{"b":{"c":v}}}`, `{"a.b.c":v}`,
//!   `{"a.b":{"c":v}}` and `{"a":{"b.c":v}}`). An array is transparent: its elements are read with
//!   the array's own paths, nested arrays flattened into it. A wanted array keeps its scalar
//!   elements when a path ends at it, and its object elements, pruned, when a path continues
//!   through it (one per element, even when nothing inside is wanted: sns rule 18 makes one row
//!   per element); other elements are dropped. With EventBridge field paths (`Key::FieldPath`,
//!   EB-3) an array nested in a kept array is kept as an element (not flattened), and an object's
//!   repeated member names are all kept.
//! - Event Grid ([`Selector::event`], EG-16..EG-20): top-level members matched ignoring ASCII case,
//!   every case variant kept (the binder prefers the exact spelling, else the first); `data` (found
//!   the same way) followed by one member per segment, by exact name. Arrays are not transparent:
//!   an array a path ends at keeps its scalar elements (the leaves), any other array is kept empty.
//!
//! Kept objects nest only as deep as the selector's paths and SNS arrays flatten, so a pruned
//! document is shallow however deep the input, and walking it recursively is safe.
//!
//! # Memory
//!
//! The pruned document lives in a `bumpalo` arena owned by the [`Extractor`] and reset for each
//! message; strings and numbers without escapes borrow the input (and a member name spelled as the
//! selector spells it borrows the selector), so a number costs no allocation, and a warm extractor
//! allocates nothing per message. Containers are built on one scratch stack of elements and one of
//! members (no vector per container): when a container closes, its elements are copied into the
//! arena as one slice.
//!
//! **Why an arena.** The alternative measured was a plain-`Vec` design: the same scratch stacks,
//! closed containers copied into reusable `Vec` tapes and escaped strings into a reusable
//! `String`. Both cost the same (callgrind on 20,000 attrs lines with the 8 `pol8c` paths: 5,411
//! instructions a message with the arena, 5,395 with the tapes; 5,000 cityfeat lines with 5
//! paths: equal to the instruction; wall clock within noise). The arena wins on the API: a node is
//! a plain borrowed tree (`&[Node]`, `&str`) that binders pattern-match, where tapes need index
//! handles and accessor calls, and it is what the product design names for per-message scratch.
//!
//! # Speed
//!
//! Strings are scanned eight bytes a step for `"`, `\`, control bytes and (until one is found)
//! bytes of 0x80 or more; digit runs eight bytes a step; member names are filtered by their first
//! byte before any comparison; skipped values never become events; the skip loop keeps its
//! offset and the innermost 64 levels of the container stack in registers (a shift register).
//! Safe Rust turns checked bytes into a `str` only through `std::str::from_utf8`, whose fixed
//! cost per call matters for short texts, so kept texts are converted one by one while that is
//! cheaper than converting the whole input once (the selector's leaf count decides).
//!
//! Measured (instructions from callgrind over 1,000 lines, and the fastest of 200 passes in ns
//! a line; `bench/benches/json.rs` documents both modes): validating an attrs line (~160 B)
//! takes 1,424 instructions / 95 ns; extracting the members of 1 / 3 / 8 clauses 2,418 / 2,856 /
//! 4,306 instructions (142 / 153 / 194 ns); a cityfeat line (~700 B, 28 coordinates) validates
//! in 6,308 / 409 ns and 5 members extract in 9,805 / 547 ns. quamina-rs's `matches_for_event`
//! takes 106 / 217 / 498 ns on the same three attrs workloads and 226 ns on cityfeat, but it does
//! not validate what it skips (it matches `{"event":"order.paid","x":[1,2,}`); this reader does,
//! as RFC 8259 and the SNS rule that a body that is not JSON has no keys require. On data whose
//! branches all predict, validation runs at about five instructions a cycle: what is left is the
//! number of instructions per byte (numbers are checked against the grammar digit by digit
//! group), which a block-at-a-time validator would need SIMD to cut, and this crate has no
//! `unsafe`.

mod error;
mod outline;
mod read;
mod select;
#[cfg(test)]
mod select_tests;
mod tree;
mod value;

pub use error::{Error, ErrorKind};
pub use outline::{Elements, Members, Name, Outline, RawKind, RawValue, outline, outline_with};
#[cfg(test)]
pub(crate) use read::passed_rests;
pub use read::{LoneSurrogates, ReadMode};
pub use select::{Extractor, Member, NameTest, Node, Selector};
pub(crate) use select::{Tap, Tapped};
pub use tree::{Arena, NumberRef, ValueRef};
pub use value::{
    DEFAULT_MAX_DEPTH, Duplicates, Iter, MAX_DEPTH_CEILING, Map, Number, ParseOptions, Quoted,
    Value, parse, parse_str_with, parse_with,
};

/// Checks that `input` is one JSON document (see the module documentation for the grammar),
/// keeping nothing. Linear in the input at any depth; lone surrogate escapes are accepted or not
/// as `lone_surrogates` says.
///
/// ```
/// use filtervm_vm::json::{self, ErrorKind, LoneSurrogates};
/// assert!(json::validate(br#"{"a": ["\ud800"]}"#, LoneSurrogates::Replace).is_ok());
/// let e = json::validate(br#"{"a": ["\ud800"]}"#, LoneSurrogates::Reject).unwrap_err();
/// assert_eq!((e.kind(), e.offset()), (ErrorKind::LoneSurrogate, 8));
/// assert_eq!(e.to_string(), r"lone surrogate `\ud800` at byte 8");
/// ```
pub fn validate(input: &[u8], lone_surrogates: LoneSurrogates) -> Result<(), Error> {
    read::Reader::new(input, lone_surrogates).finish()
}

/// Compares this module's policy reader with `serde_json` on `input`, for the fuzz target and
/// tests: `Err` describes the first disagreement.
///
/// - When `serde_json` reads `input` into a `serde_json::Value`, [`parse`] must read it into the
///   same value (numbers by `serde_json`'s reading of their text, which writes exponents as `e+`;
///   members in the same order when `serde_json` keeps order), and its `Display` must read back
///   to the same tree.
/// - When `serde_json` rejects `input` for a reason other than one of its own limits (nesting
///   deeper than 127, a number beyond binary64 without `arbitrary_precision`), [`parse`] must
///   reject it too.
/// - [`validate`] with [`LoneSurrogates::Reject`] must accept exactly what [`parse`] accepts
///   (apart from [`ErrorKind::TooDeep`]), and with [`LoneSurrogates::Replace`] at least that.
/// - The message reader ([`Extractor`]) must accept exactly what [`validate`] with
///   [`LoneSurrogates::Replace`] accepts, with the same error.
pub fn check_against_serde_json(input: &[u8]) -> Result<(), String> {
    let message = validate(input, LoneSurrogates::Replace);
    let selector = Selector::body_paths(["a", "a.b", "b"]);
    let mut extractor = Extractor::new();
    let extracted = extractor.extract(&selector, input).map(|_| ());
    if extracted != message {
        return Err(format!(
            "the message reader says {extracted:?} but validate says {message:?}"
        ));
    }
    let ours = parse(input);
    let theirs = serde_json::from_slice::<serde_json::Value>(input);
    let validated = validate(input, LoneSurrogates::Reject);
    let too_deep = matches!(&ours, Err(e) if e.kind() == ErrorKind::TooDeep);
    if !too_deep && validated.is_ok() != ours.is_ok() {
        return Err(format!(
            "validate says {validated:?} but parse says {:?}",
            ours.as_ref().map(|_| ())
        ));
    }
    if ours.is_ok() && validate(input, LoneSurrogates::Replace).is_err() {
        return Err("validate with Replace rejects what parse accepts".to_owned());
    }
    match (&ours, &theirs) {
        (Ok(ours), Ok(theirs)) => {
            let converted = ours.to_serde_json();
            if converted != *theirs {
                return Err(format!("values differ: ours {ours}, serde_json {theirs}"));
            }
            // Through serde_json on both sides: it writes exponents its own way (`1E5` → `1e+5`).
            if serde_keeps_order() && Value::from(theirs) != Value::from(&converted) {
                return Err(format!(
                    "member order differs: ours {ours}, serde_json {theirs}"
                ));
            }
            match parse(ours.to_string().as_bytes()) {
                Ok(again) if again == *ours => Ok(()),
                other => Err(format!("{ours} reads back as {other:?}")),
            }
        }
        (Err(e), Ok(theirs)) if e.kind() != ErrorKind::TooDeep => {
            Err(format!("we reject ({e}) what serde_json reads as {theirs}"))
        }
        (Ok(ours), Err(e)) if !serde_limit(e) => {
            Err(format!("we read {ours} where serde_json says {e}"))
        }
        _ => Ok(()),
    }
}

/// Whether `serde_json` rejected the input for one of its own limits rather than its grammar.
fn serde_limit(e: &serde_json::Error) -> bool {
    let message = e.to_string();
    message.starts_with("recursion limit exceeded") || message.starts_with("number out of range")
}

/// Whether `serde_json::Map` keeps document order in this build (`preserve_order`).
fn serde_keeps_order() -> bool {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(r#"{"b":0,"a":0}"#)
        .ok()
        .and_then(|m| m.keys().next().cloned())
        .is_some_and(|k| k == "b")
}
