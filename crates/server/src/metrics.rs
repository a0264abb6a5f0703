//! Prometheus metrics, served at `/metrics` in the text format: questions by KG and outcome,
//! latency histograms per stage and per agent, LLM calls and tokens, SPARQL queries, errors by
//! kind, ratings of answers, and the live WebSocket connections and answers under way.

use chatty_kg_agents::{Explanation, Outcome};
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
};

pub struct Metrics {
    registry: Registry,
    questions: IntCounterVec,
    stage_seconds: HistogramVec,
    agent_seconds: HistogramVec,
    llm_calls: IntCounterVec,
    llm_tokens: IntCounterVec,
    sparql_queries: IntCounter,
    errors: IntCounterVec,
    pub sessions_created: IntCounter,
    /// Ratings given, by knowledge graph and rating (`up`, `down`, `corrected`, `withdrawn`).
    pub feedback: IntCounterVec,
    pub ws_connections: IntGauge,
    pub answers_in_flight: IntGauge,
    /// 1 when a component works, 0 when not (`llm`, `sessions`), as of the last `/health`.
    pub up: IntGaugeVec,
}

/// From 5 ms (a scripted model) to 5 minutes (a slow CPU model retrying).
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

impl Metrics {
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new_custom(Some("chattykg".into()), None)?;
        let histogram = |name: &str, help: &str, label: &str| {
            HistogramVec::new(HistogramOpts::new(name, help).buckets(BUCKETS.to_vec()), &[label])
        };
        let metrics = Self {
            questions: IntCounterVec::new(
                Opts::new("questions_total", "Questions answered, by knowledge graph and outcome"),
                &["kg", "outcome"],
            )?,
            stage_seconds: histogram(
                "stage_seconds",
                "Time per stage of answering (understanding, linking, query_selection, execution, reply, total)",
                "stage",
            )?,
            agent_seconds: histogram("agent_seconds", "Time per agent run", "agent")?,
            llm_calls: IntCounterVec::new(Opts::new("llm_calls_total", "LLM calls, by agent"), &["agent"])?,
            llm_tokens: IntCounterVec::new(
                Opts::new("llm_tokens_total", "LLM tokens, by direction (input, output)"),
                &["direction"],
            )?,
            sparql_queries: IntCounter::new("sparql_queries_total", "SPARQL queries run to answer questions")?,
            errors: IntCounterVec::new(
                Opts::new("errors_total", "Questions and messages that failed, by error kind"),
                &["kind"],
            )?,
            sessions_created: IntCounter::new("sessions_created_total", "Sessions created")?,
            feedback: IntCounterVec::new(
                Opts::new("feedback_total", "Ratings of answers, by knowledge graph and rating"),
                &["kg", "rating"],
            )?,
            ws_connections: IntGauge::new("websocket_connections", "Open WebSocket connections")?,
            answers_in_flight: IntGauge::new("answers_in_flight", "Questions being answered now")?,
            up: IntGaugeVec::new(
                Opts::new("up", "Whether a component works (1) or not (0), as of the last /health"),
                &["component"],
            )?,
            registry,
        };
        let r = &metrics.registry;
        r.register(Box::new(metrics.questions.clone()))?;
        r.register(Box::new(metrics.stage_seconds.clone()))?;
        r.register(Box::new(metrics.agent_seconds.clone()))?;
        r.register(Box::new(metrics.llm_calls.clone()))?;
        r.register(Box::new(metrics.llm_tokens.clone()))?;
        r.register(Box::new(metrics.sparql_queries.clone()))?;
        r.register(Box::new(metrics.errors.clone()))?;
        r.register(Box::new(metrics.sessions_created.clone()))?;
        r.register(Box::new(metrics.feedback.clone()))?;
        r.register(Box::new(metrics.ws_connections.clone()))?;
        r.register(Box::new(metrics.answers_in_flight.clone()))?;
        r.register(Box::new(metrics.up.clone()))?;
        Ok(metrics)
    }

    /// Records an answered question.
    pub fn answered(&self, kg: &str, explanation: &Explanation) {
        let outcome = match explanation.outcome {
            Outcome::Answered => "answered",
            Outcome::NoAnswer => "no_answer",
            Outcome::UnknownEntity { .. } => "unknown_entity",
            Outcome::UnresolvedReference { .. } => "unresolved_reference",
            Outcome::NoQuery => "no_query",
            Outcome::Clarify { .. } => "clarify",
        };
        self.questions.with_label_values(&[kg, outcome]).inc();
        let t = &explanation.timings;
        for (stage, ms) in t.stages().into_iter().chain([("total", t.total_ms)]) {
            self.stage_seconds.with_label_values(&[stage]).observe(ms / 1000.0);
        }
        for agent in &t.agents {
            self.agent_seconds
                .with_label_values(&[agent.agent.as_str()])
                .observe(agent.ms / 1000.0);
        }
        for (agent, totals) in &explanation.llm.by_agent {
            self.llm_calls
                .with_label_values(&[agent.as_str()])
                .inc_by(u64::from(totals.calls));
        }
        self.llm_tokens
            .with_label_values(&["input"])
            .inc_by(explanation.llm.input_tokens);
        self.llm_tokens
            .with_label_values(&["output"])
            .inc_by(explanation.llm.output_tokens);
        self.sparql_queries.inc_by(explanation.sparql_queries() as u64);
    }

    pub fn error(&self, kind: &str) {
        self.errors.with_label_values(&[kind]).inc();
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> Result<String, prometheus::Error> {
        let mut buffer = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut buffer)?;
        String::from_utf8(buffer).map_err(|e| prometheus::Error::Msg(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_what_was_recorded() {
        let metrics = Metrics::new().unwrap();
        metrics.error("too_large");
        metrics.error("too_large");
        metrics.ws_connections.inc();
        let text = metrics.render().unwrap();
        assert!(text.contains("chattykg_errors_total{kind=\"too_large\"} 2"), "{text}");
        assert!(text.contains("chattykg_websocket_connections 1"), "{text}");
    }
}
