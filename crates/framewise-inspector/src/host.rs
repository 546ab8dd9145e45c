//! The `Host` check every request on the socket passes first: the inspector answers only
//! requests addressed to itself (`127.0.0.1:PORT` or `localhost:PORT`, PORT the one it
//! serves on), so a web page on another origin that makes a name resolve to 127.0.0.1 (DNS
//! rebinding) reads nothing, not even the page shell.

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Whether `host` (a `Host` header's value) names this server on `port`: `127.0.0.1:PORT`
/// or `localhost:PORT` (the name in any case), nothing else.
pub(crate) fn allowed(host: &str, port: u16) -> bool {
    let Some((name, given_port)) = host.rsplit_once(':') else {
        return false;
    };
    let name_ok = name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost");
    name_ok && given_port == port.to_string()
}

/// Answers 403 to a request whose `Host` header is missing, repeated or not this server's
/// own address on `port`, on every route.
pub(crate) async fn require_host(
    State(port): State<u16>,
    request: Request,
    next: Next,
) -> Response {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let ok = match (hosts.next(), hosts.next()) {
        (Some(host), None) => host.to_str().is_ok_and(|h| allowed(h, port)),
        _ => false,
    };
    if ok {
        next.run(request).await
    } else {
        (
            StatusCode::FORBIDDEN,
            [(header::CONTENT_TYPE, "application/json")],
            format!(
                r#"{{"error":"foreign or missing Host header: open http://127.0.0.1:{port}/ as `framewise view` printed it"}}"#
            ),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::allowed;

    #[test]
    fn only_loopback_names_with_the_served_port_are_allowed() {
        assert!(allowed("127.0.0.1:8123", 8123));
        assert!(allowed("localhost:8123", 8123));
        assert!(allowed("LocalHost:8123", 8123));
        for foreign in [
            "evil.example",
            "evil.example:8123",
            "127.0.0.1:8124",
            "127.0.0.1",
            "localhost",
            "localhost:08123",
            "127.0.0.2:8123",
            "localhost.evil.example:8123",
            "[::1]:8123",
            "",
            ":8123",
        ] {
            assert!(!allowed(foreign, 8123), "{foreign}");
        }
    }
}
