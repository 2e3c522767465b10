//! servelab-server: under construction in this session.
