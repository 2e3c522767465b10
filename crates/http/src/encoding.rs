//! Content codings and `Accept-Encoding` negotiation (RFC 9110 8.4 and 12.5.3), for serving
//! precompressed files (`X.br`, `X.zst`, `X.gz` beside `X`) as nginx's `gzip_static` and
//! Caddy's `precompressed` do, and, with `serve --compress`, bodies the server compresses
//! itself ([`negotiate_compress`]; which types are worth it is [`compressible`]'s one list).
//!
//! # The rules, and the choices RFC 9110 leaves to us
//! - Each element is a coding with an optional weight, `br;q=0.8`. A weight is `0` to `1` with
//!   at most three decimals (12.4.2); `q=0` means "not acceptable". Codings compare
//!   case-insensitively, and `x-gzip` is `gzip` (8.4.1.3). An element we cannot parse (a bad
//!   weight, stray bytes) is skipped: the other elements still say what the client wants, and
//!   the plain file stays available, so skipping can never make a response worse.
//! - `*` gives its weight to every coding not listed by name, `identity` included.
//! - No `Accept-Encoding` field at all: RFC 9110 says any coding is acceptable, but many
//!   clients (curl, scripts) then do not decode, so like nginx and Caddy we send the plain
//!   file. An empty field means "no coding, please": also the plain file.
//! - `identity` (the plain file) is acceptable unless the field says `identity;q=0`, or
//!   `*;q=0` without naming `identity`. When it is named, its weight competes with the others;
//!   when it is not, it is the fallback, chosen only when no encoded file is acceptable.
//! - Equal weights are broken by server preference: `br`, then `zstd`, then `gzip` (smallest
//!   output first for text), then `identity`.
//! - With on-the-fly compression the candidates are the files on disk, then the codings the
//!   server can produce. The client's weights decide first; on equal weights a file on disk
//!   wins over compressing (it was made offline, usually at a higher level, and costs no CPU),
//!   then server preference as above. So a browser's `gzip, deflate, br, zstd` gets `X.gz`
//!   when only that exists, but `br;q=1, gzip;q=0.5` gets brotli made on the fly.
//! - When the plain file is excluded and no acceptable encoded file exists, RFC 9110 12.5.3
//!   lets the server either ignore the field or refuse; we refuse with 406 Not Acceptable
//!   ([`Negotiated::NotAcceptable`]), since the client said in so many words that it cannot
//!   use the only thing we have. A client gets there only by asking for it.
//!
//! ```
//! use servelab_http::encoding::{Available, Coding, Negotiated, negotiate};
//! let on_disk = Available::NONE.with(Coding::Gzip).with(Coding::Br);
//! assert_eq!(negotiate(Some("gzip, br;q=0.5"), on_disk), Negotiated::Send(Coding::Gzip));
//! assert_eq!(negotiate(Some("gzip;q=0"), on_disk), Negotiated::Send(Coding::Identity));
//! assert_eq!(negotiate(None, on_disk), Negotiated::Send(Coding::Identity));
//! ```

/// A content coding the server can send: the plain file or one precompressed sibling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coding {
    /// No coding: the file itself.
    Identity,
    /// Brotli, from `X.br`.
    Br,
    /// Zstandard, from `X.zst`.
    Zstd,
    /// gzip, from `X.gz`.
    Gzip,
}

impl Coding {
    /// The encoded codings in server preference order (best first).
    pub const ENCODED: [Coding; 3] = [Coding::Br, Coding::Zstd, Coding::Gzip];

    /// The `Content-Encoding` token; `None` for identity, which is never sent.
    pub const fn token(self) -> Option<&'static str> {
        match self {
            Coding::Identity => None,
            Coding::Br => Some("br"),
            Coding::Zstd => Some("zstd"),
            Coding::Gzip => Some("gzip"),
        }
    }

    /// The file-name suffix of the precompressed sibling (`.br`, `.zst`, `.gz`); empty for
    /// identity.
    pub const fn suffix(self) -> &'static str {
        match self {
            Coding::Identity => "",
            Coding::Br => ".br",
            Coding::Zstd => ".zst",
            Coding::Gzip => ".gz",
        }
    }

    /// Server preference among equal weights: lower is better.
    const fn rank(self) -> u8 {
        match self {
            Coding::Br => 0,
            Coding::Zstd => 1,
            Coding::Gzip => 2,
            Coding::Identity => 3,
        }
    }

    const fn bit(self) -> u8 {
        1 << self.rank()
    }

    fn from_token(token: &str) -> Option<Coding> {
        let is = |s: &str| token.eq_ignore_ascii_case(s);
        if is("br") {
            Some(Coding::Br)
        } else if is("zstd") {
            Some(Coding::Zstd)
        } else if is("gzip") || is("x-gzip") {
            Some(Coding::Gzip)
        } else if is("identity") {
            Some(Coding::Identity)
        } else {
            None
        }
    }
}

/// A set of encoded codings: the precompressed siblings that exist for one file, or the codings
/// the server may compress it to (identity is always there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Available(u8);

impl Available {
    /// No precompressed sibling: negotiation always gives identity (or 406).
    pub const NONE: Available = Available(0);
    /// Every encoded coding: what the server can compress to.
    pub const ALL: Available =
        Available(Coding::Br.bit() | Coding::Zstd.bit() | Coding::Gzip.bit());

    /// This set plus `coding` (adding identity changes nothing).
    #[must_use]
    pub const fn with(self, coding: Coding) -> Available {
        match coding {
            Coding::Identity => self,
            c => Available(self.0 | c.bit()),
        }
    }

    /// Whether `coding` can be sent (identity always can).
    pub const fn has(self, coding: Coding) -> bool {
        matches!(coding, Coding::Identity) || self.0 & coding.bit() != 0
    }

    /// True when there is no precompressed sibling.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// The outcome of negotiation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Negotiated {
    /// Send this representation: the plain file or a precompressed sibling on disk.
    Send(Coding),
    /// Compress the plain file with this coding (never identity); only from
    /// [`negotiate_compress`].
    Compress(Coding),
    /// The client excluded the plain file and accepts none of the encoded ones that exist:
    /// answer 406 Not Acceptable.
    NotAcceptable,
}

/// A weight in thousandths, 0 to 1000.
type Weight = u16;

/// What one `Accept-Encoding` value says about each coding.
#[derive(Debug, Default)]
struct Prefs {
    /// Weight given by name to br, zstd, gzip, identity (indexed by rank).
    named: [Option<Weight>; 4],
    /// Weight of `*`.
    star: Option<Weight>,
}

impl Prefs {
    fn parse(header: &str) -> Prefs {
        let mut prefs = Prefs::default();
        for element in header.split(',') {
            let mut params = element.split(';');
            let token = params.next().unwrap_or("").trim_matches([' ', '\t']);
            if token.is_empty() {
                continue;
            }
            let Some(weight) = weight_of(params) else {
                continue;
            };
            let slot = if token == "*" {
                &mut prefs.star
            } else if let Some(c) = Coding::from_token(token) {
                &mut prefs.named[usize::from(c.rank())]
            } else {
                continue; // deflate, compress, ...: we have no such files
            };
            // A coding listed twice keeps its first weight, like the other header lists here.
            slot.get_or_insert(weight);
        }
        prefs
    }

    /// The weight for `coding`: by name, else through `*`; `None` when neither mentions it.
    fn weight(&self, coding: Coding) -> Option<Weight> {
        self.named[usize::from(coding.rank())].or(self.star)
    }
}

/// The weight from the parameters after the coding token: 1000 without `q`, `None` when a
/// parameter is malformed. Parameters other than `q` are ignored (none are defined).
fn weight_of<'a>(params: impl Iterator<Item = &'a str>) -> Option<Weight> {
    let mut weight = 1000;
    for p in params {
        let p = p.trim_matches([' ', '\t']);
        let (name, value) = p.split_once('=')?;
        if name.trim_end_matches([' ', '\t']).eq_ignore_ascii_case("q") {
            weight = parse_qvalue(value.trim_start_matches([' ', '\t']))?;
        }
    }
    Some(weight)
}

/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )` (RFC 9110 12.4.2), in
/// thousandths.
fn parse_qvalue(v: &str) -> Option<Weight> {
    let (int, frac) = match v.split_once('.') {
        Some((i, f)) => (i, f),
        None => (v, ""),
    };
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut thousandths: Weight = 0;
    for (i, b) in frac.bytes().enumerate() {
        thousandths += Weight::from(b - b'0') * [100, 10, 1][i];
    }
    match int {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// Chooses the representation to send from the `Accept-Encoding` value (`None` when the
/// request has no such field) and the precompressed siblings on disk. See the module docs for
/// the rules.
///
/// Inlined, so that the common cases cost the caller a branch or two rather than a call (the
/// call was 28 instructions of a keep-alive request without the field under callgrind,
/// 2026-11-26): no field, and a file without siblings asked for without weights. The `;` is
/// looked for with `memchr`, 16 bytes at a time: `str::contains` went byte by byte, 75
/// instructions for Firefox's `gzip, deflate, br, zstd`.
#[inline]
pub fn negotiate(accept_encoding: Option<&str>, available: Available) -> Negotiated {
    match accept_encoding {
        None => Negotiated::Send(Coding::Identity),
        // Without siblings only a weight can exclude identity, and a weight needs a `;`.
        Some(header)
            if available.is_empty() && memchr::memchr(b';', header.as_bytes()).is_none() =>
        {
            Negotiated::Send(Coding::Identity)
        }
        Some(header) => negotiate_field(header, available),
    }
}

/// [`negotiate`] when the server may also compress on the fly to any coding in `compress`
/// (empty when the response is not a candidate: `--compress` off, a type not
/// [`compressible`], a size out of bounds, a `Range` request). Files on disk keep priority on
/// equal weights; see the module docs.
///
/// ```
/// use servelab_http::encoding::{Available, Coding, Negotiated, negotiate_compress};
/// let all = Available::ALL;
/// let gz_on_disk = Available::NONE.with(Coding::Gzip);
/// let n = |ae, disk| negotiate_compress(Some(ae), disk, all);
/// assert_eq!(n("gzip, deflate, br, zstd", gz_on_disk), Negotiated::Send(Coding::Gzip));
/// assert_eq!(n("gzip, deflate, br, zstd", Available::NONE), Negotiated::Compress(Coding::Br));
/// assert_eq!(n("br;q=0, gzip", Available::NONE), Negotiated::Compress(Coding::Gzip));
/// assert_eq!(negotiate_compress(None, Available::NONE, all), Negotiated::Send(Coding::Identity));
/// ```
#[inline(never)]
pub fn negotiate_compress(
    accept_encoding: Option<&str>,
    stored: Available,
    compress: Available,
) -> Negotiated {
    match accept_encoding {
        None => Negotiated::Send(Coding::Identity),
        Some(_) if compress.is_empty() => negotiate(accept_encoding, stored),
        Some(header) => choose(&Prefs::parse(header), stored, compress),
    }
}

/// Whether a response of this `Content-Type` is worth compressing: text and the structured
/// text formats (JSON, XML, JavaScript, SVG and every `+json`/`+xml` type, YAML), and the
/// uncompressed binary formats that shrink 2-4x like text (WebAssembly, TrueType and OpenType
/// fonts). Everything else is already compressed (PNG, JPEG, WebP, AVIF, WOFF2, video, audio,
/// archives, PDF streams) or unknown (`application/octet-stream`), and compressing it again
/// spends CPU to save nothing. Parameters (`; charset=utf-8`) are ignored, case too.
///
/// ```
/// use servelab_http::encoding::compressible;
/// assert!(compressible("text/html; charset=utf-8"));
/// assert!(compressible("image/svg+xml; charset=utf-8"));
/// assert!(!compressible("image/png"));
/// ```
pub fn compressible(content_type: &str) -> bool {
    /// Full types (lower case) that are not `text/*` and have no `+json`/`+xml` suffix.
    const TYPES: &[&str] = &[
        "application/json",
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/xml",
        "application/yaml",
        "application/wasm",
        "application/x-sh",
        "application/toml",
        "application/graphql",
        "font/ttf",
        "font/otf",
        "image/bmp",
        "image/x-icon",
        "image/vnd.microsoft.icon",
    ];
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim_matches([' ', '\t']);
    let starts = |prefix: &str| {
        essence.len() >= prefix.len() && essence[..prefix.len()].eq_ignore_ascii_case(prefix)
    };
    let ends = |suffix: &str| {
        essence.len() >= suffix.len()
            && essence[essence.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
    };
    (starts("text/") && essence.len() > 5)
        || ends("+json")
        || ends("+xml")
        || TYPES.iter().any(|t| essence.eq_ignore_ascii_case(t))
}

/// [`negotiate`] when the field has to be read. Never inlined: inlined into `negotiate`, it
/// made that too large to inline into its caller, and the case without a field paid for a
/// large stack frame (17 instructions of a keep-alive request under callgrind, 2026-11-26).
#[inline(never)]
fn negotiate_field(header: &str, available: Available) -> Negotiated {
    choose(&Prefs::parse(header), available, Available::NONE)
}

/// The choice among the files on disk (`stored`) and the codings the server may compress to
/// (`compress`), by the client's weights, then files before compressing, then server
/// preference.
fn choose(prefs: &Prefs, stored: Available, compress: Available) -> Negotiated {
    // The best acceptable encoded representation: the first of the highest weight in the
    // order files on disk, then compressed, each in server preference order.
    let mut best: Option<(Weight, Negotiated)> = None;
    let on_disk = Coding::ENCODED
        .into_iter()
        .filter(|&c| stored.has(c))
        .map(|c| (c, Negotiated::Send(c)));
    let made = Coding::ENCODED
        .into_iter()
        .filter(|&c| compress.has(c))
        .map(|c| (c, Negotiated::Compress(c)));
    for (c, n) in on_disk.chain(made) {
        match prefs.weight(c) {
            Some(w) if w > 0 && best.is_none_or(|(bw, _)| w > bw) => best = Some((w, n)),
            _ => {}
        }
    }
    match (prefs.weight(Coding::Identity), best) {
        // Excluded by `identity;q=0`, or by `*;q=0` with identity not named.
        (Some(0), None) => Negotiated::NotAcceptable,
        (Some(0), Some((_, n))) => n,
        // Named (or covered by `*`): its weight competes; on a tie an encoded one wins.
        (Some(iw), Some((bw, n))) => {
            if iw > bw {
                Negotiated::Send(Coding::Identity)
            } else {
                n
            }
        }
        // Not mentioned at all: identity is the fallback.
        (None, Some((_, n))) => n,
        (_, None) => Negotiated::Send(Coding::Identity),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Available = Available::NONE
        .with(Coding::Br)
        .with(Coding::Zstd)
        .with(Coding::Gzip);

    fn send(c: Coding) -> Negotiated {
        Negotiated::Send(c)
    }

    #[test]
    fn qvalues_parse_per_rfc() {
        assert_eq!(parse_qvalue("0"), Some(0));
        assert_eq!(parse_qvalue("0."), Some(0));
        assert_eq!(parse_qvalue("0.5"), Some(500));
        assert_eq!(parse_qvalue("0.05"), Some(50));
        assert_eq!(parse_qvalue("0.001"), Some(1));
        assert_eq!(parse_qvalue("1"), Some(1000));
        assert_eq!(parse_qvalue("1.000"), Some(1000));
        for bad in [
            "", "1.5", "2", "0.0001", "-0", "0.a", ".5", "01", "1.001", " 0.5",
        ] {
            assert_eq!(parse_qvalue(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn no_field_or_empty_field_gives_the_plain_file() {
        assert_eq!(negotiate(None, ALL), send(Coding::Identity));
        assert_eq!(negotiate(Some(""), ALL), send(Coding::Identity));
        assert_eq!(negotiate(Some(" , "), ALL), send(Coding::Identity));
        assert_eq!(
            negotiate(Some("gzip, br"), Available::NONE),
            send(Coding::Identity)
        );
    }

    #[test]
    fn server_preference_breaks_ties() {
        assert_eq!(
            negotiate(Some("gzip, deflate, br, zstd"), ALL),
            send(Coding::Br)
        );
        assert_eq!(negotiate(Some("gzip, zstd"), ALL), send(Coding::Zstd));
        assert_eq!(negotiate(Some("*"), ALL), send(Coding::Br));
        let gz = Available::NONE.with(Coding::Gzip);
        assert_eq!(negotiate(Some("gzip, deflate, br"), gz), send(Coding::Gzip));
        assert_eq!(negotiate(Some("deflate, br"), gz), send(Coding::Identity));
    }

    #[test]
    fn weights_beat_server_preference() {
        assert_eq!(negotiate(Some("br;q=0.5, gzip"), ALL), send(Coding::Gzip));
        assert_eq!(
            negotiate(Some("br;q=0.5, gzip;q=0.6"), ALL),
            send(Coding::Gzip)
        );
        assert_eq!(
            negotiate(Some("br;q=0.9, gzip;q=0.6"), ALL),
            send(Coding::Br)
        );
        assert_eq!(negotiate(Some("gzip;q=1.0, br;q=1"), ALL), send(Coding::Br));
        // Whitespace around the parameter and an upper-case Q.
        assert_eq!(
            negotiate(Some("br ; Q = 0.1,gzip"), ALL),
            send(Coding::Gzip)
        );
        // Named identity with the higher weight wins over the files.
        assert_eq!(
            negotiate(Some("identity, gzip;q=0.5"), ALL),
            send(Coding::Identity)
        );
        assert_eq!(
            negotiate(Some("identity;q=0.5, gzip"), ALL),
            send(Coding::Gzip)
        );
        // On a tie the encoded file wins.
        assert_eq!(negotiate(Some("identity, gzip"), ALL), send(Coding::Gzip));
        // `*` covers identity too.
        assert_eq!(negotiate(Some("*, br;q=0.5"), ALL), send(Coding::Zstd));
        let br = Available::NONE.with(Coding::Br);
        assert_eq!(negotiate(Some("*, br;q=0.5"), br), send(Coding::Identity));
    }

    #[test]
    fn q_zero_excludes() {
        assert_eq!(negotiate(Some("br;q=0, gzip"), ALL), send(Coding::Gzip));
        assert_eq!(negotiate(Some("gzip;q=0"), ALL), send(Coding::Identity));
        assert_eq!(negotiate(Some("*;q=0, gzip"), ALL), send(Coding::Gzip));
        assert_eq!(negotiate(Some("br, *;q=0"), ALL), send(Coding::Br));
        // A name beats `*` whichever comes first.
        assert_eq!(negotiate(Some("*;q=0, br;q=0.1"), ALL), send(Coding::Br));
        assert_eq!(negotiate(Some("br;q=0, *"), ALL), send(Coding::Zstd));
        // Identity excluded but a file acceptable: the file.
        assert_eq!(
            negotiate(Some("identity;q=0, gzip"), ALL),
            send(Coding::Gzip)
        );
    }

    #[test]
    fn identity_excluded_and_nothing_else_is_406() {
        let none = Available::NONE;
        assert_eq!(
            negotiate(Some("identity;q=0"), none),
            Negotiated::NotAcceptable
        );
        assert_eq!(negotiate(Some("*;q=0"), none), Negotiated::NotAcceptable);
        assert_eq!(
            negotiate(Some("gzip, *;q=0"), none),
            Negotiated::NotAcceptable
        );
        assert_eq!(
            negotiate(Some("identity;q=0, gzip;q=0"), ALL),
            Negotiated::NotAcceptable
        );
        let gz = Available::NONE.with(Coding::Gzip);
        assert_eq!(
            negotiate(Some("br, identity;q=0"), gz),
            Negotiated::NotAcceptable
        );
        // `*;q=0` with identity named keeps identity.
        assert_eq!(
            negotiate(Some("*;q=0, identity"), none),
            send(Coding::Identity)
        );
        assert_eq!(
            negotiate(Some("identity;q=0.001, *;q=0"), none),
            send(Coding::Identity)
        );
    }

    #[test]
    fn aliases_case_and_malformed_elements() {
        assert_eq!(negotiate(Some("X-GZIP"), ALL), send(Coding::Gzip));
        assert_eq!(negotiate(Some("Br"), ALL), send(Coding::Br));
        // A bad weight skips only its element.
        assert_eq!(negotiate(Some("br;q=2, gzip"), ALL), send(Coding::Gzip));
        assert_eq!(negotiate(Some("br;q, gzip;q=0.1"), ALL), send(Coding::Gzip));
        assert_eq!(
            negotiate(Some("identity;q=bad"), Available::NONE),
            send(Coding::Identity)
        );
        // The first weight for a coding counts.
        assert_eq!(
            negotiate(Some("br;q=0, br, gzip;q=0.5"), ALL),
            send(Coding::Gzip)
        );
        // Unknown parameters are ignored.
        assert_eq!(negotiate(Some("br;level=5"), ALL), send(Coding::Br));
    }

    /// The fast path of `negotiate` (no siblings, no `;`) against reading the whole field,
    /// over fields made by editing real ones with the bytes that matter and any other.
    #[test]
    fn the_fast_path_agrees_with_reading_the_field() {
        let seeds = [
            "gzip, deflate, br, zstd",
            "identity;q=0",
            "*;q=0, gzip",
            "br;q=0.5, identity, *;Q=0",
            "",
            "x-gzip , *",
        ];
        let bytes: Vec<u8> = b";=q.01*, \tidentity"
            .iter()
            .copied()
            .chain(0..=255)
            .collect();
        let mut next = crate::test_rng::xorshift(0x005e_edae);
        let mut fast = 0;
        let mut slow = 0;
        for seed in seeds {
            for _ in 0..5_000 {
                let mut buf = seed.as_bytes().to_vec();
                crate::test_rng::mutate(&mut buf, &mut next, &bytes, 6);
                let Ok(field) = String::from_utf8(buf) else {
                    continue;
                };
                for available in [Available::NONE, ALL, Available::NONE.with(Coding::Gzip)] {
                    let want = negotiate_field(&field, available);
                    assert_eq!(negotiate(Some(&field), available), want, "{field:?}");
                    if available.is_empty() && !field.contains(';') {
                        fast += 1;
                    } else {
                        slow += 1;
                    }
                }
                if negotiate_field(&field, Available::NONE) == Negotiated::NotAcceptable {
                    assert!(field.contains(';'), "{field:?}");
                }
            }
        }
        assert!(fast > 5_000 && slow > 5_000, "{fast} {slow}");
    }

    #[test]
    fn on_the_fly_follows_weights_and_yields_to_files_on_equal_ones() {
        let all = Available::ALL;
        let none = Available::NONE;
        let gz = Available::NONE.with(Coding::Gzip);
        let n = |ae: &str, disk| negotiate_compress(Some(ae), disk, all);
        let compress = Negotiated::Compress;
        assert_eq!(n("gzip, deflate, br, zstd", none), compress(Coding::Br));
        assert_eq!(n("gzip, zstd", none), compress(Coding::Zstd));
        assert_eq!(n("gzip", none), compress(Coding::Gzip));
        // Equal weights: the file on disk, even of a coding the server ranks lower.
        assert_eq!(n("gzip, br", gz), send(Coding::Gzip));
        // The client's weights first: brotli made on the fly over the stored gzip.
        assert_eq!(n("br;q=1, gzip;q=0.5", gz), compress(Coding::Br));
        // q=0 refuses a coding, made or stored.
        assert_eq!(n("br;q=0, zstd;q=0, gzip", none), compress(Coding::Gzip));
        assert_eq!(n("gzip;q=0, br;q=0, zstd;q=0", gz), send(Coding::Identity));
        assert_eq!(n("*;q=0, identity", none), send(Coding::Identity));
        // Identity named above the codings, or none asked for.
        assert_eq!(n("identity, gzip;q=0.5", none), send(Coding::Identity));
        assert_eq!(n("", none), send(Coding::Identity));
        assert_eq!(n("deflate, compress", none), send(Coding::Identity));
        assert_eq!(negotiate_compress(None, gz, all), send(Coding::Identity));
        // Identity excluded: a made coding saves the request from 406.
        assert_eq!(n("identity;q=0, zstd", none), compress(Coding::Zstd));
        assert_eq!(n("identity;q=0", none), Negotiated::NotAcceptable);
        // Nothing to compress to: exactly `negotiate`.
        for ae in ["gzip, br", "identity;q=0", "br;q=0.5, gzip", ""] {
            for disk in [none, gz, ALL] {
                assert_eq!(
                    negotiate_compress(Some(ae), disk, Available::NONE),
                    negotiate(Some(ae), disk),
                    "{ae:?}"
                );
            }
        }
    }

    #[test]
    fn compressible_types_are_text_and_uncompressed_formats() {
        for t in [
            "text/html; charset=utf-8",
            "TEXT/CSS",
            "text/javascript; charset=utf-8",
            "application/json",
            "application/manifest+json; charset=utf-8",
            "image/svg+xml; charset=utf-8",
            "application/rss+xml",
            "application/xml",
            "application/wasm",
            "application/yaml; charset=utf-8",
            "font/ttf",
        ] {
            assert!(compressible(t), "{t}");
        }
        for t in [
            "image/png",
            "image/jpeg",
            "image/webp",
            "font/woff2",
            "application/octet-stream",
            "application/gzip",
            "application/zip",
            "video/mp4",
            "application/pdf",
            "text/",
            "",
            "application/jsonx",
        ] {
            assert!(!compressible(t), "{t}");
        }
    }

    #[test]
    fn available_set() {
        let a = Available::NONE.with(Coding::Zstd).with(Coding::Identity);
        assert!(a.has(Coding::Zstd) && a.has(Coding::Identity));
        assert!(!a.has(Coding::Br) && !a.has(Coding::Gzip));
        assert!(!a.is_empty() && Available::NONE.is_empty());
        assert_eq!(Available::NONE.with(Coding::Identity), Available::NONE);
        assert_eq!(Coding::Gzip.token(), Some("gzip"));
        assert_eq!(Coding::Identity.token(), None);
        assert_eq!(Coding::Zstd.suffix(), ".zst");
    }
}
