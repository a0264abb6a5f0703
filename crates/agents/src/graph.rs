//! A small state-graph runtime: named nodes (agents), each of which updates the shared
//! [`AgentState`] and sets its `route`; the runtime follows routes from the entry node until a
//! node routes to `Finish`, times every node, opens a tracing span per node and stops runaway
//! loops after `max_steps`.
//!
//! Agents are added by name, so one can be swapped (`add` again under the same name) or a new one
//! inserted (route to it from an existing node) without touching the others.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::state::{AgentState, NodeTiming, Route};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

/// A node of the graph.
#[async_trait::async_trait]
pub trait Agent: Send + Sync {
    /// The node's name, as routes refer to it.
    fn name(&self) -> &'static str;
    /// Reads and updates the state, and sets `state.route`.
    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<(), AgentError>;
}

pub struct StateGraph {
    nodes: HashMap<&'static str, Arc<dyn Agent>>,
    entry: &'static str,
    max_steps: usize,
}

impl StateGraph {
    pub fn new(entry: &'static str) -> Self {
        Self {
            nodes: HashMap::new(),
            entry,
            max_steps: 32,
        }
    }

    /// Adds (or replaces) the node named `agent.name()`.
    pub fn with_node(mut self, agent: impl Agent + 'static) -> Self {
        self.nodes.insert(agent.name(), Arc::new(agent));
        self
    }

    pub fn with_max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps;
        self
    }

    /// Runs the graph from the entry node until a node routes to `Finish`.
    pub async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<(), AgentError> {
        self.run_observed(state, ctx, &mut |_, _| {}).await
    }

    /// Like [`run`](Self::run), calling `observer` with the node's name and the state after each
    /// node that succeeds (how stage events reach a WebSocket).
    pub async fn run_observed(
        &self,
        state: &mut AgentState,
        ctx: &AgentContext,
        observer: &mut (dyn FnMut(&str, &AgentState) + Send),
    ) -> Result<(), AgentError> {
        let mut current = self.entry;
        for _ in 0..self.max_steps {
            let node = self
                .nodes
                .get(current)
                .ok_or(AgentError::UnknownNode { name: current })?;
            state.route = Route::Finish;
            let started = Instant::now();
            let span = tracing::info_span!("agent", node = current);
            let result = node.run(state, ctx).instrument(span).await;
            state.timings.push(NodeTiming {
                node: current.into(),
                elapsed: started.elapsed(),
            });
            result?;
            observer(current, state);
            match state.route {
                Route::Finish => return Ok(()),
                Route::To(next) => current = next,
            }
        }
        Err(AgentError::TooManySteps { max: self.max_steps })
    }
}
