//! `epoll`: one thread, non-blocking sockets, one epoll loop multiplexing the
//! listener, every connection and the shutdown pipe.
//!
//! The event-driven architecture of nginx with `worker_processes 1`, lighttpd
//! and early node.js: no thread per connection, so an idle or slow client costs
//! a slot and its buffers, never a thread; one slow client cannot stall others
//! because nothing ever blocks. Its limit is one core. The loop itself lives in
//! [`crate::driver::evloop`], shared with `reactor`.

use std::net::TcpListener;
use std::sync::Arc;

use crate::driver::evloop::EventLoop;
use crate::error::ServerError;
use crate::runtime::shared::Shared;

pub(crate) fn run(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<(), ServerError> {
    EventLoop::new(site, listeners, false)?.run()
}
