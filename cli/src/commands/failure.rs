//! How a command ends: its exit statuses and the failure that ends it with a message.

/// Exit status: success; for `match` and `route`, something matched; for `diff`, the same
/// (proved); for `example`, a message found; for `translate`, a proved translation.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit status: an invalid policy (`check`, `compile`, `explain`, `lint`), a disagreement
/// (`bench`); for `match` and `route`, nothing matched; for `example`, no such message (proved);
/// for `diff`, different; for `audit`, something found; for `translate`, not expressible.
pub(crate) const EXIT_NEGATIVE: u8 = 1;
/// Exit status: an error while running: a message line or subscription that could not be read
/// (the others are still processed), an invalid policy given to `match`, a file that cannot be
/// read or written; for `example` and `diff`, unknown (a bounded search found nothing).
pub(crate) const EXIT_ERROR: u8 = 2;
/// Exit status: a usage error: unknown or conflicting arguments, a missing `--dialect`, bad
/// `--options` text (`EX_USAGE` of sysexits.h), so that scripts tell a wrong command line from
/// bad input.
pub(crate) const EXIT_USAGE: u8 = 64;

/// A failure that ends the command with a message and an exit code.
pub(super) struct Failure {
    pub(super) message: String,
    pub(super) code: u8,
}

impl Failure {
    /// A usage error (exit 64).
    pub(super) fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: EXIT_USAGE,
        }
    }

    /// An error while running: a file that cannot be read or written (exit 2).
    pub(super) fn error(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: EXIT_ERROR,
        }
    }
}
