//! The bytes of a connection between the socket and hyper. Two jobs hyper's HTTP/1 server
//! leaves undone (docs/api.md#protocol-and-limits):
//!
//! - **Every error body is the JSON error**, including for a request hyper cannot parse
//!   (a bad request line, malformed or oversized headers, conflicting lengths): hyper
//!   answers those itself, with an empty body, and offers no hook to change that. So each
//!   request head is checked here first, by the same parser (httparse) and the same rules
//!   hyper applies; a head hyper would refuse never reaches it, and is answered here with
//!   the JSON error once every earlier request on the connection has been answered.
//!   Finding where the next head starts needs the length of each body, so the framing
//!   (`Content-Length`, or chunked) is followed here too, as hyper's decoder reads it.
//! - **An early answer reaches the client.** A handler that answers before reading the
//!   body (404, 403, 413) leaves the client still sending; closing the socket then makes
//!   its writes fail (`EPIPE`, or a reset) before it reads the answer. When hyper closes
//!   such a connection, the write side is shut first (the client reads the answer and
//!   then end of file), and what the client still sends is read and dropped, up to
//!   [`LINGER_BYTES`] and the request read timeout.
//!
//! Requests on one connection are answered in order, by hyper; a head refused here waits
//! until the responses to the requests before it are out (counted with [`Counted`]
//! bodies and this stream's flushes), then its answer is written and hyper sees the end
//! of the stream. While it waits, a client that hangs up is not noticed until then.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, Uri};
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::error::MAX_BODY_BYTES;

/// The largest request head (request line and headers) accepted; larger gets `431`.
/// Requests to execgate have a handful of short headers.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// Header lines accepted in one head (hyper's own limit).
const MAX_HEADERS: usize = 100;

/// How much of what a client still sends after its answer is read and dropped before the
/// connection is closed regardless: a whole request of the largest size accepted, twice
/// over, so that a client a little over the limits still reads its `413` or `431`.
pub const LINGER_BYTES: usize = 2 * (MAX_HEAD_BYTES + MAX_BODY_BYTES);

/// What the connection's stream and the service answering its requests share: how many
/// responses hyper has finished with, and whom to wake when that changes.
#[derive(Default)]
pub struct Answered {
    count: AtomicU64,
    waker: Mutex<Option<Waker>>,
}

impl Answered {
    fn wait(&self, waker: &Waker) {
        *self.waker.lock().unwrap_or_else(|e| e.into_inner()) = Some(waker.clone());
    }

    fn one_more(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
        if let Some(w) = self.waker.lock().unwrap_or_else(|e| e.into_inner()).take() {
            w.wake();
        }
    }
}

/// A response body that counts itself answered when hyper drops it: hyper drops a
/// response's body once it has taken all of it (or none, for a bodiless response), just
/// before it writes the last bytes out.
pub struct Counted {
    body: axum::body::Body,
    answered: Arc<Answered>,
}

impl Counted {
    pub fn new(body: axum::body::Body, answered: Arc<Answered>) -> Counted {
        Counted { body, answered }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.answered.one_more();
    }
}

impl Body for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Where the next bytes from the client belong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// A request head (or nothing yet).
    Head,
    /// This many bytes of a `Content-Length` body.
    Body(u64),
    /// A chunked body.
    Chunked(Chunk),
    /// Past a chunked body hyper's decoder refuses: hyper fails that request and closes
    /// the connection after answering it, so nothing later is a request.
    Opaque,
}

/// A connection's stream as hyper sees it (see the module's comment).
pub struct Guarded<S> {
    io: S,
    answered: Arc<Answered>,
    /// From the client, not yet checked.
    raw: Vec<u8>,
    /// How much of `raw` an incomplete head had when last parsed.
    parsed: usize,
    /// Checked, not yet taken by hyper (`ready[taken..]`).
    ready: Vec<u8>,
    taken: usize,
    phase: Phase,
    /// Request heads handed to hyper.
    released: u64,
    /// Nothing written since the last completed flush: what hyper wrote is out.
    flushed: bool,
    /// The client shut its side (or the read failed).
    client_done: bool,
    refused: Option<Refusal>,
    /// Our write side is shut.
    shut: bool,
    linger: Option<Linger>,
    read_timeout: Duration,
    /// Header lines (each ending in CRLF) every answer written here carries beside its
    /// own: a front's security headers.
    headers: String,
}

/// A refused head's answer, written once hyper has nothing more to write.
struct Refusal {
    bytes: Vec<u8>,
    written: usize,
    flushed: bool,
}

struct Linger {
    dropped: usize,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl<S> Guarded<S> {
    /// `read_timeout` bounds how long the end of a connection waits for a client still
    /// sending.
    pub fn new(io: S, read_timeout: Duration) -> Guarded<S> {
        Guarded {
            io,
            answered: Arc::default(),
            raw: Vec::new(),
            parsed: 0,
            ready: Vec::new(),
            taken: 0,
            phase: Phase::Head,
            released: 0,
            flushed: true,
            client_done: false,
            refused: None,
            shut: false,
            linger: None,
            read_timeout,
            headers: String::new(),
        }
    }

    /// Adds `headers` to every answer written here (a refused head's).
    pub fn with_headers(mut self, headers: &[(&str, &str)]) -> Guarded<S> {
        self.headers = headers
            .iter()
            .map(|(name, value)| format!("{name}: {value}\r\n"))
            .collect();
        self
    }

    /// What the service wraps its response bodies with ([`Counted`]).
    pub fn answered(&self) -> Arc<Answered> {
        Arc::clone(&self.answered)
    }

    /// Every response hyper started is out, and it has written nothing since.
    fn idle(&self) -> bool {
        self.flushed && self.answered.count.load(Ordering::Acquire) == self.released
    }

    /// Moves what can be checked from `raw` to `ready`, head by head and body by body.
    fn advance(&mut self) {
        while self.refused.is_none() && !self.raw.is_empty() {
            let moved = match self.phase {
                // An incomplete head is parsed again only once the bytes since can end
                // it (hyper does the same): a head sent a byte at a time costs no more
                // than one sent whole.
                Phase::Head
                    if self.parsed > 0
                        && !ends_head(&self.raw[self.parsed.saturating_sub(2)..]) =>
                {
                    if self.raw.len() >= MAX_HEAD_BYTES {
                        self.refuse(too_large());
                    }
                    self.parsed = self.raw.len();
                    return;
                }
                Phase::Head => match check_head(&self.raw) {
                    Ok(None) => {
                        if self.raw.len() >= MAX_HEAD_BYTES {
                            self.refuse(too_large());
                        }
                        self.parsed = self.raw.len();
                        return;
                    }
                    Ok(Some((len, body))) => {
                        self.released += 1;
                        self.phase = body;
                        self.parsed = 0;
                        len
                    }
                    Err(refusal) => {
                        self.refuse(refusal);
                        return;
                    }
                },
                Phase::Body(left) => {
                    let n = self
                        .raw
                        .len()
                        .min(usize::try_from(left).unwrap_or(usize::MAX));
                    self.phase = match left - n as u64 {
                        0 => Phase::Head,
                        left => Phase::Body(left),
                    };
                    n
                }
                Phase::Chunked(chunk) => {
                    let (n, next) = chunk.scan(&self.raw);
                    self.phase = match next {
                        Scan::More(chunk) => Phase::Chunked(chunk),
                        Scan::Done => Phase::Head,
                        Scan::Bad => Phase::Opaque,
                    };
                    n
                }
                Phase::Opaque => self.raw.len(),
            };
            if self.taken == self.ready.len() {
                self.ready.clear();
                self.taken = 0;
            }
            self.ready.extend(self.raw.drain(..moved));
        }
    }

    fn refuse(&mut self, (status, message): (StatusCode, String)) {
        tracing::debug!(%status, %message, "refused a request head hyper would not parse");
        let code = if status == StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE {
            "HEADERS_TOO_LARGE"
        } else {
            "INVALID_REQUEST"
        };
        let body = serde_json::json!({"error": {"code": code, "message": message}}).to_string();
        let head = format!(
            "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{}\r\n",
            status.as_u16(),
            status.canonical_reason().unwrap_or(""),
            body.len(),
            self.headers
        );
        self.refused = Some(Refusal {
            bytes: [head.into_bytes(), body.into_bytes()].concat(),
            written: 0,
            flushed: false,
        });
        self.raw = Vec::new();
    }

    /// Whether the client may still be sending bytes of a request it was answered for.
    fn client_mid_request(&self) -> bool {
        !self.client_done
            && (self.refused.is_some()
                || !self.raw.is_empty()
                || !matches!(self.phase, Phase::Head))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Guarded<S> {
    /// Writes a refused head's answer; Ready once it is out.
    fn poll_write_refusal(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(refusal) = self.refused.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        while refusal.written < refusal.bytes.len() {
            let n = std::task::ready!(
                Pin::new(&mut self.io).poll_write(cx, &refusal.bytes[refusal.written..])
            )?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            refusal.written += n;
        }
        if !refusal.flushed {
            std::task::ready!(Pin::new(&mut self.io).poll_flush(cx))?;
            refusal.flushed = true;
        }
        Poll::Ready(Ok(()))
    }

    /// Reads and drops what the client still sends, until it stops, [`LINGER_BYTES`], or
    /// the read timeout.
    fn poll_linger(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let timeout = self.read_timeout;
        let linger = self.linger.get_or_insert_with(|| Linger {
            dropped: 0,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        });
        let mut scratch = [0u8; 8192];
        loop {
            if linger.dropped >= LINGER_BYTES || linger.deadline.as_mut().poll(cx).is_ready() {
                return Poll::Ready(());
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.io).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if !buf.filled().is_empty() => {
                    linger.dropped += buf.filled().len();
                }
                Poll::Ready(_) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            // Checked bytes first: they belong to requests before anything refused.
            if this.taken < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.taken);
                buf.put_slice(&this.ready[this.taken..this.taken + n]);
                this.taken += n;
                return Poll::Ready(Ok(()));
            }
            if this.refused.is_some() {
                if !this.idle() {
                    // Woken by the last response's body being dropped, or the flush.
                    this.answered.wait(cx.waker());
                    if !this.idle() {
                        return Poll::Pending;
                    }
                }
                std::task::ready!(this.poll_write_refusal(cx))?;
                // The end of the stream, for hyper: it closes the connection.
                return Poll::Ready(Ok(()));
            }
            if this.client_done {
                if matches!(this.phase, Phase::Head) && !this.raw.is_empty() {
                    this.refuse((
                        StatusCode::BAD_REQUEST,
                        "the connection was closed in the middle of the request's head".into(),
                    ));
                    continue;
                }
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            match std::task::ready!(Pin::new(&mut this.io).poll_read(cx, &mut read)) {
                Ok(()) if read.filled().is_empty() => this.client_done = true,
                Ok(()) => {
                    this.raw.extend_from_slice(read.filled());
                    this.advance();
                }
                Err(e) => {
                    this.client_done = true;
                    return Poll::Ready(Err(e));
                }
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.flushed = false;
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.flushed = false;
        Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(Pin::new(&mut this.io).poll_flush(cx))?;
        this.flushed = true;
        if this.refused.is_some() {
            // A refused head may be waiting for exactly this.
            cx.waker().wake_by_ref();
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.shut {
            std::task::ready!(Pin::new(&mut this.io).poll_shutdown(cx))?;
            this.shut = true;
        }
        if this.client_mid_request() {
            std::task::ready!(this.poll_linger(cx));
        }
        Poll::Ready(Ok(()))
    }
}

/// A complete head's length and what follows it; `None` while incomplete; or why hyper
/// would refuse it. The rules are hyper 1.x's (`proto/h1/role.rs`, `Server::parse`).
fn check_head(bytes: &[u8]) -> Result<Option<(usize, Phase)>, (StatusCode, String)> {
    let bad = |m: &str| Err((StatusCode::BAD_REQUEST, m.to_string()));
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let len = match request.parse(bytes) {
        Ok(httparse::Status::Partial) => return Ok(None),
        Ok(httparse::Status::Complete(len)) => len,
        Err(httparse::Error::TooManyHeaders) => {
            return Err((
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                format!("the request has more than {MAX_HEADERS} header lines"),
            ));
        }
        Err(httparse::Error::Token) if request.method.is_none() => {
            return bad("the request line is not `METHOD TARGET HTTP/1.1`");
        }
        Err(httparse::Error::Token) => {
            return bad("the request line's target is not a valid request target");
        }
        Err(httparse::Error::Version) => {
            return bad(
                "the request line does not end with HTTP/1.0 or HTTP/1.1 (this socket speaks HTTP/1 only)",
            );
        }
        Err(e) => return bad(&format!("malformed request head: {e}")),
    };
    if len > MAX_HEAD_BYTES {
        return Err(too_large());
    }
    let (Some(method), Some(path), Some(version)) = (request.method, request.path, request.version)
    else {
        return bad("incomplete request line");
    };
    if Method::from_bytes(method.as_bytes()).is_err() {
        return bad("the request line does not start with an HTTP method");
    }
    if Uri::try_from(path.as_bytes()).is_err() {
        return bad("the request line's target is not a valid request target");
    }
    let http_11 = version == 1;
    // Content-Length and Transfer-Encoding, header by header, as hyper reads them: a
    // `Transfer-Encoding` whose last coding is `chunked` wins over any length; one that
    // ends otherwise is refused; lengths must be digits and agree.
    let (mut length, mut is_te, mut chunked) = (None::<u64>, false, false);
    for header in request.headers.iter() {
        let name = HeaderName::from_bytes(header.name.as_bytes());
        let value = HeaderValue::from_bytes(header.value);
        let (Ok(name), Ok(value)) = (name, value) else {
            return bad(&format!(
                "the header {:?} is not a valid header line",
                header.name
            ));
        };
        if name == axum::http::header::TRANSFER_ENCODING {
            if !http_11 {
                return bad("HTTP/1.0 requests cannot have a Transfer-Encoding");
            }
            is_te = true;
            length = None;
            chunked = value
                .to_str()
                .ok()
                .and_then(|v| v.rsplit(',').next())
                .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
        } else if name == axum::http::header::CONTENT_LENGTH && !is_te {
            let Some(n) = digits(value.as_bytes()).filter(|n| *n <= u64::MAX - 2) else {
                return bad("Content-Length is not a number of bytes");
            };
            if length.is_some_and(|m| m != n) {
                return bad("the request has two different Content-Length headers");
            }
            length = Some(n);
        }
    }
    if is_te && !chunked {
        return bad("Transfer-Encoding must end with `chunked`");
    }
    let body = match (chunked, length) {
        (true, _) => Phase::Chunked(Chunk::new()),
        (false, Some(n)) if n > 0 => Phase::Body(n),
        _ => Phase::Head,
    };
    Ok(Some((len, body)))
}

/// Whether `bytes` hold the end of a head: an empty line (`\n\n` or `\n\r\n`).
/// `bytes` starts two bytes before the new ones, so an end split across reads is found.
fn ends_head(bytes: &[u8]) -> bool {
    bytes.windows(2).any(|w| w == b"\n\n") || bytes.windows(3).any(|w| w == b"\n\r\n")
}

fn too_large() -> (StatusCode, String) {
    (
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        format!("the request line and headers are larger than {MAX_HEAD_BYTES} bytes"),
    )
}

/// A decimal number of only digits (no sign, no spaces), as hyper reads a length.
fn digits(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() {
        return None;
    }
    bytes.iter().try_fold(0u64, |n, b| match b {
        b'0'..=b'9' => n.checked_mul(10)?.checked_add(u64::from(b - b'0')),
        _ => None,
    })
}

/// Where a chunked body's reader is, as hyper's decoder (`proto/h1/decode.rs`) goes:
/// size line (hex digits, blanks, `;extensions`), data, CRLF, … a zero size, trailer
/// lines, and the final empty line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chunk {
    state: ChunkState,
    size: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChunkState {
    Start,
    Size,
    SizeBlank,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    EndCr,
    EndLf,
    Trailer,
    TrailerLf,
}

enum Scan {
    More(Chunk),
    Done,
    Bad,
}

impl Chunk {
    fn new() -> Chunk {
        Chunk {
            state: ChunkState::Start,
            size: 0,
        }
    }

    /// Reads `bytes` as far as this body goes: how many bytes were its own, and where
    /// that leaves the body.
    fn scan(mut self, bytes: &[u8]) -> (usize, Scan) {
        use ChunkState::*;
        let mut i = 0;
        while i < bytes.len() {
            if self.state == Data {
                let n = (bytes.len() - i).min(usize::try_from(self.size).unwrap_or(usize::MAX));
                self.size -= n as u64;
                i += n;
                if self.size == 0 {
                    self.state = DataCr;
                }
                continue;
            }
            let b = bytes[i];
            i += 1;
            let hex = (b as char).to_digit(16).map(u64::from);
            self.state = match (self.state, b, hex) {
                (Start | Size, _, Some(d)) => {
                    match self.size.checked_mul(16).and_then(|s| s.checked_add(d)) {
                        Some(size) => self.size = size,
                        None => return (i, Scan::Bad),
                    }
                    Size
                }
                (Size | SizeBlank, b' ' | b'\t', _) => SizeBlank,
                (Size | SizeBlank, b';', _) => Extension,
                (Size | SizeBlank | Extension, b'\r', _) => SizeLf,
                (Extension, b'\n', _) => return (i, Scan::Bad),
                (Extension, _, _) => Extension,
                (SizeLf, b'\n', _) if self.size == 0 => EndCr,
                (SizeLf, b'\n', _) => Data,
                (DataCr, b'\r', _) => DataLf,
                (DataLf, b'\n', _) => Start,
                (EndCr, b'\r', _) => EndLf,
                (Trailer, b'\r', _) => TrailerLf,
                (EndCr | Trailer, _, _) => Trailer,
                (TrailerLf, b'\n', _) => EndCr,
                (EndLf, b'\n', _) => return (i, Scan::Done),
                _ => return (i, Scan::Bad),
            };
        }
        (i, Scan::More(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Result<Option<(usize, Phase)>, (StatusCode, String)> {
        check_head(text.as_bytes())
    }

    #[test]
    fn good_heads_and_their_bodies() {
        let get = "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_eq!(head(get), Ok(Some((get.len(), Phase::Head))));
        assert_eq!(head("GET /v1/health HTTP/1.1\r\nHost: x\r\n"), Ok(None));
        let post = "POST /v1/requests HTTP/1.1\r\nContent-Length: 12\r\n\r\n";
        assert_eq!(head(post), Ok(Some((post.len(), Phase::Body(12)))));
        let te =
            "POST / HTTP/1.1\r\nContent-Length: 12\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
        assert_eq!(head(te), Ok(Some((te.len(), Phase::Chunked(Chunk::new())))));
        let same = "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n";
        assert_eq!(head(same), Ok(Some((same.len(), Phase::Body(3)))));
        // Empty lines before a request are skipped, as hyper does.
        let lead = "\r\nGET / HTTP/1.0\r\n\r\n";
        assert_eq!(head(lead), Ok(Some((lead.len(), Phase::Head))));
    }

    #[test]
    fn what_hyper_refuses_is_refused() {
        let refused = |text: &str, status: u16| {
            let got = head(text);
            assert!(
                matches!(&got, Err((s, _)) if s.as_u16() == status),
                "{text:?}: {got:?}"
            );
        };
        refused("GARBAGE\r\n\r\n", 400);
        refused("G(T / HTTP/1.1\r\n\r\n", 400);
        refused("GET / HTTP/2.0\r\n\r\n", 400);
        // Raw UTF-8 in the target is accepted (by the http crate too); other bytes not.
        assert!(matches!(head("GET /\u{e9} HTTP/1.1\r\n\r\n"), Ok(Some(_))));
        assert!(matches!(
            check_head(b"GET /\xff HTTP/1.1\r\n\r\n"),
            Err((StatusCode::BAD_REQUEST, _))
        ));
        refused("GET / HTTP/1.1\r\nHost x\r\n\r\n", 400);
        refused(
            "POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
            400,
        );
        refused("POST / HTTP/1.1\r\nContent-Length: +2\r\n\r\n", 400);
        refused(
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            400,
        );
        refused("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
        let many: String = (0..101).map(|i| format!("X-{i}: y\r\n")).collect();
        refused(&format!("GET / HTTP/1.1\r\n{many}\r\n"), 431);
        let long = format!(
            "GET / HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_HEAD_BYTES)
        );
        refused(&long, 431);
    }

    #[test]
    fn a_head_sent_a_byte_at_a_time_is_found_once() {
        let mut guard = Guarded::new((), Duration::from_secs(1));
        let text = b"POST /v1/requests HTTP/1.1\r\nHost: x\n\r\nContent-Length: 3\r\n\r\nabcGET";
        for b in text {
            guard.raw.push(*b);
            guard.advance();
        }
        // The head ends at the first empty line (`\n\r\n`): no length, no body.
        let end = text.windows(3).position(|w| w == b"\n\r\n").unwrap() + 3;
        assert_eq!(&guard.ready[..], &text[..end]);
        assert_eq!(guard.released, 1);
        assert!(
            guard.refused.is_some(),
            "`Content-Length: 3…` is no request line"
        );

        let mut guard = Guarded::new((), Duration::from_secs(1));
        let text = b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\n\r";
        for b in text {
            guard.raw.push(*b);
            guard.advance();
        }
        assert_eq!(guard.released, 1);
        assert_eq!(guard.phase, Phase::Head);
        assert_eq!(&guard.raw[..], b"GET / HTTP/1.1\r\n\r");
        guard.raw.push(b'\n');
        guard.advance();
        assert_eq!((guard.released, guard.raw.len()), (2, 0));
    }

    #[test]
    fn chunked_bodies_end_where_hyper_ends_them() {
        let body = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\nA \r\n0123456789\r\n0\r\n\r\nNEXT";
        let (n, scan) = Chunk::new().scan(body);
        assert!(matches!(scan, Scan::Done));
        assert_eq!(&body[n..], b"NEXT");
        // With trailers, and fed one byte at a time.
        let body = b"3\r\nabc\r\n0\r\nX-T: 1\r\nY: 2\r\n\r\nNEXT";
        let mut chunk = Chunk::new();
        for (i, b) in body.iter().enumerate() {
            match chunk.scan(std::slice::from_ref(b)) {
                (1, Scan::More(c)) => chunk = c,
                (1, Scan::Done) => {
                    assert_eq!(&body[i + 1..], b"NEXT");
                    return;
                }
                (n, _) => panic!("byte {i}: {n} consumed, or refused"),
            }
        }
        panic!("never done");
    }

    #[test]
    fn broken_chunks_are_found() {
        for body in [
            &b"x\r\n"[..],
            b"3\r\nabcX",
            b"3;a\nb",
            b"ffffffffffffffffff\r\n",
        ] {
            assert!(matches!(Chunk::new().scan(body).1, Scan::Bad), "{body:?}");
        }
    }
}
