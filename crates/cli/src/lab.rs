//! `servelab lab`: being built in this session (see the issue tracker).

/// Flags of `servelab lab`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `servelab lab`.
pub(crate) fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("servelab lab is not built yet")
}
