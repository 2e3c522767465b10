//! The load a user chooses, as one typed value: [`LoadSettings`], which
//! `servelab load`'s flags build and an experiment's `[load]` section
//! (servelab-lab) deserialises into, so that a setting added here (HTTP/2's
//! `protocol` and `streams`, say) reaches both without a second parser.
//!
//! It holds what describes the load: who sends (closed users or open
//! arrivals), for how long, with which timeouts and retries, whether TLS
//! sessions resume, and HTTP/1.1 or HTTP/2 with its streams. Where the load
//! goes (the targets), how the client runs (threads, seed, segment) and what
//! passes (thresholds) stay with the caller: the CLI's other flags, the lab's
//! own keys.
//!
//! Every field is optional. [`LoadSettings::apply`] writes the ones given onto
//! a [`LoadSpec`] and leaves the others at the spec's values (the caller's
//! defaults: [`LoadSpec::new`]'s unless it changed them); it refuses, in one
//! line naming the setting, what means nothing together (think time for open
//! arrivals, streams without HTTP/2). [`LoadSpec::validate`] then checks the
//! ranges, as for any spec.
//!
//! A value is read as its flag reads it, from text: `users = 8` and
//! `users = "8"` are the same (a templated value of an experiment is text
//! until its point is known), DIST and TIME have the syntax of `--think` and
//! `--duration`, and a wrong value names what was expected:
//!
//! ```
//! use servelab_load::{LoadSettings, LoadSpec, Protocol, Target};
//!
//! let s: LoadSettings = toml::from_str("users = 10\nprotocol = \"h2\"\nstreams = \"100\"")?;
//! let mut spec = LoadSpec::new(vec![Target::new("https://127.0.0.1:8443/")]);
//! s.apply(&mut spec)?;
//! assert_eq!(spec.protocol, Protocol::H2 { streams: 100 });
//! let e = toml::from_str::<LoadSettings>("users = \"many\"").unwrap_err();
//! assert!(e.to_string().contains("`many` is not a whole number"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use servelab_dist::Dist;

use crate::error::LoadError;
use crate::protocol::Protocol;
use crate::spec::{Arrival, LoadSpec, Workload};

/// Most connections of an open workload when `connections` is not given
/// (`--connections`'s default).
pub const DEFAULT_CONNECTIONS: u32 = 100;

/// The load's settings; see the module docs. Each field names its flag.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSettings {
    /// Closed users (`--users`); with HTTP/2, connections of `streams`
    /// closed users each.
    #[serde(default, deserialize_with = "read")]
    pub users: Option<u32>,
    /// Requests per connection (`--session`); absent: a connection lasts the
    /// run.
    #[serde(default, deserialize_with = "read")]
    pub session: Option<u32>,
    /// Think time of closed users between an answer and the next request
    /// (`--think`, DIST).
    #[serde(default, deserialize_with = "read")]
    pub think: Option<Dist>,
    /// Open arrivals: requests started per second (`--rate`).
    #[serde(default, deserialize_with = "read")]
    pub rate: Option<f64>,
    /// Spacing of open arrivals (`--arrival`: `poisson` or `uniform`).
    #[serde(default, deserialize_with = "read")]
    pub arrival: Option<Arrival>,
    /// Most connections of open arrivals (`--connections`).
    #[serde(default, deserialize_with = "read")]
    pub connections: Option<u32>,
    /// How long the run lasts (`--duration`, TIME).
    #[serde(default, deserialize_with = "read")]
    pub duration: Option<Duration>,
    /// Timeout of each attempt (`--timeout`, DIST).
    #[serde(default, deserialize_with = "read")]
    pub timeout: Option<Dist>,
    /// Retries after a timeout (`--retries`: a number or `inf`).
    #[serde(default, deserialize_with = "read")]
    pub retries: Option<Retries>,
    /// Wait before a retry (`--retry-wait`, DIST).
    #[serde(default, deserialize_with = "read")]
    pub retry_wait: Option<Dist>,
    /// Whether a new TLS connection resumes an earlier session
    /// (`--tls-resume`: `true`/`on` or `false`/`off`).
    #[serde(default, deserialize_with = "read")]
    pub tls_resume: Option<bool>,
    /// `http/1.1` or `h2` (`--h2`).
    #[serde(default, deserialize_with = "read")]
    pub protocol: Option<Protocol>,
    /// HTTP/2: requests in flight per connection (`--streams`; default 1).
    #[serde(default, deserialize_with = "read")]
    pub streams: Option<u32>,
    /// How long the client polls its sockets before it blocks, while
    /// requests are in flight (`--poll-before-sleep`, TIME; `0` is off;
    /// absent: the protocol's default, see [`LoadSpec::poll_before_sleep`]).
    #[serde(default, deserialize_with = "read")]
    pub poll_before_sleep: Option<Duration>,
    /// How long the client sleeps on its own timer before it blocks, while
    /// requests are in flight and none is ready (`--nap`, TIME; `0` is off,
    /// the default; see [`LoadSpec::nap`]).
    #[serde(default, deserialize_with = "read")]
    pub nap: Option<Duration>,
}

/// Retries after a timeout: a count, or without end (`inf`, seed 002's users).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retries {
    /// At most this many.
    Count(u32),
    /// Without end.
    Forever,
}

impl Retries {
    /// As [`LoadSpec::retries`] holds it: `None` without end.
    pub fn limit(self) -> Option<u32> {
        match self {
            Retries::Count(n) => Some(n),
            Retries::Forever => None,
        }
    }
}

impl FromStr for Retries {
    type Err = String;
    fn from_str(s: &str) -> Result<Retries, String> {
        match s.trim() {
            "inf" | "infinite" => Ok(Retries::Forever),
            n => n
                .parse()
                .map(Retries::Count)
                .map_err(|_| format!("`{s}`: expected a number or `inf`")),
        }
    }
}

impl LoadSettings {
    /// The name of every field, as a TOML key (what `from_text` takes): for
    /// a caller that checks keys before their values are known (the lab's
    /// templated `[load]`). A test holds it to the fields.
    pub const KEYS: &'static [&'static str] = &[
        "users",
        "session",
        "think",
        "rate",
        "arrival",
        "connections",
        "duration",
        "timeout",
        "retries",
        "retry_wait",
        "tls_resume",
        "protocol",
        "streams",
        "poll_before_sleep",
        "nap",
    ];

    /// The settings given as (key, text) pairs, each key a field's name
    /// (`retry_wait`): how a flag's or a template's text is read, by the same
    /// parser as the TOML. The message names no key; the caller, who knows
    /// where the text came from, does.
    pub fn from_text<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<LoadSettings, String> {
        let map = de::value::MapDeserializer::<_, de::value::Error>::new(pairs.into_iter());
        LoadSettings::deserialize(map).map_err(|e| e.to_string())
    }

    /// Writes the given settings onto `spec` (see the module docs).
    pub fn apply(&self, spec: &mut LoadSpec) -> Result<(), LoadError> {
        let bad = |s: &str| Err(LoadError::Spec(s.to_string()));
        match self.rate {
            Some(rate) => {
                if self.users.is_some() {
                    return bad("users and rate: closed users or open arrivals, not both");
                }
                if self.think.is_some() {
                    return bad("think is the time closed users wait; open arrivals (rate) \
                                do not think");
                }
                let session = match spec.workload {
                    Workload::Open { session, .. } => session,
                    Workload::Closed { .. } => None,
                };
                spec.workload = Workload::Open {
                    rate,
                    arrival: self.arrival.unwrap_or_default(),
                    connections: self.connections.unwrap_or(DEFAULT_CONNECTIONS),
                    session: self.session.or(session),
                };
            }
            None => {
                if self.arrival.is_some() || self.connections.is_some() {
                    return bad("arrival and connections shape open arrivals: they need rate");
                }
                if let Workload::Closed {
                    users,
                    session,
                    think,
                } = &mut spec.workload
                {
                    *users = self.users.unwrap_or(*users);
                    *session = self.session.or(*session);
                    *think = self.think.unwrap_or(*think);
                } else if self.users.is_some() {
                    spec.workload = Workload::Closed {
                        users: self.users.unwrap_or_default(),
                        session: self.session,
                        think: self.think.unwrap_or(Dist::ZERO),
                    };
                }
            }
        }
        // HTTP/1.1 carries one request at a time: `streams = 1` says the same
        // (an axis of streams may hold HTTP/1.1's one), more needs HTTP/2.
        let h2 = match self.protocol {
            Some(p) => p.is_h2(),
            None => spec.protocol.is_h2(),
        };
        match (h2, self.streams) {
            (true, streams) => {
                spec.protocol = Protocol::H2 {
                    streams: streams.unwrap_or(spec.protocol.streams()),
                }
            }
            (false, Some(n)) if n != 1 => {
                return bad("streams above 1 are HTTP/2's: they need protocol h2");
            }
            (false, _) => spec.protocol = Protocol::Http1,
        }
        if let Some(d) = self.duration {
            spec.duration = Some(d);
        }
        if let Some(t) = self.timeout {
            spec.timeout = Some(t);
        }
        if let Some(r) = self.retries {
            spec.retries = r.limit();
        }
        if let Some(w) = self.retry_wait {
            spec.retry_wait = w;
        }
        if let Some(r) = self.tls_resume {
            spec.tls.resume = r;
        }
        if let Some(d) = self.poll_before_sleep {
            spec.poll_before_sleep = Some(d);
        }
        if let Some(d) = self.nap {
            spec.nap = d;
        }
        Ok(())
    }
}

/// A value read from its text, as its flag reads it; the message says what
/// was expected.
trait FromText: Sized {
    fn from_text(text: &str) -> Result<Self, String>;
}

impl FromText for u32 {
    fn from_text(text: &str) -> Result<u32, String> {
        text.trim()
            .parse()
            .map_err(|_| format!("`{text}` is not a whole number"))
    }
}

impl FromText for f64 {
    fn from_text(text: &str) -> Result<f64, String> {
        text.trim()
            .parse()
            .map_err(|_| format!("`{text}` is not a number"))
    }
}

impl FromText for bool {
    fn from_text(text: &str) -> Result<bool, String> {
        match text.trim() {
            "true" | "on" => Ok(true),
            "false" | "off" => Ok(false),
            _ => Err(format!("expected true or false (on or off), not `{text}`")),
        }
    }
}

impl FromText for Duration {
    fn from_text(text: &str) -> Result<Duration, String> {
        servelab_dist::parse_duration(text).map_err(|e| e.to_string())
    }
}

/// The types whose `FromStr` already says what is wrong.
macro_rules! from_str_text {
    ($($t:ty),*) => {$(
        impl FromText for $t {
            fn from_text(text: &str) -> Result<$t, String> {
                text.parse().map_err(|e: <$t as FromStr>::Err| e.to_string())
            }
        }
    )*};
}
from_str_text!(Dist, Retries, Protocol);

impl FromText for Arrival {
    fn from_text(text: &str) -> Result<Arrival, String> {
        text.trim().parse().map_err(|e| match e {
            LoadError::Spec(why) => why,
            other => other.to_string(),
        })
    }
}

/// Deserialises a field from a string, a number or a boolean, read as text.
fn read<'de, D: Deserializer<'de>, T: FromText>(d: D) -> Result<Option<T>, D::Error> {
    struct Text<T>(PhantomData<T>);
    impl<T: FromText> Visitor<'_> for Text<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string, a number or a boolean")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            T::from_text(v).map_err(E::custom)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<T, E> {
            self.visit_str(&v.to_string())
        }
    }
    d.deserialize_any(Text(PhantomData)).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Target;

    fn spec() -> LoadSpec {
        LoadSpec::new(vec![Target::new("http://127.0.0.1/")])
    }

    fn settings(text: &str) -> Result<LoadSettings, String> {
        toml::from_str(text).map_err(|e| e.message().to_string())
    }

    /// Every field, read from TOML and written onto a spec: a field added to
    /// the settings but not to `apply` (or the other way) fails here.
    #[test]
    fn every_setting_reaches_the_spec() {
        let s = settings(
            "users = 8\nsession = \"10\"\nthink = \"exp:1s\"\nduration = \"30s\"\n\
             timeout = \"2s\"\nretries = \"inf\"\nretry_wait = \"0.5s\"\ntls_resume = false\n\
             protocol = \"h2\"\nstreams = 100\npoll_before_sleep = \"5us\"\nnap = \"10us\"",
        )
        .unwrap();
        let mut sp = spec();
        s.apply(&mut sp).unwrap();
        assert_eq!(
            sp.workload,
            Workload::Closed {
                users: 8,
                session: Some(10),
                think: "exp:1s".parse().unwrap()
            }
        );
        assert_eq!(sp.duration, Some(Duration::from_secs(30)));
        assert_eq!(sp.timeout, Some("2s".parse().unwrap()));
        assert_eq!(sp.retries, None);
        assert_eq!(sp.retry_wait, "0.5s".parse().unwrap());
        assert!(!sp.tls.resume);
        assert_eq!(sp.protocol, Protocol::H2 { streams: 100 });
        assert_eq!(sp.poll_before_sleep, Some(Duration::from_micros(5)));
        assert_eq!(sp.nap, Duration::from_micros(10));

        let open = settings("rate = 500.5\narrival = \"uniform\"\nconnections = 7").unwrap();
        let mut sp = spec();
        open.apply(&mut sp).unwrap();
        assert_eq!(
            sp.workload,
            Workload::Open {
                rate: 500.5,
                arrival: Arrival::Uniform,
                connections: 7,
                session: None
            }
        );
    }

    #[test]
    fn poll_before_sleep_is_the_protocols_default_unless_given_and_0_is_off() {
        use crate::spec::{
            DEFAULT_POLL_BEFORE_SLEEP_H2, DEFAULT_POLL_BEFORE_SLEEP_H2_TLS,
            DEFAULT_POLL_BEFORE_SLEEP_HTTP1,
        };
        let mut sp = spec();
        settings("").unwrap().apply(&mut sp).unwrap();
        assert_eq!(sp.poll_before_sleep(), DEFAULT_POLL_BEFORE_SLEEP_HTTP1);
        settings("protocol = \"h2\"")
            .unwrap()
            .apply(&mut sp)
            .unwrap();
        assert_eq!(sp.poll_before_sleep, None);
        assert_eq!(sp.poll_before_sleep(), DEFAULT_POLL_BEFORE_SLEEP_H2);
        // Over TLS (every target https) its own default; a mixed run keeps cleartext's.
        sp.targets = vec![Target::new("https://127.0.0.1/")];
        assert_eq!(sp.poll_before_sleep(), DEFAULT_POLL_BEFORE_SLEEP_H2_TLS);
        sp.targets.push(Target::new("http://127.0.0.1/"));
        assert_eq!(sp.poll_before_sleep(), DEFAULT_POLL_BEFORE_SLEEP_H2);
        sp.targets.truncate(1);
        // `0` turns it off, for HTTP/2 too.
        settings("poll_before_sleep = \"0\"")
            .unwrap()
            .apply(&mut sp)
            .unwrap();
        assert_eq!(sp.poll_before_sleep(), Duration::ZERO);
        assert!(sp.validate().is_ok());
        // Longer than 1ms is refused, naming the flag.
        settings("poll_before_sleep = \"2ms\"")
            .unwrap()
            .apply(&mut sp)
            .unwrap();
        let e = sp.validate().unwrap_err().to_string();
        assert!(e.contains("--poll-before-sleep must be at most 1ms"), "{e}");
        assert!(settings("poll_before_sleep = \"soon\"").is_err());
    }

    #[test]
    fn absent_settings_keep_the_callers_values() {
        let mut sp = spec();
        sp.retries = None;
        sp.workload = Workload::Closed {
            users: 3,
            session: Some(2),
            think: Dist::ZERO,
        };
        settings("think = \"1s\"").unwrap().apply(&mut sp).unwrap();
        assert_eq!(
            sp.workload,
            Workload::Closed {
                users: 3,
                session: Some(2),
                think: "1s".parse().unwrap()
            }
        );
        assert_eq!(sp.retries, None, "not reset to load's default of 0");
        assert_eq!(sp.protocol, Protocol::Http1);
        let mut sp = spec();
        settings("protocol = \"h2\"")
            .unwrap()
            .apply(&mut sp)
            .unwrap();
        assert_eq!(sp.protocol, Protocol::H2 { streams: 1 });
        // HTTP/1.1's one request at a time is one stream.
        let mut sp = spec();
        settings("protocol = \"http/1.1\"\nstreams = 1")
            .unwrap()
            .apply(&mut sp)
            .unwrap();
        assert_eq!(sp.protocol, Protocol::Http1);
    }

    #[test]
    fn a_bad_value_says_what_was_expected() {
        for (text, want) in [
            ("users = \"many\"", "`many` is not a whole number"),
            ("users = -1", "`-1` is not a whole number"),
            ("rate = \"fast\"", "`fast` is not a number"),
            ("tls_resume = \"maybe\"", "expected true or false"),
            ("retries = \"lots\"", "expected a number or `inf`"),
            (
                "protocol = \"h3\"",
                "unknown protocol `h3` (http/1.1 or h2)",
            ),
            ("arrival = \"bursty\"", "unknown arrival `bursty`"),
            ("think = \"exp:zz\"", "exp:zz"),
            ("duration = \"soon\"", "soon"),
            ("requests = 100", "unknown field `requests`"),
        ] {
            let e = settings(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
            assert_eq!(e.trim().lines().count(), 1, "{text}: one line: {e}");
        }
    }

    /// `KEYS` is the list of fields that serde knows, in its order: an
    /// unknown key's message lists exactly them.
    #[test]
    fn the_keys_are_the_fields() {
        let e = LoadSettings::from_text([("nope", "1")]).unwrap_err();
        let listed: Vec<String> = LoadSettings::KEYS
            .iter()
            .map(|k| format!("`{k}`"))
            .collect();
        assert!(e.ends_with(&listed.join(", ")), "{e}");
    }

    #[test]
    fn text_pairs_are_read_as_toml_is() {
        let s = LoadSettings::from_text([("users", "8"), ("retry_wait", "40ms")]).unwrap();
        assert_eq!(s.users, Some(8));
        assert_eq!(s.retry_wait, Some("40ms".parse().unwrap()));
        assert_eq!(s, settings("users = 8\nretry_wait = \"40ms\"").unwrap());
        let e = LoadSettings::from_text([("users", "0x")]).unwrap_err();
        assert_eq!(e, "`0x` is not a whole number");
        let e = LoadSettings::from_text([("user", "8")]).unwrap_err();
        assert!(
            e.starts_with("unknown field `user`, expected one of"),
            "{e}"
        );
    }

    #[test]
    fn settings_that_mean_nothing_together_are_refused() {
        for (text, want) in [
            (
                "users = 2\nrate = 10",
                "closed users or open arrivals, not both",
            ),
            (
                "rate = 10\nthink = \"1s\"",
                "open arrivals (rate) do not think",
            ),
            ("connections = 5", "they need rate"),
            ("streams = 10", "streams above 1 are HTTP/2's"),
            (
                "protocol = \"http/1.1\"\nstreams = 10",
                "streams above 1 are HTTP/2's",
            ),
        ] {
            let e = settings(text).unwrap().apply(&mut spec()).unwrap_err();
            assert!(e.to_string().contains(want), "{text}: {e}");
        }
        // The ranges are the spec's to check, as for any spec.
        let mut sp = spec();
        settings("protocol = \"h2\"\nstreams = 0")
            .unwrap()
            .apply(&mut sp)
            .unwrap();
        assert!(sp.validate().unwrap_err().to_string().contains("--streams"));
    }
}
