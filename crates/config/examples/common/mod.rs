//! Shared by the timing examples (`reload_latency`, `churn_reload`).

use std::time::Duration;

use config::reload::ReloadTimings;

/// Series per reload step: read, check, diff, derive/compile, whole `reload()`.
pub type Steps = [Vec<Duration>; 5];

/// Appends one reload's step times and its total `all` to `steps`.
pub fn record(steps: &mut Steps, t: &ReloadTimings, all: Duration) {
    for (v, d) in steps
        .iter_mut()
        .zip([t.read, t.check, t.diff, t.compile, all])
    {
        v.push(d);
    }
}

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
