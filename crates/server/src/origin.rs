//! Which host names and which web pages may talk to the server, checked on every request before
//! any handler runs (REST, WebSocket upgrade, metrics, the page).
//!
//! Two attacks reach a server on the user's own machine from a web page the user happens to visit:
//! - **Cross-site WebSocket**: browsers let any page open `ws://127.0.0.1:8765/ws`; they do send
//!   the page's `Origin`. A request whose `Origin` is neither this server itself (same scheme-less
//!   authority as its `Host`) nor listed in `server.allowed_origins` gets 403 `forbidden_origin`.
//!   Requests without `Origin` come from programs, not pages, and pass.
//! - **DNS rebinding**: a page on `evil.example` makes its own name resolve to 127.0.0.1 and then
//!   talks to the server as a same-origin page, with `Host: evil.example`. A request whose `Host`
//!   is a name (not an IP address and not `localhost`) that is not in `server.allowed_hosts` gets
//!   421 `unknown_host`. An IP address cannot be rebound, so it always passes. With API keys
//!   configured and no `allowed_hosts`, every name passes: a rebinding page has no key.
//!
//! A third needs no answer to be read: a page can make the browser send a plain `GET` (an image,
//! a link) without any `Origin`, and where that request costs the server work, the work is done
//! whether or not the page sees the result. [`Origins::cross_site`] tells such a request by the
//! browser's `Sec-Fetch-Site` too; `text2sparql.rs` refuses it when no key is sent.

use crate::error::ServerError;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap};
use actix_web::middleware::Next;
use actix_web::web;
use std::net::IpAddr;

/// The allowed host names and origins.
#[derive(Debug, Clone)]
pub struct Origins {
    /// `None`: any host name.
    hosts: Option<Vec<String>>,
    /// `None`: any origin.
    origins: Option<Vec<String>>,
    /// The origins listed by name (not `"*"`).
    named: Vec<String>,
}

impl Origins {
    /// `allowed_hosts` and `allowed_origins` as configured (`"*"` allows all); with keys required
    /// and no hosts configured, host names are not checked.
    pub fn new(allowed_hosts: &[String], allowed_origins: &[String], keys_required: bool) -> Self {
        let list = |items: &[String], normalize: fn(&str) -> String| {
            (!items.iter().any(|item| item.trim() == "*"))
                .then(|| items.iter().map(|item| normalize(item)).collect::<Vec<_>>())
        };
        let hosts = if allowed_hosts.is_empty() && keys_required {
            None
        } else {
            list(allowed_hosts, |h| h.trim().trim_end_matches('.').to_ascii_lowercase())
        };
        let origin: fn(&str) -> String = |o| o.trim().trim_end_matches('/').to_ascii_lowercase();
        Self {
            hosts,
            origins: list(allowed_origins, origin),
            named: allowed_origins
                .iter()
                .filter(|o| o.trim() != "*")
                .map(|o| origin(o))
                .collect(),
        }
    }

    /// Why `headers` look like a request a page on another site made the browser send: an
    /// `Origin` that is neither this server nor a page listed by name in `allowed_origins` (`"*"`
    /// does not count here), or `Sec-Fetch-Site: cross-site` / `same-site` (another port of the
    /// same host is another page) without such an `Origin`. `None` for programs (no such
    /// headers), the server's own page and a URL the user typed (`Sec-Fetch-Site: none`).
    pub fn cross_site(&self, headers: &HeaderMap) -> Option<String> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("\u{fffd}");
            let normalized = origin.trim().trim_end_matches('/').to_ascii_lowercase();
            if self.named.contains(&normalized) {
                return None;
            }
            if !same_origin(&normalized, host) {
                return Some(format!("Origin: {origin}"));
            }
        }
        let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())?;
        let site = site.trim().to_ascii_lowercase();
        matches!(site.as_str(), "cross-site" | "same-site").then(|| format!("Sec-Fetch-Site: {site}"))
    }

    /// Refuses a request from a host name or a page that is not allowed.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), ServerError> {
        let host = headers.get(header::HOST).map(|h| h.to_str().unwrap_or("\u{fffd}"));
        if let Some(host) = host {
            self.check_host(host)?;
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("\u{fffd}");
            self.check_origin(origin, host)?;
        }
        Ok(())
    }

    fn check_host(&self, host: &str) -> Result<(), ServerError> {
        let Some(allowed) = &self.hosts else {
            return Ok(());
        };
        let name = host_name(host).trim_end_matches('.').to_ascii_lowercase();
        let is_ip = name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok();
        if is_ip || name == "localhost" || allowed.contains(&name) {
            return Ok(());
        }
        Err(ServerError::UnknownHost { host: host.to_owned() })
    }

    fn check_origin(&self, origin: &str, host: Option<&str>) -> Result<(), ServerError> {
        let normalized = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        let listed = self
            .origins
            .as_ref()
            .is_none_or(|origins| origins.contains(&normalized));
        if same_origin(&normalized, host) || listed {
            Ok(())
        } else {
            Err(ServerError::ForbiddenOrigin {
                origin: origin.to_owned(),
            })
        }
    }
}

/// Whether `origin` (normalized: lower case, no trailing slash) is this server itself: the same
/// scheme-less authority as the request's `Host`.
fn same_origin(origin: &str, host: Option<&str>) -> bool {
    let authority = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    match (authority, host) {
        (Some(authority), Some(host)) => authority == host.trim().to_ascii_lowercase(),
        _ => false,
    }
}

/// The host of a `Host` header value: `example.org:8765` → `example.org`, `[::1]:80` → `[::1]`.
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    }
}

/// The middleware: every request passes [`Origins::check`] first.
pub async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let checked = match req.app_data::<web::Data<Origins>>() {
        Some(origins) => origins.check(req.headers()),
        None => Err(ServerError::Internal(
            "allowed origins are not configured in the app".into(),
        )),
    };
    if let Err(error) = checked {
        tracing::warn!(error = %error, path = req.path(), "request refused");
        if let Some(service) = req.app_data::<web::Data<crate::ChatService>>() {
            service.metrics.error(error.kind());
        }
        return Err(error.into());
    }
    next.call(req).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderValue;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(origin) = origin {
            map.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        map
    }

    #[test]
    fn without_keys_only_addresses_localhost_and_listed_names_are_served() {
        let origins = Origins::new(&["chat.example.org".into()], &[], false);
        for host in [
            "127.0.0.1:8765",
            "[::1]:8765",
            "localhost:8765",
            "LOCALHOST",
            "10.1.2.3",
            "chat.example.org:80",
        ] {
            assert!(origins.check(&headers(host, None)).is_ok(), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8765",
            "127.0.0.1.evil.example",
            "localhost.evil.example",
        ] {
            let refused = origins.check(&headers(host, None)).unwrap_err();
            assert_eq!(refused.kind(), "unknown_host", "{host}");
        }
        // With keys, a rebinding page has no key: any name passes unless names are listed.
        assert!(
            Origins::new(&[], &[], true)
                .check(&headers("evil.example", None))
                .is_ok()
        );
        assert!(
            Origins::new(&["a.org".into()], &[], true)
                .check(&headers("evil.example", None))
                .is_err()
        );
        assert!(
            Origins::new(&["*".into()], &[], false)
                .check(&headers("evil.example", None))
                .is_ok()
        );
    }

    #[test]
    fn only_the_server_itself_and_listed_pages_may_be_the_origin() {
        let origins = Origins::new(&[], &["https://app.example.org/".into()], false);
        let host = "127.0.0.1:8765";
        for origin in [
            "http://127.0.0.1:8765",
            "https://127.0.0.1:8765",
            "HTTPS://app.example.org",
        ] {
            assert!(origins.check(&headers(host, Some(origin))).is_ok(), "{origin}");
        }
        for origin in [
            "https://evil.example",
            "http://127.0.0.1:9999",
            "http://localhost:8765",
            "null",
            "file://",
            "https://app.example.org.evil.example",
        ] {
            let refused = origins.check(&headers(host, Some(origin))).unwrap_err();
            assert_eq!(refused.kind(), "forbidden_origin", "{origin}");
        }
        assert!(
            Origins::new(&[], &["*".into()], false)
                .check(&headers(host, Some("https://evil.example")))
                .is_ok()
        );
    }

    #[test]
    fn requests_a_page_elsewhere_can_make_are_told_apart() {
        let origins = Origins::new(&[], &["https://app.example.org".into()], false);
        let host = "127.0.0.1:8765";
        let with = |pairs: &[(&str, &str)]| {
            let mut map = headers(host, None);
            for (name, value) in pairs {
                map.insert(
                    header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_str(value).unwrap(),
                );
            }
            origins.cross_site(&map)
        };
        // Programs, the server's own page, a listed page, a typed URL.
        for fine in [
            vec![],
            vec![("Origin", "http://127.0.0.1:8765")],
            vec![("Origin", "http://127.0.0.1:8765"), ("Sec-Fetch-Site", "same-origin")],
            vec![("Origin", "https://app.example.org"), ("Sec-Fetch-Site", "cross-site")],
            vec![("Sec-Fetch-Site", "none")],
        ] {
            assert_eq!(with(&fine), None, "{fine:?}");
        }
        for (refused, why) in [
            (vec![("Origin", "https://evil.example")], "Origin: https://evil.example"),
            (vec![("Sec-Fetch-Site", "cross-site")], "Sec-Fetch-Site: cross-site"),
            (vec![("Sec-Fetch-Site", "Same-Site")], "Sec-Fetch-Site: same-site"),
            (
                vec![("Origin", "http://127.0.0.1:9999"), ("Sec-Fetch-Site", "same-site")],
                "Origin: http://127.0.0.1:9999",
            ),
        ] {
            assert_eq!(with(&refused).as_deref(), Some(why), "{refused:?}");
        }
        // "*" lets any page past the guard, not past this check.
        let any = Origins::new(&[], &["*".into()], false);
        let mut map = headers(host, Some("https://evil.example"));
        assert!(any.check(&map).is_ok());
        assert!(any.cross_site(&map).is_some());
        map.remove(header::ORIGIN);
        assert!(any.cross_site(&map).is_none());
    }

    #[test]
    fn host_names_lose_their_port() {
        assert_eq!(host_name("example.org:8765"), "example.org");
        assert_eq!(host_name("[::1]:8765"), "[::1]");
        assert_eq!(host_name("[::1]"), "[::1]");
        assert_eq!(host_name("example.org"), "example.org");
    }
}
