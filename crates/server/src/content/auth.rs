//! `--auth FILE`: HTTP Basic authentication (RFC 7617) against an
//! htpasswd-style file of bcrypt hashes.
//!
//! The file is Apache's `htpasswd` format, one `user:hash` per line (`#`
//! comments and blank lines allowed), as `htpasswd -B` writes it. Only bcrypt
//! (`$2y$`, `$2b$`, `$2a$`) is accepted: at start, plaintext, crypt(3) DES,
//! `{SHA}`, MD5 (`$apr1$`, `$1$`) and anything else are refused with one line
//! naming the line, the user and why, so that a weak file never goes live.
//! Limits, since the file comes from outside: at most [`MAX_FILE`] bytes,
//! [`MAX_USERS`] users, and a bcrypt cost of at most [`MAX_COST`] (each miss
//! of the cache below costs one hash at that cost, on a serving thread).
//!
//! Every request is checked, `/-/status` and `/-/metrics` included, before
//! anything else is looked at; a request without valid credentials gets `401`
//! with `WWW-Authenticate: Basic realm="servelab", charset="UTF-8"`.
//!
//! An unknown user costs what a known one does, whatever costs the file
//! mixes: every uncached check verifies the password against one hash of
//! each distinct cost in the file (the user's own at its cost, a dummy at
//! each other cost; an unknown user gets only dummies), and the user is found
//! by comparing every name in full, so neither the time nor the answer says
//! which names exist. With one cost in the file (the usual case) that is one
//! hash per check; with costs 5 and 10 it is one of each, about 3 % more than
//! cost 10 alone. SECURITY.md says why this and not a dummy at the highest
//! cost (which tells the low-cost users from unknown ones) or refusing mixed
//! files (which makes every user of an old file reset their password).
//! Verified credentials go into a bounded cache ([`CACHE_MAX`]) keyed
//! by a keyed hash (SipHash with a random key, `RandomState`) of user and
//! password, so a keep-alive client pays bcrypt once, not per request, and the
//! cache holds no password. Failures are never cached.

use std::collections::HashSet;
use std::hash::BuildHasher;
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;

use base64::Engine as _;

use crate::error::ServerError;

/// Largest password file read (a million bytes is thousands of users).
pub(crate) const MAX_FILE: u64 = 1 << 20;
/// Most users in one file.
pub(crate) const MAX_USERS: usize = 10_000;
/// Highest bcrypt cost accepted. A cache miss pays one hash on a serving
/// thread (an event loop stalls meanwhile): measured with `htpasswd -vb` on
/// the 2 shared cores of the development machine, cost 5 (`htpasswd -B`'s
/// default) takes about 8 ms, 12 takes 0.71 s and 14 took 1.77 s.
pub(crate) const MAX_COST: u32 = 12;
/// Most verified credentials remembered; when full, the cache starts afresh.
pub(crate) const CACHE_MAX: usize = 1024;
/// Longest `Authorization` value looked at; a longer one is refused unread.
const MAX_CREDENTIALS: usize = 1024;

/// The realm of the `WWW-Authenticate` challenge.
pub(crate) const CHALLENGE: &[u8] =
    b"WWW-Authenticate: Basic realm=\"servelab\", charset=\"UTF-8\"\r\n";

/// The users of a server started with `--auth`.
pub(crate) struct Auth {
    users: Vec<User>,
    /// One hash of each distinct cost in the file, highest cost first:
    /// checked in place of the user's own hash at the other costs, and
    /// instead of it when the user is unknown (see [`Auth::hashes_for`]).
    dummies: Vec<(u32, String)>,
    key: std::hash::RandomState,
    cache: Mutex<HashSet<u64>>,
}

impl std::fmt::Debug for Auth {
    // No hashes in a debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("users", &self.users.len())
            .finish_non_exhaustive()
    }
}

struct User {
    name: Vec<u8>,
    hash: String,
    cost: u32,
}

impl Auth {
    /// Reads and checks the password file; the error says which line is wrong and why.
    pub(crate) fn load(path: &Path) -> Result<Auth, ServerError> {
        let fail = |message: String| ServerError::Auth {
            path: path.to_path_buf(),
            message,
        };
        let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
        let mut text = String::new();
        file.take(MAX_FILE + 1)
            .read_to_string(&mut text)
            .map_err(|e| fail(e.to_string()))?;
        if text.len() as u64 > MAX_FILE {
            return Err(fail(format!("larger than {MAX_FILE} bytes")));
        }
        let users = parse(&text).map_err(fail)?;
        let mut costs: Vec<u32> = users.iter().map(|u| u.cost).collect();
        costs.sort_unstable_by(|a, b| b.cmp(a));
        costs.dedup();
        let dummies = costs
            .into_iter()
            .map(|cost| {
                bcrypt::hash("servelab: no such user", cost)
                    .map(|hash| (cost, hash))
                    .map_err(|e| fail(format!("cannot make a dummy hash of cost {cost}: {e}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Auth {
            users,
            dummies,
            key: std::hash::RandomState::new(),
            cache: Mutex::new(HashSet::new()),
        })
    }

    /// Whether the request head (its raw bytes) carries valid credentials.
    pub(crate) fn allows(&self, head: &[u8]) -> bool {
        self.allows_value(authorization(head))
    }

    /// Whether `value`, a request's one `Authorization` value (`None`: none, or
    /// more than one), carries valid credentials.
    pub(crate) fn allows_value(&self, value: Option<&[u8]>) -> bool {
        let Some((user, password)) = credentials(value) else {
            return false;
        };
        let tag = self.key.hash_one((&user, &password));
        if self.cache().contains(&tag) {
            return true;
        }
        let mut found = None;
        for u in &self.users {
            if same(&u.name, &user) {
                found = Some(u);
            }
        }
        // Every hash is verified and only the first answer (the user's own
        // hash, when the user exists) counts: the time is one hash of each
        // distinct cost in the file, for anyone.
        let mut ok = found.is_some();
        for (i, hash) in self.hashes_for(found).into_iter().enumerate() {
            let right = std::hint::black_box(bcrypt::verify(&password, hash).unwrap_or(false));
            if i == 0 {
                ok &= right;
            }
        }
        if ok {
            let mut cache = self.cache();
            if cache.len() >= CACHE_MAX {
                cache.clear();
            }
            cache.insert(tag);
        }
        ok
    }

    /// The hashes an uncached check verifies: the user's own first (when
    /// the user exists), then a dummy of each other cost in the file; so one
    /// hash of each distinct cost, known user or not.
    fn hashes_for<'a>(&'a self, found: Option<&'a User>) -> Vec<&'a str> {
        let own = found.map(|u| (u.cost, u.hash.as_str()));
        let dummies = self
            .dummies
            .iter()
            .filter(|(cost, _)| own.is_none_or(|(c, _)| c != *cost))
            .map(|(_, hash)| hash.as_str());
        own.map(|(_, hash)| hash)
            .into_iter()
            .chain(dummies)
            .collect()
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashSet<u64>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The users of a password file, or why it cannot be used.
fn parse(text: &str) -> Result<Vec<User>, String> {
    let mut users: Vec<User> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, hash)) = line.split_once(':') else {
            return Err(format!(
                "line {n}: expected USER:HASH (as `htpasswd -B` writes)"
            ));
        };
        if name.is_empty() || name.chars().any(char::is_control) {
            return Err(format!(
                "line {n}: a user name must be non-empty printable text"
            ));
        }
        if let Some(why) = weak(hash) {
            return Err(format!(
                "line {n}, user {name}: {why}; make a bcrypt hash with `htpasswd -B FILE {name}`"
            ));
        }
        let cost = match cost_of(hash) {
            Some(c) if c > MAX_COST => {
                return Err(format!(
                    "line {n}, user {name}: bcrypt cost {c} is above {MAX_COST} (every uncached \
                     request would pay it); use `htpasswd -B -C {MAX_COST}` or less"
                ));
            }
            Some(c) => c,
            None => return Err(format!("line {n}, user {name}: not a valid bcrypt hash")),
        };
        if users.iter().any(|u| u.name == name.as_bytes()) {
            return Err(format!("line {n}: user {name} appears twice"));
        }
        if users.len() == MAX_USERS {
            return Err(format!("more than {MAX_USERS} users"));
        }
        users.push(User {
            name: name.as_bytes().to_vec(),
            hash: hash.to_owned(),
            cost,
        });
    }
    if users.is_empty() {
        return Err("no users (add one with `htpasswd -B -c FILE USER`)".to_owned());
    }
    Ok(users)
}

/// Why a hash is refused, for every scheme but bcrypt.
fn weak(hash: &str) -> Option<&'static str> {
    if ["$2y$", "$2b$", "$2a$"].iter().any(|p| hash.starts_with(p)) {
        return None;
    }
    Some(if hash.starts_with("$apr1$") || hash.starts_with("$1$") {
        "MD5 password hashes are fast to crack and are refused"
    } else if hash.starts_with("{SHA}") {
        "unsalted SHA-1 password hashes are fast to crack and are refused"
    } else if hash.starts_with("$5$") || hash.starts_with("$6$") {
        "SHA-crypt hashes are not supported; only bcrypt is"
    } else if hash.starts_with("$2x$") {
        "$2x$ marks hashes made by a buggy bcrypt and is refused"
    } else {
        "a plaintext or crypt(3) DES password is refused"
    })
}

/// The cost of a `$2?$NN$...` hash of the right length.
fn cost_of(hash: &str) -> Option<u32> {
    if hash.len() != 60 || hash.as_bytes().get(6) != Some(&b'$') {
        return None;
    }
    hash.get(4..6)?
        .parse()
        .ok()
        .filter(|c| (4..=31).contains(c))
}

/// The value of the one `Authorization` field of a head; more than one: none.
fn authorization(head: &[u8]) -> Option<&[u8]> {
    let mut value = None;
    for line in head.split(|&b| b == b'\n').skip(1) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        if line[..colon].eq_ignore_ascii_case(b"authorization") {
            if value.is_some() {
                return None;
            }
            value = Some(line[colon + 1..].trim_ascii());
        }
    }
    value
}

/// The user and password of a Basic `Authorization` value. Another scheme,
/// bad base64 or no colon: none.
fn credentials(value: Option<&[u8]>) -> Option<(Vec<u8>, Vec<u8>)> {
    let value = value?;
    if value.len() > MAX_CREDENTIALS || value.len() < 6 {
        return None;
    }
    let (scheme, token) = value.split_at(5);
    if !scheme.eq_ignore_ascii_case(b"basic") || !token.starts_with(b" ") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(token.trim_ascii())
        .ok()?;
    // RFC 7617: the user ends at the first colon; the password may hold more.
    let colon = decoded.iter().position(|&b| b == b':')?;
    Some((decoded[..colon].to_vec(), decoded[colon + 1..].to_vec()))
}

/// Equality that looks at every byte of equal-length names, so the time of a
/// match does not say how much of a name was right.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    // `htpasswd -nbB -C 4 alice 'open sesame'` and `... bob 'p:ss'`.
    const ALICE: &str = "alice:$2y$04$fuOjydCsmQ/JjZ0nf22ipu5p8OPAkHr0TQcPjDjGos8q0pgx7kv8C";
    const BOB: &str = "bob:$2y$04$ZppsyoVLQIuXbiF96qIrp.AyqYWpIYv.ne1/UHoA2XMyGZoaFim3O";

    fn auth(text: &str) -> Result<Auth, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users");
        std::fs::write(&path, text).unwrap();
        Auth::load(&path).map_err(|e| crate::error::Chain(&e).to_string())
    }

    fn head(user_pass: &str) -> Vec<u8> {
        let token = base64::engine::general_purpose::STANDARD.encode(user_pass);
        format!("GET / HTTP/1.1\r\nHost: t\r\nAuthorization: Basic {token}\r\n\r\n").into_bytes()
    }

    #[test]
    fn right_credentials_pass_and_everything_else_does_not() {
        let a = auth(&format!("# users\n{ALICE}\n\n{BOB}\n")).unwrap();
        assert!(a.allows(&head("alice:open sesame")));
        assert!(a.allows(&head("alice:open sesame")), "from the cache");
        assert!(a.allows(&head("bob:p:ss")), "a colon in the password");
        assert!(!a.allows(&head("alice:open sesamE")));
        assert!(!a.allows(&head("Alice:open sesame")));
        assert!(!a.allows(&head("carol:open sesame")));
        assert!(!a.allows(&head("alice")));
        assert!(!a.allows(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
        let bearer = b"GET / HTTP/1.1\r\nAuthorization: Bearer YWxpY2U6b3BlbiBzZXNhbWU=\r\n\r\n";
        assert!(!a.allows(bearer));
        let lower = b"GET / HTTP/1.1\r\nauthorization: basic YWxpY2U6b3BlbiBzZXNhbWU=\r\n\r\n";
        assert!(a.allows(lower), "scheme and field name ignore case");
        let twice = b"GET / HTTP/1.1\r\nAuthorization: Basic YWxpY2U6b3BlbiBzZXNhbWU=\r\n\
                      Authorization: Basic Ym9iOnA6c3M=\r\n\r\n";
        assert!(!a.allows(twice), "two Authorization fields");
        assert!(!a.allows(b"GET / HTTP/1.1\r\nAuthorization: Basic !!!\r\n\r\n"));
    }

    #[test]
    fn the_cache_is_bounded_and_holds_only_successes() {
        let a = auth(ALICE).unwrap();
        assert!(!a.allows(&head("alice:wrong")));
        assert!(a.cache().is_empty());
        assert!(a.allows(&head("alice:open sesame")));
        assert_eq!(a.cache().len(), 1);
        a.cache().extend(0..CACHE_MAX as u64 + 5);
        assert!(
            a.allows(&head("alice:open sesame")),
            "still known, or checked again"
        );
        assert!(a.cache().len() <= CACHE_MAX + 6);
        let mut full = a.cache();
        full.clear();
        full.extend(0..CACHE_MAX as u64);
        drop(full);
        assert!(a.allows(&head("alice:open sesame")));
        assert_eq!(a.cache().len(), 1, "a full cache starts afresh");
    }

    #[test]
    fn weak_and_malformed_files_are_refused_with_the_reason() {
        let cases = [
            (
                "alice:secret",
                "line 1, user alice: a plaintext or crypt(3) DES password",
            ),
            ("carol:$apr1$kUhpBK7a$6jzD6h8UJmEZ8NXGyptf80", "MD5"),
            ("dave:{SHA}EfatjsUqKYSrqv18O1FlA3hcIHI=", "unsalted SHA-1"),
            ("eve:$6$salt$hash", "SHA-crypt"),
            ("no colon here", "line 1: expected USER:HASH"),
            ("# only a comment\n", "no users"),
            ("", "no users"),
            ("x:$2y$04$short", "not a valid bcrypt hash"),
        ];
        for (text, why) in cases {
            let err = auth(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
            assert!(
                err.contains("htpasswd") || !why.contains("line 1,"),
                "{err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        let err = auth(&format!("{ALICE}\n{ALICE}\n")).unwrap_err();
        assert!(err.contains("line 2: user alice appears twice"), "{err}");
        let costly = ALICE.replace("$04$", "$13$");
        let err = auth(&costly).unwrap_err();
        assert!(err.contains("cost 13 is above 12"), "{err}");
    }

    /// Regression: the dummy hash of an unknown user took the first user's
    /// cost, so with alice at cost 4 and carl at cost 6 an unknown user cost
    /// what alice costs and a wrong password told carl apart (and, with carl
    /// on line 1, alice). Now every check pays one hash of each distinct cost.
    #[test]
    fn an_unknown_user_pays_the_same_costs_as_every_known_one() {
        let carl = format!("carl:{}", bcrypt::hash("carl's", 6).unwrap());
        let dave = format!("dave:{}", bcrypt::hash("dave's", 5).unwrap());
        for text in [
            format!("{ALICE}\n{carl}\n"),
            format!("{carl}\n{ALICE}\n"),
            format!("{dave}\n{carl}\n{ALICE}\n{BOB}\n"),
            ALICE.to_owned(),
        ] {
            let a = auth(&text).unwrap();
            let costs = |user: Option<&User>| {
                let mut c: Vec<u32> = a
                    .hashes_for(user)
                    .iter()
                    .map(|h| cost_of(h).unwrap())
                    .collect();
                c.sort_unstable();
                c
            };
            let unknown = costs(None);
            let mut distinct: Vec<u32> = a.users.iter().map(|u| u.cost).collect();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(unknown, distinct, "{text}");
            for u in &a.users {
                assert_eq!(costs(Some(u)), unknown, "{text}");
                assert_eq!(a.hashes_for(Some(u))[0], u.hash, "own hash first");
            }
        }
        let a = auth(&format!("{ALICE}\n{carl}\n")).unwrap();
        assert!(a.allows(&head("carl:carl's")));
        assert!(a.allows(&head("alice:open sesame")));
        assert!(
            !a.allows(&head("alice:carl's")),
            "a dummy's answer never counts"
        );
        assert!(!a.allows(&head("nobody:servelab: no such user")));
    }

    #[test]
    fn names_compare_in_full() {
        assert!(same(b"alice", b"alice"));
        assert!(!same(b"alice", b"alicf"));
        assert!(!same(b"alice", b"alic"));
        assert!(!same(b"", b"a"));
    }
}
