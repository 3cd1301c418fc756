//! `filtervm route`.
use super::Failure;
use clap::Args;
use std::process::ExitCode;

/// The arguments of `filtervm route`.
#[derive(Args, Debug)]
pub(super) struct RouteArgs {}

pub(super) fn run(_args: RouteArgs) -> Result<ExitCode, Failure> {
    Err(Failure::usage("not yet"))
}
