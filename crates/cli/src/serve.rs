//! `servelab serve` and `servelab engines`: being built in this session.

/// Flags of `servelab serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `servelab serve`.
pub(crate) fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("servelab serve is not built yet")
}

/// Prints the engines.
pub(crate) fn list_engines() -> anyhow::Result<()> {
    Ok(())
}
