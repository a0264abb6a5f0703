//! Optional API keys. A handler that takes a [`Caller`] is protected: with keys configured the
//! request must carry one (`Authorization: Bearer KEY`, `X-API-Key: KEY`, or `?api_key=KEY` on
//! `/ws` only, for a browser's WebSocket, which cannot set headers), and the caller's sessions are
//! the ones created with the same key. Without keys everyone is the same anonymous caller, which
//! [`crate::Server::start`] allows only on a loopback address.
//!
//! Keys and presented keys are trimmed the same way; a blank key cannot be configured (it would
//! count as "keys configured" and match an empty header), and a blank presented key is no key.

use crate::error::ServerError;
use crate::service::Caller;
use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use chatty_kg_dialogue::Owner;
use serde::Deserialize;
use std::collections::HashSet;
use std::future::{Ready, ready};

/// The accepted keys, kept only as hashes.
#[derive(Debug, Default)]
pub struct ApiKeys {
    owners: HashSet<Owner>,
}

impl ApiKeys {
    /// The configured keys; a blank one is refused.
    pub fn new(keys: &[String]) -> Result<Self, ServerError> {
        if keys.iter().any(|k| k.trim().is_empty()) {
            return Err(ServerError::Start("server.api_keys contains an empty key".into()));
        }
        Ok(Self {
            owners: keys.iter().map(|k| Owner::of_api_key(k.trim())).collect(),
        })
    }

    pub fn required(&self) -> bool {
        !self.owners.is_empty()
    }

    /// The caller behind `req`, or `Unauthorized`.
    pub fn caller(&self, req: &HttpRequest) -> Result<Caller, ServerError> {
        if !self.required() {
            return Ok(Caller::default());
        }
        let owner = presented_key(req)
            .map(|key| Owner::of_api_key(&key))
            .filter(|owner| self.owners.contains(owner))
            .ok_or(ServerError::Unauthorized)?;
        Ok(Caller { owner: Some(owner) })
    }
}

#[derive(Deserialize)]
struct KeyQuery {
    api_key: Option<String>,
}

/// The key the request carries (trimmed; blank is none). The query parameter counts only on `/ws`:
/// elsewhere a key in a URL ends up in logs and browser history for no reason.
fn presented_key(req: &HttpRequest) -> Option<String> {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let key = if let Some(token) = header("authorization").and_then(|v| v.strip_prefix("Bearer ")) {
        Some(token.to_owned())
    } else if let Some(key) = header("x-api-key") {
        Some(key.to_owned())
    } else if req.path() == "/ws" {
        web::Query::<KeyQuery>::from_query(req.query_string())
            .ok()
            .and_then(|q| q.into_inner().api_key)
    } else {
        None
    };
    key.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty())
}

/// Whether `req` carries some key, accepted or not.
pub(crate) fn carries_key(req: &HttpRequest) -> bool {
    presented_key(req).is_some()
}

impl FromRequest for Caller {
    type Error = ServerError;
    type Future = Ready<Result<Self, ServerError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(match req.app_data::<web::Data<ApiKeys>>() {
            Some(keys) => keys.caller(req),
            None => Err(ServerError::Internal("API keys are not configured in the app".into())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    #[test]
    fn keys_come_from_headers_or_the_query() {
        let keys = ApiKeys::new(&["k1".into(), " k2 ".into()]).unwrap();
        let owner = |req: &HttpRequest| keys.caller(req).map(|c| c.owner);
        let bearer = TestRequest::default()
            .insert_header(("Authorization", "Bearer k1"))
            .to_http_request();
        assert_eq!(owner(&bearer).unwrap(), Some(Owner::of_api_key("k1")));
        let header = TestRequest::default()
            .insert_header(("X-API-Key", "k2"))
            .to_http_request();
        assert_eq!(owner(&header).unwrap(), Some(Owner::of_api_key("k2")));
        let query = TestRequest::with_uri("/ws?api_key=k2").to_http_request();
        assert_eq!(owner(&query).unwrap(), Some(Owner::of_api_key("k2")));
        for bad in [
            TestRequest::default().to_http_request(),
            TestRequest::default()
                .insert_header(("Authorization", "Bearer k3"))
                .to_http_request(),
            TestRequest::default()
                .insert_header(("Authorization", "Basic k1"))
                .to_http_request(),
            TestRequest::with_uri("/ws?api_key=").to_http_request(),
            // The query parameter counts on /ws only.
            TestRequest::with_uri("/api/kgs?api_key=k2").to_http_request(),
        ] {
            assert!(matches!(owner(&bad), Err(ServerError::Unauthorized)));
        }
        let trimmed = TestRequest::default()
            .insert_header(("X-API-Key", "k2 "))
            .to_http_request();
        assert_eq!(owner(&trimmed).unwrap(), Some(Owner::of_api_key("k2")));
        let open = ApiKeys::new(&[]).unwrap();
        assert_eq!(
            open.caller(&TestRequest::default().to_http_request()).unwrap().owner,
            None
        );
    }

    #[test]
    fn a_blank_key_is_refused_and_an_empty_presented_key_matches_nothing() {
        for blank in ["", "  ", "\t"] {
            assert!(ApiKeys::new(&["k1".into(), blank.into()]).is_err(), "{blank:?}");
        }
        let keys = ApiKeys::new(&["k1".into()]).unwrap();
        for empty in [
            TestRequest::default()
                .insert_header(("X-API-Key", ""))
                .to_http_request(),
            TestRequest::default()
                .insert_header(("X-API-Key", "  "))
                .to_http_request(),
            TestRequest::default()
                .insert_header(("Authorization", "Bearer "))
                .to_http_request(),
            TestRequest::with_uri("/ws?api_key=%20").to_http_request(),
        ] {
            assert!(matches!(keys.caller(&empty), Err(ServerError::Unauthorized)));
        }
    }
}
