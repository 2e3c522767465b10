//! SETTINGS parameters (RFC 9113 §6.5.2): the values each endpoint announces, with the
//! RFC's initial values, applied from a checked [`SettingsPayload`].
//!
//! Each side keeps two [`Settings`]: the peer's (which bound what we send: frame size,
//! window, HPACK table, header list) and ours (which bound what we accept). Ours only take
//! effect once the peer acknowledges them; until then the connection enforces the initial
//! values where they are looser (RFC 9113 §6.5.3).

use crate::frame::{MIN_MAX_FRAME_SIZE, SettingsPayload};

/// Setting identifiers (RFC 9113 §6.5.2). They live with the frame codec,
/// whose decoder checks their values.
pub use crate::frame::setting as id;

/// The initial flow-control window of every stream and of the connection (§6.9.2).
pub const DEFAULT_WINDOW: u32 = 65_535;

/// The initial HPACK dynamic table size (§6.5.2).
pub const DEFAULT_HEADER_TABLE_SIZE: u32 = 4_096;

/// One endpoint's settings. `None` for the two that start unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// SETTINGS_HEADER_TABLE_SIZE: the largest HPACK dynamic table the sender's decoder keeps.
    pub header_table_size: u32,
    /// SETTINGS_ENABLE_PUSH.
    pub enable_push: bool,
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams the sender lets the peer open at once.
    pub max_concurrent_streams: Option<u32>,
    /// SETTINGS_INITIAL_WINDOW_SIZE: each new stream's send window at the peer.
    pub initial_window_size: u32,
    /// SETTINGS_MAX_FRAME_SIZE: the largest payload the sender accepts.
    pub max_frame_size: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE: the largest decoded header list the sender accepts.
    pub max_header_list_size: Option<u32>,
}

impl Default for Settings {
    /// The values in force before any SETTINGS frame (§6.5.2).
    fn default() -> Self {
        Settings {
            header_table_size: DEFAULT_HEADER_TABLE_SIZE,
            enable_push: true,
            max_concurrent_streams: None,
            initial_window_size: DEFAULT_WINDOW,
            max_frame_size: MIN_MAX_FRAME_SIZE,
            max_header_list_size: None,
        }
    }
}

impl Settings {
    /// Applies a SETTINGS frame's parameters in order (the decoder already checked their
    /// values). Unknown identifiers are ignored.
    pub fn apply(&mut self, params: SettingsPayload<'_>) {
        for (k, v) in params.iter() {
            match k {
                id::HEADER_TABLE_SIZE => self.header_table_size = v,
                id::ENABLE_PUSH => self.enable_push = v == 1,
                id::MAX_CONCURRENT_STREAMS => self.max_concurrent_streams = Some(v),
                id::INITIAL_WINDOW_SIZE => self.initial_window_size = v,
                id::MAX_FRAME_SIZE => self.max_frame_size = v,
                id::MAX_HEADER_LIST_SIZE => self.max_header_list_size = Some(v),
                _ => {}
            }
        }
    }

    /// The parameters that differ from the RFC's initial values, as a SETTINGS payload.
    /// ENABLE_PUSH is always sent when false, so that a client says it refuses pushes and a
    /// server repeats that it sends none.
    pub fn to_payload(&self) -> Vec<u8> {
        let d = Settings::default();
        let mut out = Vec::with_capacity(36);
        let mut put = |k: u16, v: u32| {
            out.extend_from_slice(&k.to_be_bytes());
            out.extend_from_slice(&v.to_be_bytes());
        };
        if self.header_table_size != d.header_table_size {
            put(id::HEADER_TABLE_SIZE, self.header_table_size);
        }
        if !self.enable_push {
            put(id::ENABLE_PUSH, 0);
        }
        if let Some(n) = self.max_concurrent_streams {
            put(id::MAX_CONCURRENT_STREAMS, n);
        }
        if self.initial_window_size != d.initial_window_size {
            put(id::INITIAL_WINDOW_SIZE, self.initial_window_size);
        }
        if self.max_frame_size != d.max_frame_size {
            put(id::MAX_FRAME_SIZE, self.max_frame_size);
        }
        if let Some(n) = self.max_header_list_size {
            put(id::MAX_HEADER_LIST_SIZE, n);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trips_and_the_last_value_wins() {
        let ours = Settings {
            header_table_size: 0,
            enable_push: false,
            max_concurrent_streams: Some(100),
            initial_window_size: 1 << 20,
            max_frame_size: 1 << 15,
            max_header_list_size: Some(16 << 10),
        };
        let p = ours.to_payload();
        assert_eq!(p.len(), 36);
        let mut s = Settings::default();
        s.apply(SettingsPayload(&p));
        assert_eq!(s, ours);
        let twice = [0, 3, 0, 0, 0, 1, 0, 3, 0, 0, 0, 2, 0, 0x77, 1, 2, 3, 4];
        s.apply(SettingsPayload(&twice));
        assert_eq!(s.max_concurrent_streams, Some(2));
        assert!(Settings::default().to_payload().is_empty());
    }
}
