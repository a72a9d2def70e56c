//! One map spread over the host's threads (NEFF loads run on every core).

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` over `items` on up to [`crate::device::cpu::host_threads`] threads,
/// each taking the next item when it is free; the results in `items` order.
/// A panic in `f` propagates.
pub(crate) fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = crate::device::cpu::host_threads().min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(item)));
        }
    };
    let mut out: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mine = work();
        let theirs = helpers
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        for (i, r) in mine.into_iter().chain(theirs) {
            out[i] = Some(r);
        }
    });
    out.into_iter()
        .map(|r| r.expect("every item was taken once"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_the_items_order() {
        let items: Vec<u64> = (0..1000).collect();
        assert_eq!(
            super::map(&items, |&x| x * x),
            items.iter().map(|x| x * x).collect::<Vec<_>>()
        );
        assert!(super::map(&[] as &[u8], |&x| x).is_empty());
    }
}
