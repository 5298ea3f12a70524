//! Where the SDK's randomness comes from: random ids (send ids, reservation ids, Vonage JWT ids,
//! dedupe claim tokens) and the jitter of rate-limit retries. Decisions never call this module: they
//! take its numbers as arguments.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// The process's id generator: a 256-bit key drawn once from the operating system, and a
/// counter. Each id is the SHA-256 of the key and the next count, so ids are unique within the
/// process (the counts differ), unpredictable without the key, and as unlikely to collide across
/// processes as ids drawn from the operating system one by one, without a system call per id.
///
/// A process that forks after its first id shares the key and the count with its child: fork
/// before sending, or exec.
struct Ids {
    key: [u8; 32],
    next: AtomicU64,
}

impl Ids {
    /// The generator, keyed on first use. `getrandom` 0.2 is the major `ring` already brings in,
    /// so the providers' build holds one `getrandom`. Should the operating system's generator
    /// fail, the key comes from `fastrand`: these ids must be unique, not secret, and a send must
    /// not panic.
    fn get() -> &'static Self {
        static IDS: OnceLock<Ids> = OnceLock::new();
        IDS.get_or_init(|| {
            let mut key = [0_u8; 32];
            if getrandom::getrandom(&mut key).is_err() {
                for half in key.chunks_exact_mut(16) {
                    half.copy_from_slice(&fastrand::u128(..).to_le_bytes());
                }
            }
            Ids { key, next: AtomicU64::new(0) }
        })
    }

    /// The next 16 random bytes.
    fn next_bytes(&self) -> [u8; 16] {
        let count = self.next.fetch_add(1, Ordering::Relaxed);
        let digest = Sha256::new().chain_update(self.key).chain_update(count.to_le_bytes()).finalize();
        let mut bytes = [0_u8; 16];
        for (byte, digested) in bytes.iter_mut().zip(digest) {
            *byte = digested;
        }
        bytes
    }
}

/// A random (version 4) UUID.
pub(crate) fn uuid_v4() -> uuid::Uuid {
    uuid::Builder::from_random_bytes(Ids::get().next_bytes()).into_uuid()
}

/// 128 random bits (a dedupe claim's token): all of them random, unlike a UUID's 122.
pub(crate) fn random_128() -> u128 {
    u128::from_le_bytes(Ids::get().next_bytes())
}

/// A number in `[0, 1)` for the jitter of a retry delay.
pub(crate) fn jitter() -> f64 {
    fastrand::f64()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn uuids_are_version_4_and_differ() {
        let (a, b) = (super::uuid_v4(), super::uuid_v4());
        assert_eq!(a.get_version_num(), 4);
        assert_eq!(a.get_variant(), uuid::Variant::RFC4122);
        assert_ne!(a, b);
    }

    #[test]
    fn uuids_do_not_repeat_across_threads() {
        let threads: Vec<_> =
            (0..4).map(|_| std::thread::spawn(|| (0..2_000).map(|_| super::uuid_v4()).collect::<Vec<_>>())).collect();
        let mut seen = HashSet::new();
        for thread in threads {
            for id in thread.join().unwrap() {
                assert!(seen.insert(id), "{id} repeated");
            }
        }
        assert_eq!(seen.len(), 8_000);
    }

    #[test]
    fn random_128_bits_differ() {
        let (a, b) = (super::random_128(), super::random_128());
        assert_ne!(a, b);
        assert!(a.count_ones() > 0 && b.count_zeros() > 0);
    }

    #[test]
    fn jitter_is_in_the_unit_interval() {
        for _ in 0..1_000 {
            assert!((0.0..1.0).contains(&super::jitter()));
        }
    }
}
