//! Helpers shared by the benchmarks.

use std::time::{Duration, Instant};

// Each bench target compiles this module for itself and uses only some of it.

/// Median seconds per call of `f`, over about `budget` of runs (at least 5).
#[allow(dead_code)]
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

/// Best and median of `reps` timings of `f`, after one untimed warm-up pass.
/// On a shared, noisy machine the best pass is the figure of merit and the
/// median shows the typical one.
#[allow(dead_code)]
pub fn best_and_median(reps: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    f();
    let mut t: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    t.sort();
    (t[0], t[reps / 2])
}
