//! The TEXT2SPARQL challenge's API (<https://text2sparql.aksw.org/>), as its evaluation client
//! (`text2sparql-client`) calls it: `GET /text2sparql?dataset=<IRI>&question=<text>` →
//! `{"dataset", "question", "query"}`; a dataset not served gets 404.
//!
//! Datasets are configured knowledge graphs: `server.text2sparql.datasets` maps the challenge's
//! IRIs to them, and a graph's own name is a dataset too. The query is the generate-only one
//! (`generated.rs`): grounded in the graph, reduced to the answers. A question that comes to no
//! query gets an empty `query` and a `message` saying why.
//!
//! The evaluator sends no key: with `server.text2sparql.open` a request without one is
//! answered, counted in a rate of its own (the per-key rate, for a caller of its own), and it
//! takes answer permits like any question. Not open, the route needs a key like every other.
//!
//! A request answered without a key (a server without keys, or the open route) is a plain `GET`
//! that any web page can make the user's browser send, and it spends the model whether or not
//! the page reads the answer; enough of them and the user's own questions get 429. So such a
//! request that a page sent (a foreign `Origin`, or `Sec-Fetch-Site: cross-site`, see
//! [`crate::origin::Origins::cross_site`]) gets 403 `cross_site`; the evaluator, a program,
//! sends neither.

use crate::auth::ApiKeys;
use crate::error::ServerError;
use crate::service::{Caller, ChatService};
use actix_web::{HttpRequest, HttpResponse, web};
use chatty_kg_dialogue::Owner;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The caller that keyless TEXT2SPARQL requests count as (a stored owner is a hex hash, so no
/// key's owner is this).
const KEYLESS: &str = "text2sparql";

/// The route's settings.
#[derive(Debug, Clone, Default)]
pub struct Text2Sparql {
    pub open: bool,
    /// Dataset IRI → knowledge graph name.
    pub datasets: BTreeMap<String, String>,
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/text2sparql", web::get().to(generate));
}

#[derive(Debug, Deserialize)]
struct Request {
    dataset: String,
    question: String,
}

async fn generate(
    request: HttpRequest,
    service: web::Data<ChatService>,
    keys: web::Data<ApiKeys>,
    settings: web::Data<Text2Sparql>,
    origins: web::Data<crate::origin::Origins>,
    query: web::Query<Request>,
) -> Result<HttpResponse, ServerError> {
    let keyed = keys.required() && crate::auth::carries_key(&request);
    if !keyed && let Some(why) = origins.cross_site(request.headers()) {
        let error = ServerError::CrossSite { why };
        tracing::warn!(error = %error, "text2sparql request refused");
        service.metrics.error(error.kind());
        return Err(error);
    }
    let caller = match keys.caller(&request) {
        Ok(caller) => caller,
        Err(ServerError::Unauthorized) if settings.open && !crate::auth::carries_key(&request) => Caller {
            owner: Some(Owner::from_stored(KEYLESS.to_owned())),
        },
        Err(e) => return Err(e),
    };
    let Request { dataset, question } = query.into_inner();
    let service: Arc<ChatService> = service.into_inner();
    let kg = match settings.datasets.get(&dataset) {
        Some(kg) => kg.clone(),
        None if service.kgs().any(|kg| kg.name == dataset) => dataset.clone(),
        None => {
            let mut known: Vec<&str> = settings.datasets.keys().map(String::as_str).collect();
            known.extend(service.kgs().map(|kg| kg.name.as_str()));
            return Err(ServerError::UnknownDataset {
                dataset,
                known: known.join(", "),
            });
        }
    };
    let (_, explanation) = service
        .ask_once(&caller, Some(&kg), &question, Vec::new(), None, false)
        .await?;
    let generated = explanation.generate_only();
    let mut body = serde_json::json!({
        "dataset": dataset,
        "question": question,
        "query": generated.query.as_deref().unwrap_or(""),
    });
    if generated.query.is_none() {
        body["message"] = generated.explanation.text.into();
    }
    Ok(HttpResponse::Ok().json(body))
}
