//! What a worker does after an empty poll: the backoff schedule of [`IdlePolicy`].
//!
//! Kept apart from the poll loop so the schedule is tested without DPDK. It must never
//! sleep before `sleep_after` empty polls in a row, never sleep less than `min_sleep` or
//! more than `max_sleep`, and a poll that received anything starts it over.

use std::time::Duration;

use crate::spec::IdlePolicy;

/// The next idle action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleStep {
    /// Poll again at once.
    Spin,
    /// A CPU pause hint, then poll again.
    Pause,
    /// Go offline and sleep this long.
    Sleep(Duration),
}

/// A worker's position in its backoff schedule.
#[derive(Clone, Debug)]
pub struct Backoff {
    policy: IdlePolicy,
    empty_polls: u32,
    next_sleep: Duration,
}

impl Backoff {
    pub fn new(policy: IdlePolicy) -> Backoff {
        Backoff {
            policy,
            empty_polls: 0,
            next_sleep: Self::min(policy),
        }
    }

    fn min(policy: IdlePolicy) -> Duration {
        match policy {
            IdlePolicy::Backoff { min_sleep, .. } => min_sleep,
            IdlePolicy::BusyPoll => Duration::ZERO,
        }
    }

    /// A poll received packets: start the schedule over.
    #[inline]
    pub fn busy(&mut self) {
        self.empty_polls = 0;
        self.next_sleep = Self::min(self.policy);
    }

    /// A poll received nothing: what to do now.
    #[inline]
    pub fn idle(&mut self) -> IdleStep {
        let IdlePolicy::Backoff {
            pause_after,
            sleep_after,
            max_sleep,
            ..
        } = self.policy
        else {
            return IdleStep::Spin;
        };
        self.empty_polls = self.empty_polls.saturating_add(1);
        if self.empty_polls >= sleep_after {
            let s = self.next_sleep.min(max_sleep);
            self.next_sleep = (s * 2).min(max_sleep);
            IdleStep::Sleep(s)
        } else if self.empty_polls >= pause_after {
            IdleStep::Pause
        } else {
            IdleStep::Spin
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn sleeps_from_min_doubling_to_max_and_restarts_when_busy() {
        let mut b = Backoff::new(IdlePolicy::Backoff {
            pause_after: 2,
            sleep_after: 4,
            min_sleep: us(50),
            max_sleep: us(300),
        });
        let steps: Vec<IdleStep> = (0..8).map(|_| b.idle()).collect();
        use IdleStep::*;
        assert_eq!(
            steps,
            [
                Spin,
                Pause,
                Pause,
                Sleep(us(50)),
                Sleep(us(100)),
                Sleep(us(200)),
                Sleep(us(300)),
                Sleep(us(300))
            ]
        );
        b.busy();
        assert_eq!(b.idle(), Spin);
        let steps: Vec<IdleStep> = (0..3).map(|_| b.idle()).collect();
        assert_eq!(steps, [Pause, Pause, Sleep(us(50))], "starts over at min");
    }

    #[test]
    fn min_equal_to_max_sleeps_a_fixed_time_and_busy_poll_never_sleeps() {
        let mut b = Backoff::new(IdlePolicy::Backoff {
            pause_after: 0,
            sleep_after: 1,
            min_sleep: us(7),
            max_sleep: us(7),
        });
        for _ in 0..5 {
            assert_eq!(b.idle(), IdleStep::Sleep(us(7)));
        }
        let mut b = Backoff::new(IdlePolicy::BusyPoll);
        for _ in 0..1000 {
            assert_eq!(b.idle(), IdleStep::Spin);
        }
    }
}
