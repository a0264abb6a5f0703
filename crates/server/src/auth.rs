//! Optional API keys. A handler that takes a [`Caller`] is protected: with keys configured the
//! request must carry one (`Authorization: Bearer KEY`, `X-API-Key: KEY`, or `?api_key=KEY` for
//! a browser's WebSocket, which cannot set headers), and the caller's sessions are the ones
//! created with the same key. Without keys everyone is the same anonymous caller, which
//! [`crate::serve`] allows only on a loopback address.

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
    pub fn new(keys: &[String]) -> Self {
        Self {
            owners: keys.iter().map(|k| Owner::of_api_key(k)).collect(),
        }
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

fn presented_key(req: &HttpRequest) -> Option<String> {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    if let Some(token) = header("authorization").and_then(|v| v.strip_prefix("Bearer ")) {
        return Some(token.trim().to_owned());
    }
    if let Some(key) = header("x-api-key") {
        return Some(key.trim().to_owned());
    }
    web::Query::<KeyQuery>::from_query(req.query_string())
        .ok()
        .and_then(|q| q.into_inner().api_key)
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
        let keys = ApiKeys::new(&["k1".into(), "k2".into()]);
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
        ] {
            assert!(matches!(owner(&bad), Err(ServerError::Unauthorized)));
        }
        let open = ApiKeys::new(&[]);
        assert_eq!(
            open.caller(&TestRequest::default().to_http_request()).unwrap().owner,
            None
        );
    }
}
