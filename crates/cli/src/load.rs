//! `servelab load`: being built in this session (see the issue tracker).

/// Flags of `servelab load`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `servelab load`.
pub(crate) fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("servelab load is not built yet")
}
