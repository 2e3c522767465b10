//! `servelab sim`: being built in this session (see the issue tracker).

/// Flags of `servelab sim`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `servelab sim`.
pub(crate) fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("servelab sim is not built yet")
}
