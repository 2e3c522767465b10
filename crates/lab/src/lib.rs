//! servelab-lab: under construction in this session; see the issue tracker.
