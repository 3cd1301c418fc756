//! The `filtervm` command-line tool.
fn main() {}
