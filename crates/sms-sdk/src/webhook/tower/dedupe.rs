//! The tower layer's deduplication ([`VerifyLayer::dedupe`](super::VerifyLayer::dedupe)): the
//! verified event's dedupe key is claimed before the inner service runs, marked done after a 2xx
//! response, and freed after any other answer, an error, a panic or a dropped response future.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http::StatusCode;

use crate::store::{ClaimToken, DedupeClaim, DedupeStore};

/// The layer's dedupe store and the lease and retention it claims and commits with.
#[derive(Clone)]
pub(super) struct Dedupe {
    pub(super) store: Arc<dyn DedupeStore>,
    pub(super) lease: Duration,
    pub(super) retention: Duration,
}

impl fmt::Debug for Dedupe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dedupe").field("lease", &self.lease).field("retention", &self.retention).finish_non_exhaustive()
    }
}

/// What the layer does with a verified event once its key is asked for.
pub(super) enum Step {
    /// Call the inner service, holding the claim.
    Handle(Held),
    /// Answer with this status and one-line reason, without calling the inner service.
    Answer(StatusCode, &'static str),
}

/// What a claim's answer means for the request: the token to hold while the inner service runs,
/// or the layer's own answer (409 `in_progress` while another delivery is handled, 200
/// `duplicate` once one was). Pure.
pub(super) fn on_claim(claim: DedupeClaim) -> Result<ClaimToken, (StatusCode, &'static str)> {
    match claim {
        DedupeClaim::Claimed(token) => Ok(token),
        DedupeClaim::InFlight => Err((StatusCode::CONFLICT, "in_progress")),
        DedupeClaim::Done => Err((StatusCode::OK, "duplicate")),
    }
}

/// Whether the inner service's answer `status` says the event was handled (2xx): the key is then
/// marked done; any other status frees it for the redelivery. Pure.
pub(super) fn handled(status: StatusCode) -> bool {
    status.is_success()
}

impl Dedupe {
    /// Claims `key` now: [`Step::Handle`] for this delivery, or the layer's answer. A store that
    /// fails is answered 503 `store_unavailable`, the key untouched.
    pub(super) async fn claim(&self, key: &str) -> Step {
        match self.store.claim_at(key, SystemTime::now(), self.lease).await {
            Ok(claim) => match on_claim(claim) {
                Ok(token) => Step::Handle(Held {
                    claim: Some((token, key.to_owned())),
                    store: Arc::clone(&self.store),
                    retention: self.retention,
                }),
                Err((status, reason)) => Step::Answer(status, reason),
            },
            Err(error) => {
                tracing::warn!(%error, dedupe_key = key, "claiming a webhook's dedupe key failed; answering 503");
                Step::Answer(StatusCode::SERVICE_UNAVAILABLE, "store_unavailable")
            }
        }
    }
}

/// A claim held while the inner service runs. [`finish`](Held::finish) commits or releases it;
/// dropped before that (the response future was dropped, or the inner service panicked), it
/// releases the key on a task of the tokio runtime.
pub(super) struct Held {
    /// The token and the key, until the claim is settled.
    claim: Option<(ClaimToken, String)>,
    store: Arc<dyn DedupeStore>,
    retention: Duration,
}

impl Held {
    /// Commits the key when the event was `handled`, else releases it, and waits for that. It
    /// runs on a task of its own, so a response future dropped meanwhile does not stop it
    /// halfway. Failures are logged: the response goes out either way.
    pub(super) async fn finish(mut self, handled: bool) {
        let Some((token, key)) = self.claim.take() else { return };
        let (store, retention) = (Arc::clone(&self.store), self.retention);
        let settling = tokio::spawn(async move {
            if handled {
                commit(&*store, &key, retention).await;
            } else {
                release(&*store, &key, &token).await;
            }
        });
        // A store call that panicked (a bug) is its task's alone: the response goes out.
        let _ = settling.await;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some((token, key)) = self.claim.take() else { return };
        let store = Arc::clone(&self.store);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { release(&*store, &key, &token).await });
        } else {
            tracing::warn!(
                dedupe_key = key,
                "no tokio runtime to free a webhook's dedupe key: it frees when the lease runs out"
            );
        }
    }
}

impl fmt::Debug for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Held").field("claim", &self.claim).field("retention", &self.retention).finish_non_exhaustive()
    }
}

/// Marks `key` done; a failure is logged (the event was handled, and the response goes out).
async fn commit(store: &dyn DedupeStore, key: &str, retention: Duration) {
    if let Err(error) = store.commit_at(key, SystemTime::now(), retention).await {
        tracing::warn!(
            %error,
            dedupe_key = key,
            "marking a handled webhook's dedupe key done failed; a redelivery after its claim's lease is handled again"
        );
    }
}

/// Frees `key` of `token`'s claim; a failure is logged (the key frees when the lease runs out).
async fn release(store: &dyn DedupeStore, key: &str, token: &ClaimToken) {
    if let Err(error) = store.release(key, token).await {
        tracing::warn!(
            %error,
            dedupe_key = key,
            "freeing the dedupe key of a webhook that was not handled failed; it frees when its claim's lease runs out"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    #[test]
    fn a_claim_decides_the_layers_answer() {
        let token = ClaimToken::new();
        assert_eq!(on_claim(DedupeClaim::Claimed(token.clone())), Ok(token));
        assert_eq!(on_claim(DedupeClaim::InFlight), Err((StatusCode::CONFLICT, "in_progress")));
        assert_eq!(on_claim(DedupeClaim::Done), Err((StatusCode::OK, "duplicate")));
    }

    #[test]
    fn only_a_2xx_answer_means_handled() {
        for (status, done) in [(200, true), (204, true), (299, true), (199, false), (301, false), (409, false)] {
            assert_eq!(handled(StatusCode::from_u16(status).unwrap()), done, "{status}");
        }
        assert!(!handled(StatusCode::SERVICE_UNAVAILABLE) && !handled(StatusCode::INTERNAL_SERVER_ERROR));
    }

    fn dedupe(store: &MemoryStore) -> Dedupe {
        Dedupe { store: Arc::new(store.clone()), lease: Duration::from_mins(1), retention: Duration::from_mins(1) }
    }

    #[tokio::test]
    async fn a_held_claim_dropped_unsettled_frees_the_key() {
        let store = MemoryStore::new();
        let Step::Handle(held) = dedupe(&store).claim("evt").await else { panic!("not claimed") };
        assert!(matches!(dedupe(&store).claim("evt").await, Step::Answer(StatusCode::CONFLICT, "in_progress")));
        drop(held);
        tokio::task::yield_now().await;
        assert!(matches!(store.claim("evt").await.unwrap(), DedupeClaim::Claimed(_)), "the drop freed the key");
    }

    #[tokio::test]
    async fn a_finished_claim_is_done_or_free() {
        let store = MemoryStore::new();
        let Step::Handle(held) = dedupe(&store).claim("handled").await else { panic!("not claimed") };
        held.finish(true).await;
        assert!(matches!(dedupe(&store).claim("handled").await, Step::Answer(StatusCode::OK, "duplicate")));
        let Step::Handle(held) = dedupe(&store).claim("failed").await else { panic!("not claimed") };
        held.finish(false).await;
        assert!(matches!(dedupe(&store).claim("failed").await, Step::Handle(_)));
    }
}
