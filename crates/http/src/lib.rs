//! servelab-http: under construction in this session.
