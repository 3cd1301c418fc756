//! `filtervm completions SHELL` and `filtervm man`: generated from the same clap definitions as
//! the parser, so they never drift from the arguments the tool accepts.

use super::failure::{EXIT_OK, Failure};
use super::output;
use clap::{Args, ValueEnum};
use std::process::ExitCode;

/// The shells completions are generated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Shell {
    /// bash: `filtervm completions bash > /etc/bash_completion.d/filtervm`.
    Bash,
    /// zsh: `filtervm completions zsh > "${fpath[1]}/_filtervm"`.
    Zsh,
    /// fish: `filtervm completions fish > ~/.config/fish/completions/filtervm.fish`.
    Fish,
}

/// The arguments of `filtervm completions`.
#[derive(Args, Debug)]
pub(super) struct CompletionsArgs {
    /// The shell: bash, zsh or fish.
    shell: Shell,
}

/// Prints the completion script for the shell.
pub(super) fn run(args: &CompletionsArgs) -> Result<ExitCode, Failure> {
    let mut command = super::command();
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "filtervm", &mut script);
    let mut out = output::Stdout::new();
    out.write_bytes(&script)?;
    out.flush()?;
    Ok(ExitCode::from(EXIT_OK))
}

/// Prints the manual page (roff): the tool, then each subcommand as a section.
pub(super) fn man() -> Result<ExitCode, Failure> {
    let command = super::command();
    let mut page = Vec::new();
    let written = render_man(&command, &mut page);
    written.map_err(|e| Failure::error(format!("cannot render the manual page: {e}")))?;
    let mut out = output::Stdout::new();
    out.write_bytes(&page)?;
    out.flush()?;
    Ok(ExitCode::from(EXIT_OK))
}

/// The page of `command` (name, synopsis, description, options, exit status, version), then a
/// section per subcommand with its own synopsis and options.
fn render_man(command: &clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(command.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    man.render_subcommands_section(out)?;
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("filtervm {}", sub.get_name());
        let sub = sub.clone().bin_name(name);
        let sub_man = clap_mangen::Man::new(sub);
        sub_man.render_synopsis_section(out)?;
        sub_man.render_description_section(out)?;
        sub_man.render_options_section(out)?;
    }
    man.render_extra_section(out)?;
    man.render_version_section(out)?;
    Ok(())
}
