//! Per-caller rate limits: sessions created per hour and questions asked per minute, per API key
//! (without keys, everyone is the one anonymous caller). Fixed windows kept in memory: a restart
//! forgets them, which is fine for limits meant to stop a runaway client, not to bill one.
//!
//! "Questions" is every request that makes the server work for the caller: a question, a lookup,
//! a rating, an export, and a page of history (REST or a WebSocket `resume`), which weighs more
//! the more it carries (`service.rs`).

use crate::error::ServerError;
use chatty_kg_dialogue::Owner;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a caller may do per window (0 = unlimited).
#[derive(Debug, Clone, Copy)]
pub struct RateLimits {
    pub sessions_per_hour: u32,
    pub questions_per_minute: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Action {
    CreateSession,
    Ask,
}

struct Window {
    started: Instant,
    used: u32,
}

/// The windows of every caller seen recently.
pub struct RateLimiter {
    limits: RateLimits,
    windows: Mutex<HashMap<(Option<Owner>, Action), Window>>,
}

impl RateLimiter {
    pub fn new(limits: RateLimits) -> Self {
        Self {
            limits,
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a new session of `owner`, or refuses it.
    pub fn create_session(&self, owner: Option<&Owner>) -> Result<(), ServerError> {
        self.take(
            owner,
            Action::CreateSession,
            self.limits.sessions_per_hour,
            Duration::from_secs(3600),
        )
    }

    /// Counts a question of `owner`, or refuses it.
    pub fn ask(&self, owner: Option<&Owner>) -> Result<(), ServerError> {
        self.take(
            owner,
            Action::Ask,
            self.limits.questions_per_minute,
            Duration::from_secs(60),
        )
    }

    /// Uses up `units` more of `owner`'s question window without refusing anything: for work
    /// whose weight is known only once it is done (a page of history), so that the next requests
    /// are refused sooner.
    pub fn spend(&self, owner: Option<&Owner>, units: u32) {
        let limit = self.limits.questions_per_minute;
        if limit == 0 || units == 0 {
            return;
        }
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let window = windows
            .entry((owner.cloned(), Action::Ask))
            .or_insert(Window { started: now, used: 0 });
        if now.duration_since(window.started) >= Duration::from_secs(60) {
            *window = Window { started: now, used: 0 };
        }
        window.used = window.used.saturating_add(units).min(limit);
    }

    fn take(&self, owner: Option<&Owner>, action: Action, limit: u32, length: Duration) -> Result<(), ServerError> {
        if limit == 0 {
            return Ok(());
        }
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Forget windows that are over, so the map holds only recent callers.
        if windows.len() > 10_000 {
            windows.retain(|_, w| now.duration_since(w.started) < Duration::from_secs(3600));
        }
        let window = windows
            .entry((owner.cloned(), action))
            .or_insert(Window { started: now, used: 0 });
        if now.duration_since(window.started) >= length {
            *window = Window { started: now, used: 0 };
        }
        if window.used >= limit {
            let retry = length.saturating_sub(now.duration_since(window.started));
            return Err(ServerError::RateLimited {
                what: match action {
                    Action::CreateSession => "sessions per hour",
                    Action::Ask => "questions per minute",
                },
                limit,
                retry_after_secs: retry.as_secs().max(1),
            });
        }
        window.used += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_caller_has_its_own_window() {
        let limiter = RateLimiter::new(RateLimits {
            sessions_per_hour: 2,
            questions_per_minute: 3,
        });
        let (alice, bob) = (Owner::of_api_key("alice"), Owner::of_api_key("bob"));
        for _ in 0..3 {
            limiter.ask(Some(&alice)).unwrap();
        }
        let refused = limiter.ask(Some(&alice)).unwrap_err();
        assert_eq!(refused.kind(), "rate_limited");
        assert!(refused.to_string().contains("3 questions per minute"), "{refused}");
        limiter.ask(Some(&bob)).unwrap();
        limiter.ask(None).unwrap();
        limiter.create_session(Some(&alice)).unwrap();
        limiter.create_session(Some(&alice)).unwrap();
        assert!(limiter.create_session(Some(&alice)).is_err());
        // Spent units count like asked ones, never beyond the limit, for the spender only.
        let carol = Owner::of_api_key("carol");
        limiter.ask(Some(&carol)).unwrap();
        limiter.spend(Some(&carol), 1);
        limiter.ask(Some(&carol)).unwrap();
        assert!(limiter.ask(Some(&carol)).is_err());
        limiter.spend(Some(&bob), 100);
        assert!(limiter.ask(Some(&bob)).is_err());
        limiter.ask(None).unwrap();
        let unlimited = RateLimiter::new(RateLimits {
            sessions_per_hour: 0,
            questions_per_minute: 0,
        });
        for _ in 0..1000 {
            unlimited.ask(None).unwrap();
        }
    }
}
