//! The six dialects by name ([`Dialect`]): what options, errors and the front ends are keyed by.

use crate::error::ErrorCode;
use std::fmt;
use std::str::FromStr;

/// The filter dialects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// AWS SNS-compatible subscription filter policies.
    Sns,
    /// The notification service's filter policies.
    Basaltic,
    /// Event Grid subscription filters.
    EventGrid,
    /// Stream header clause groups.
    Stream,
    /// Nested condition/expression trees over headers.
    Expr,
    /// Amazon EventBridge event patterns (as aws/event-ruler evaluates them).
    EventBridge,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 6] = [
        Dialect::Sns,
        Dialect::Basaltic,
        Dialect::EventGrid,
        Dialect::Stream,
        Dialect::Expr,
        Dialect::EventBridge,
    ];

    /// The code of the dialect's policy errors when no more specific code applies (policy text
    /// that is not JSON, for one).
    pub fn invalid_code(self) -> ErrorCode {
        match self {
            Dialect::Sns => ErrorCode::SnsSyntaxError,
            Dialect::Basaltic => ErrorCode::NotificationInvalidFilterPolicy,
            Dialect::EventGrid => ErrorCode::EventGridInvalidFilter,
            Dialect::Stream => ErrorCode::StreamInvalidFilter,
            Dialect::Expr => ErrorCode::ExprInvalidFilter,
            Dialect::EventBridge => ErrorCode::EventBridgeSyntaxError,
        }
    }

    /// The code of a breached limit in the dialect's policies (policy text over 256 KiB, for
    /// one); dialects without a limit code use [`Dialect::invalid_code`].
    pub fn limit_code(self) -> ErrorCode {
        match self {
            Dialect::Sns => ErrorCode::SnsLimitExceeded,
            Dialect::EventBridge => ErrorCode::EventBridgeLimitExceeded,
            Dialect::EventGrid => ErrorCode::EventGridLimitExceeded,
            Dialect::Stream => ErrorCode::StreamLimitExceeded,
            Dialect::Basaltic | Dialect::Expr => self.invalid_code(),
        }
    }

    /// The dialect's name as written in vectors and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sns => "sns",
            Dialect::Basaltic => "basaltic",
            Dialect::EventGrid => "eventgrid",
            Dialect::Stream => "stream",
            Dialect::Expr => "expr",
            Dialect::EventBridge => "eventbridge",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown dialect name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown dialect `{}` (expected sns, basaltic, eventgrid, stream, expr or eventbridge)",
    crate::error::excerpt(&.0)
)]
pub struct UnknownDialect(pub String);

impl FromStr for Dialect {
    type Err = UnknownDialect;
    fn from_str(s: &str) -> Result<Dialect, UnknownDialect> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}
