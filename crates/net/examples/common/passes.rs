//! The timing loop `lpm_lookup` and `lpm6_lookup` share (included with `#[path]`: an
//! example cannot depend on another).

use std::hint::black_box;
use std::time::{Duration, Instant};

/// A batched lookup: `out[i]` for `keys[i]`.
pub type Batch<L, K> = fn(&L, &[K], &mut [u32]);

/// The best rate of each pass in Mlookups/s, the passes alternated for `secs`: single
/// lookups (`single`), then the batch in bursts of 64 (the router's default burst) and
/// 32 (DPDK's customary one), then the scalar batch in the same bursts (the same code as
/// the batch where the CPU has no AVX-512 form).
pub fn best_rates<L, K: Copy>(
    lpm: &L,
    keys: &[K],
    secs: f64,
    single: fn(&L, K) -> u32,
    batch: Batch<L, K>,
    scalar: Batch<L, K>,
) -> [f64; 5] {
    let passes = [(64, batch), (32, batch), (64, scalar), (32, scalar)];
    let mut best = [f64::MAX; 5];
    let mut out = [0u32; 64];
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs_f64(secs) {
        let t = Instant::now();
        let mut acc = 0u32;
        for &k in keys {
            acc = acc.wrapping_add(single(lpm, k));
        }
        black_box(acc);
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        for (i, (burst, batch)) in passes.iter().enumerate() {
            let t = Instant::now();
            let mut acc = 0u32;
            for keys in keys.chunks(*burst) {
                batch(lpm, keys, &mut out);
                acc = acc.wrapping_add(out[0]);
            }
            black_box(acc);
            best[i + 1] = best[i + 1].min(t.elapsed().as_secs_f64());
        }
    }
    best.map(|s| keys.len() as f64 / s / 1e6)
}
