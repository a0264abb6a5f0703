//! A small state-graph runtime: named nodes (agents), each of which updates the shared
//! [`AgentState`] and returns an *outcome* (`"dependent"`, `"linked"`, `"stopped"`, …); edges
//! declared in one place (`pipeline.rs`) map a node's outcome to the next node or to [`END`]. The
//! runtime follows them from the entry node, times every node, opens a tracing span per node and
//! stops runaway loops after `max_steps`. An agent never names the node after it.
//!
//! Agents are added by name, so one can be swapped (`with_node` again under the same name) or a
//! new one inserted (re-point an edge at it) without touching the others.

use crate::context::AgentContext;
use crate::error::AgentError;
use crate::state::{AgentState, NodeTiming};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

/// A node of the graph.
#[async_trait::async_trait]
pub trait Agent: Send + Sync {
    /// The node's name, as routes refer to it.
    fn name(&self) -> &'static str;
    /// Reads and updates the state; returns the outcome the graph's edges route on.
    async fn run(&self, state: &mut AgentState, ctx: &AgentContext) -> Result<&'static str, AgentError>;
}

/// The target of an edge that ends the question.
pub const END: &str = "__end__";

pub struct StateGraph {
    nodes: HashMap<&'static str, Arc<dyn Agent>>,
    /// (node, outcome) → next node or [`END`].
    edges: HashMap<(&'static str, &'static str), &'static str>,
    entry: &'static str,
    max_steps: usize,
}

impl StateGraph {
    pub fn new(entry: &'static str) -> Self {
        Self {
            nodes: HashMap::new(),
            edges: HashMap::new(),
            entry,
            max_steps: 32,
        }
    }

    /// Adds (or replaces) the node named `agent.name()`.
    pub fn with_node(mut self, agent: impl Agent + 'static) -> Self {
        self.nodes.insert(agent.name(), Arc::new(agent));
        self
    }

    /// Routes `outcome` of node `from` to node `to` (or [`END`]).
    pub fn with_edge(mut self, from: &'static str, outcome: &'static str, to: &'static str) -> Self {
        self.edges.insert((from, outcome), to);
        self
    }

    pub fn with_max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps;
        self
    }

    /// Runs the graph from the entry node until an edge leads to [`END`].
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
            let started = Instant::now();
            let span = tracing::info_span!("agent", node = current);
            let result = node.run(state, ctx).instrument(span).await;
            state.timings.push(NodeTiming {
                node: current.into(),
                elapsed: started.elapsed(),
            });
            let outcome = result?;
            observer(current, state);
            let next = *self
                .edges
                .get(&(current, outcome))
                .ok_or(AgentError::NoEdge { node: current, outcome })?;
            if next == END {
                return Ok(());
            }
            current = next;
        }
        Err(AgentError::TooManySteps { max: self.max_steps })
    }
}
