//! Response latency: how long the emulator waits before it answers a send request, chosen per
//! request by a function the caller gives ([`EmulatorBuilder::latency`]).
//!
//! The wait comes after the request was handled: it is recorded, and a message it creates exists,
//! before the wait starts. A client that gives up during the wait therefore finds a message that
//! was created although it never saw the answer, as with a slow provider.
//!
//! [`EmulatorBuilder::latency`]: crate::EmulatorBuilder::latency

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::model::ReceivedMessage;

/// The longest wait applied, whatever the function returns: one day.
pub(crate) const MAX_LATENCY: Duration = Duration::from_hours(24);

type LatencyFn = dyn Fn(&ReceivedMessage) -> Duration + Send + Sync;

/// The latency function, or none (answer at once).
#[derive(Clone, Default)]
pub(crate) struct Latency(Option<Arc<LatencyFn>>);

impl Latency {
    /// A latency chosen by `choose` for each request.
    pub(crate) fn new(choose: impl Fn(&ReceivedMessage) -> Duration + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(choose)))
    }

    /// The wait before answering `request`, at most [`MAX_LATENCY`]; zero without a function.
    pub(crate) fn of(&self, request: &ReceivedMessage) -> Duration {
        self.0.as_ref().map_or(Duration::ZERO, |choose| choose(request).min(MAX_LATENCY))
    }
}

impl fmt::Debug for Latency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Latency(per request)" } else { "Latency(none)" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Provider;

    #[test]
    fn none_waits_nothing_and_waits_are_capped() {
        let request = ReceivedMessage::new(Provider::Twilio, time::OffsetDateTime::UNIX_EPOCH);
        assert_eq!(Latency::default().of(&request), Duration::ZERO);
        assert_eq!(Latency::new(|_| Duration::from_millis(7)).of(&request), Duration::from_millis(7));
        assert_eq!(Latency::new(|_| Duration::MAX).of(&request), MAX_LATENCY);
        assert_eq!(format!("{:?}", Latency::default()), "Latency(none)");
    }
}
