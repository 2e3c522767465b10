//! servelab-h2's server connection driven by a scripted client over plain bytes: the
//! requests a well-behaved client makes, flow control, shutdown, and every attack the
//! connection defends against.

mod peer;

mod client;
mod defences;
mod flow_control;
mod interop;
mod requests;
mod shutdown;
