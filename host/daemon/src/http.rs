//! Just enough HTTP/1.1 for a JSON API: requests and responses with `Content-Length` bodies and
//! keep-alive. No chunked encoding, no TLS (the Unix socket is the main door; TCP is for a
//! trusted network with a token). Works with `curl --unix-socket`.

use std::collections::BTreeMap;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// Largest request body accepted (a submission with its script and environment).
pub const MAX_BODY: usize = 16 << 20;
const MAX_HEAD: usize = 64 << 10;

/// A parsed request.
#[derive(Debug, Default)]
pub struct Request {
    /// `GET`, `POST`, `DELETE`.
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// Query parameters.
    pub query: BTreeMap<String, String>,
    /// Header names lowercased.
    pub headers: BTreeMap<String, String>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl Request {
    /// Whether the client asked to close after this exchange.
    pub fn wants_close(&self) -> bool {
        self.headers
            .get("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// Reads one request; `Ok(None)` at a clean end of the connection.
pub async fn read_request<R: tokio::io::AsyncRead + Unpin>(
    r: &mut BufReader<R>,
) -> Result<Option<Request>, String> {
    let mut line = String::new();
    let n = r.read_line(&mut line).await.map_err(|e| e.to_string())?;
    if n == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(format!("bad request line {:?}", line.trim_end()));
    };
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, parse_query(q)),
        None => (target, BTreeMap::new()),
    };
    let mut req = Request {
        method: method.to_ascii_uppercase(),
        path: path.to_string(),
        query,
        ..Request::default()
    };
    let mut head = n;
    loop {
        line.clear();
        let n = r.read_line(&mut line).await.map_err(|e| e.to_string())?;
        head += n;
        if n == 0 || head > MAX_HEAD {
            return Err("headers too long or cut short".into());
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            req.headers
                .insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    if req
        .headers
        .get("transfer-encoding")
        .is_some_and(|v| !v.eq_ignore_ascii_case("identity"))
    {
        return Err("chunked bodies are not supported; send Content-Length".into());
    }
    let len: usize = match req.headers.get("content-length") {
        Some(v) => v.parse().map_err(|_| format!("bad Content-Length {v:?}"))?,
        None => 0,
    };
    if len > MAX_BODY {
        return Err(format!(
            "body of {len} bytes is over the {MAX_BODY}-byte limit"
        ));
    }
    req.body = vec![0; len];
    r.read_exact(&mut req.body)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Some(req))
}

/// Decodes `a=b&c=d` with `%XX` and `+` escapes.
pub fn parse_query(q: &str) -> BTreeMap<String, String> {
    q.split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => (unescape(k), unescape(v)),
            None => (unescape(kv), String::new()),
        })
        .collect()
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match u8::from_str_radix(&s[i + 1..i + 3], 16) {
                Ok(v) => {
                    out.push(v);
                    i += 2;
                }
                Err(_) => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Percent-encodes a query value.
pub fn escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~,".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Writes a JSON response.
pub async fn write_response<W: AsyncWrite + Unpin>(
    w: &mut W,
    status: u16,
    body: &[u8],
    close: bool,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}\r\n",
        reason(status),
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    );
    w.write_all(head.as_bytes()).await?;
    w.write_all(body).await?;
    w.flush().await
}

/// The reason phrase of a status.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        413 => "Payload Too Large",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}
