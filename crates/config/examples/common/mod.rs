//! Shared by the timing examples (`reload_latency`, `churn_reload`).

use std::time::Duration;

/// Prints min / median / max of `v` in milliseconds with `decimals` digits (sorts `v`);
/// prints nothing for an empty series.
pub fn summary(name: &str, v: &mut [Duration], decimals: usize) {
    if v.is_empty() {
        return;
    }
    v.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:22} min {:8.*} ms  median {:8.*} ms  max {:8.*} ms",
        decimals,
        ms(v[0]),
        decimals,
        ms(v[v.len() / 2]),
        decimals,
        ms(v[v.len() - 1])
    );
}
