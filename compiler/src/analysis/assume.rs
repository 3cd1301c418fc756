//! Named assumptions about the JSON documents an analysis reasons about
//! ([`super::diff_assuming`]), each enforced in the witness space ([`super::search`]).

use filtervm_vm::json::Value;

/// What an analysis may assume of the JSON documents it reasons about (the document model only:
/// attributes and headers are unaffected). Each assumption narrows the witness space — the
/// search never builds a document it excludes — and nothing else: every document it admits is
/// still searched exactly, so "same" under an assumption is a proof over every such document,
/// and a witness is always a document the assumption admits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Assumptions {
    /// `canonical-documents`: documents as a JSON encoder writes them from a map of values — no
    /// member named twice in one object (the dialects read a repeated member differently: sns
    /// the last, EventBridge every one, EB-3, Event Grid the first); every number in the
    /// shortest form that reads back as its binary64 value, in any notation (EventBridge's
    /// comparable numbers, EB-17: binary64, exact decimals and event-ruler's reading then
    /// agree, sns rule 31, EG-33); member names spelled exactly as the filters spell the ones
    /// they read — no case variant of a name Event Grid finds ignoring case (EG-16), no member
    /// name holding a `.` that spells a path (sns rule 16, EB-3 read `{"a.b": 1}` as `a` then
    /// `b`, Event Grid never, EG-15).
    pub canonical_documents: bool,
    /// `no-arrays`: no JSON array holds, or lies on the way to, a member the filters read (each
    /// such member holds one value, as the Event Grid schema gives its envelope members and
    /// `data`, EG-3). The dialects read arrays differently (EG-18, EG-24; sns rule 28 against
    /// EB-25; sns D-3 against EB-10), and arrays of objects are not searched.
    pub no_arrays: bool,
}

impl Assumptions {
    /// No assumption: every document.
    pub const NONE: Assumptions = Assumptions {
        canonical_documents: false,
        no_arrays: false,
    };

    /// The names accepted by [`Assumptions::with`], as the command line and bindings spell them.
    pub const NAMES: [&'static str; 3] = ["canonical-documents", "no-arrays", "none"];

    /// `self` with the assumption called `name` added (`none` adds nothing); `None` for a name
    /// not in [`Assumptions::NAMES`].
    pub fn with(self, name: &str) -> Option<Assumptions> {
        let mut out = self;
        match name.trim() {
            "canonical-documents" => out.canonical_documents = true,
            "no-arrays" => out.no_arrays = true,
            "none" | "" => {}
            _ => return None,
        }
        Some(out)
    }

    /// The assumptions named in a comma-separated list (`canonical-documents,no-arrays`); the
    /// error names the first unknown name.
    pub fn parse(list: &str) -> Result<Assumptions, String> {
        list.split(',').try_fold(Assumptions::NONE, |a, name| {
            a.with(name).ok_or_else(|| {
                format!(
                    "unknown assumption `{}` (known: {})",
                    name.trim(),
                    Assumptions::NAMES.join(", ")
                )
            })
        })
    }

    /// Whether nothing is assumed.
    pub fn is_none(self) -> bool {
        self == Assumptions::NONE
    }

    /// The names of the assumptions made, in a fixed order.
    pub fn names(self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.canonical_documents {
            out.push("canonical-documents");
        }
        if self.no_arrays {
            out.push("no-arrays");
        }
        out
    }

    /// The assumptions as a person reads them: each name and what it excludes.
    pub fn describe(self) -> String {
        let mut parts = Vec::new();
        if self.canonical_documents {
            parts.push(
                "canonical-documents (no member named twice, numbers in their shortest \
                 round-trip form, member names spelled as the filters spell them)",
            );
        }
        if self.no_arrays {
            parts.push("no-arrays (no array at or on the way to a member the filters read)");
        }
        parts.join(", ")
    }

    /// The JSON form: the names, as an array.
    pub fn to_json(self) -> Value {
        Value::Array(self.names().into_iter().map(Value::from).collect())
    }
}
