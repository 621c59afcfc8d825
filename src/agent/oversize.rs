//! Stage: agent MCP. Requests over the size limit get an answer. rmcp drops a line longer
//! than its limit without a word, so a client that sent one waits forever. [`Bounded`] sits
//! between standard input and rmcp: it passes every line up to [`MAX_REQUEST`] bytes as it
//! is, and replaces a longer one (never held in memory past the limit) by a small request of
//! the method [`TOO_LARGE`] that carries the long line's `id` when one could be read from
//! it. The server answers that request with a JSON-RPC error ([`too_large`]), through rmcp's
//! own writer. A long line without a readable id is replaced by a line that is JSON but no
//! message, which rmcp answers with its "Invalid request" error (without an `id`, as MCP
//! says for an id that cannot be read). Must not look at anything but line lengths and ids.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The longest request line served (16 MiB, rmcp's own limit), without its newline.
pub const MAX_REQUEST: usize = 16 * 1024 * 1024;

/// The method of the request that stands for one over the limit.
pub const TOO_LARGE: &str = "apply-patch/request-too-large";

/// How much of a long line's `id` value is kept (an id is a number or a short string).
const MAX_ID: usize = 1024;

/// [`AsyncRead`] of whole lines of at most `limit` bytes (see the module docs).
pub struct Bounded<R> {
    inner: R,
    limit: usize,
    /// The line being read, while it is within the limit.
    line: Vec<u8>,
    /// The line being read once it went over the limit: its id so far and its length.
    over: Option<(IdScan, usize)>,
    /// Bytes ready to be read: whole lines, or a substitute.
    ready: Vec<u8>,
    pos: usize,
    chunk: Vec<u8>,
    eof: bool,
}

impl<R: AsyncRead + Unpin> Bounded<R> {
    pub fn new(inner: R, limit: usize) -> Self {
        Bounded {
            inner,
            limit,
            line: Vec::new(),
            over: None,
            ready: Vec::new(),
            pos: 0,
            chunk: vec![0; 64 * 1024],
            eof: false,
        }
    }

    /// Takes `bytes` in: completed lines and substitutes go to `ready`.
    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|b| *b == b'\n');
            let (piece, rest) = bytes.split_at(newline.map_or(bytes.len(), |i| i + 1));
            bytes = rest;
            let text = piece.strip_suffix(b"\n").unwrap_or(piece);
            if self.over.is_none() && self.line.len() + text.len() > self.limit {
                // Over the limit: only its id is kept from here on.
                let mut scan = IdScan::default();
                scan.feed(&self.line);
                self.over = Some((scan, self.line.len()));
                self.line = Vec::new();
            }
            match &mut self.over {
                Some((scan, len)) => {
                    scan.feed(text);
                    *len += text.len();
                    if newline.is_some() {
                        let substitute = substitute(scan.id(), *len, self.limit);
                        self.ready.extend_from_slice(&substitute);
                        self.over = None;
                    }
                }
                None => {
                    self.line.extend_from_slice(piece);
                    if newline.is_some() {
                        self.ready.append(&mut self.line);
                    }
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Bounded<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.pos < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.pos);
                buf.put_slice(&this.ready[this.pos..this.pos + n]);
                this.pos += n;
                if this.pos == this.ready.len() {
                    this.ready.clear();
                    this.pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                // A last line without a newline goes as it is (rmcp drops it unanswered, as
                // a message cut off); an over-long one is simply dropped.
                if this.line.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                this.ready = std::mem::take(&mut this.line);
                continue;
            }
            let mut chunk = std::mem::take(&mut this.chunk);
            let mut read = ReadBuf::new(&mut chunk);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut read);
            let got = read.filled().len();
            match polled {
                Poll::Pending => {
                    this.chunk = chunk;
                    return Poll::Pending;
                }
                Poll::Ready(Err(e)) => {
                    this.chunk = chunk;
                    return Poll::Ready(Err(e));
                }
                Poll::Ready(Ok(())) if got == 0 => this.eof = true,
                Poll::Ready(Ok(())) => this.feed(&chunk[..got]),
            }
            this.chunk = chunk;
        }
    }
}

/// The line that stands for a request of `len` bytes: a [`TOO_LARGE`] request with its id,
/// or, without one, a JSON value that is no message.
fn substitute(id: Option<serde_json::Value>, len: usize, limit: usize) -> Vec<u8> {
    let params = serde_json::json!({ "bytes": len, "limit": limit });
    let value = match id {
        Some(id) => serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": TOO_LARGE, "params": params,
        }),
        None => serde_json::json!({ "jsonrpc": "2.0", "request_too_large": params }),
    };
    let mut line = value.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// The JSON-RPC error that answers a [`TOO_LARGE`] request.
pub fn too_large(params: Option<&serde_json::Value>) -> rmcp::ErrorData {
    let field = |name: &str| params.and_then(|p| p.get(name)).and_then(|v| v.as_u64());
    let (len, limit) = (field("bytes").unwrap_or(0), field("limit").unwrap_or(0));
    rmcp::ErrorData::invalid_request(
        format!(
            "the request is {len} bytes long, over the server's limit of {limit} bytes per \
             message; it was not read (send a smaller patch, or split it)"
        ),
        params.cloned(),
    )
}

/// Finds the value of the top-level key `id` of a JSON object fed to it in pieces, holding
/// no more of it than [`MAX_ID`] bytes.
#[derive(Default)]
struct IdScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    want_key: bool,
    /// The top-level key being read (only its first bytes: enough to tell `id`).
    key: Vec<u8>,
    /// The last key read was `id`, and its value has not begun.
    id_next: bool,
    /// The raw `id` value, while and once it is read.
    value: Option<Vec<u8>>,
    value_done: bool,
}

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        let reading_value = self.value.is_some() && !self.value_done;
        if reading_value && self.depth == 1 && !self.in_string && matches!(b, b',' | b'}') {
            self.value_done = true;
        } else if reading_value {
            if let Some(v) = self.value.as_mut().filter(|v| v.len() < MAX_ID) {
                v.push(b);
            }
        }
        if self.in_string {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            if self.depth == 1 && self.want_key && self.in_string && self.key.len() < 4 {
                self.key.push(b);
            }
            if !self.in_string && self.depth == 1 && self.want_key {
                self.want_key = false;
                self.id_next = self.key == b"id";
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.want_key {
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.want_key = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.want_key = true,
            _ => {}
        }
        if b == b':' && self.depth == 1 && self.id_next && self.value.is_none() {
            self.id_next = false;
            self.value = Some(Vec::new());
        } else if self.id_next && !b.is_ascii_whitespace() && b != b':' {
            self.id_next = false;
        }
    }

    /// The id, when it was read whole and is a number or a string (what JSON-RPC allows).
    fn id(&self) -> Option<serde_json::Value> {
        let raw = self.value.as_ref().filter(|_| self.value_done)?;
        match serde_json::from_slice(raw).ok()? {
            v @ (serde_json::Value::Number(_) | serde_json::Value::String(_)) => Some(v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::AsyncReadExt;

    fn id_of(text: &str) -> Option<serde_json::Value> {
        let mut scan = IdScan::default();
        // In small pieces, as a pipe hands them over.
        text.as_bytes().chunks(3).for_each(|c| scan.feed(c));
        scan.id()
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        assert_eq!(
            id_of(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#),
            Some(json!(7))
        );
        assert_eq!(id_of(r#"{"id" : "a,}\"b" ,"x":1}"#), Some(json!("a,}\"b")));
        let late = r#"{"method":"m","params":{"id":1,"s":"\"id\":2"},"id":3}"#;
        assert_eq!(id_of(late), Some(json!(3)));
        assert_eq!(id_of(r#"{"params":{"id":1}}"#), None);
        assert_eq!(id_of(r#"{"id":null}"#), None);
        assert_eq!(id_of(r#"{"id":{"a":1}}"#), None);
        assert_eq!(id_of(r#"{"idx":5}"#), None);
        assert_eq!(id_of(r#"["id",5]"#), None);
    }

    fn bounded(input: &str, limit: usize) -> String {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime because the test needs one");
        runtime.block_on(async {
            let mut out = String::new();
            Bounded::new(input.as_bytes(), limit)
                .read_to_string(&mut out)
                .await
                .expect("reading from memory succeeds");
            out
        })
    }

    #[test]
    fn lines_within_the_limit_pass_and_a_longer_one_is_replaced() {
        let long = format!(r#"{{"id":9,"p":"{}"}}"#, "x".repeat(100));
        let input = format!("{{\"id\":1}}\n{long}\n{{\"id\":2}}\nlast");
        let out = bounded(&input, 40);
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], r#"{"id":1}"#);
        let sub: serde_json::Value = serde_json::from_str(lines[1]).expect("JSON");
        assert_eq!(sub["id"], 9);
        assert_eq!(sub["method"], TOO_LARGE);
        assert_eq!(sub["params"]["bytes"], long.len());
        assert_eq!(&lines[2..], [r#"{"id":2}"#, "last"]);
        // Without an id: a JSON line that is no message.
        let out = bounded(&format!("{}\n", "y".repeat(50)), 40);
        let sub: serde_json::Value = serde_json::from_str(out.trim_end()).expect("JSON");
        assert!(
            sub.get("id").is_none() && sub.get("method").is_none(),
            "{sub}"
        );
    }
}
