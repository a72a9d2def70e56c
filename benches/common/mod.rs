//! Helpers shared by the benchmarks.

use std::time::{Duration, Instant};

/// Median seconds per call of `f`, over about `budget` of runs (at least 5).
pub fn time(budget: Duration, mut f: impl FnMut()) -> f64 {
    f(); // warm up
    let mut v = vec![];
    let start = Instant::now();
    while v.len() < 5 || start.elapsed() < budget {
        let t = Instant::now();
        f();
        v.push(t.elapsed().as_secs_f64());
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
