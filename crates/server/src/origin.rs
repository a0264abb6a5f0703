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
        Self {
            hosts,
            origins: list(allowed_origins, |o| o.trim().trim_end_matches('/').to_ascii_lowercase()),
        }
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
        let authority = normalized
            .strip_prefix("http://")
            .or_else(|| normalized.strip_prefix("https://"));
        let same_origin = match (authority, host) {
            (Some(authority), Some(host)) => authority == host.trim().to_ascii_lowercase(),
            _ => false,
        };
        let listed = self
            .origins
            .as_ref()
            .is_none_or(|origins| origins.contains(&normalized));
        if same_origin || listed {
            Ok(())
        } else {
            Err(ServerError::ForbiddenOrigin {
                origin: origin.to_owned(),
            })
        }
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
    fn host_names_lose_their_port() {
        assert_eq!(host_name("example.org:8765"), "example.org");
        assert_eq!(host_name("[::1]:8765"), "[::1]");
        assert_eq!(host_name("[::1]"), "[::1]");
        assert_eq!(host_name("example.org"), "example.org");
    }
}
