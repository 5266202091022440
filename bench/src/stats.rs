//! Latency samples and their summary (nearest-rank percentiles).

use std::time::Duration;

/// Latencies of one kind of request, in the order they completed.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    micros: Vec<u64>,
}

/// What a set of samples says: count and percentiles in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub count: usize,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

impl Samples {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, d: Duration) {
        self.micros.push(d.as_micros().min(u64::MAX as u128) as u64);
    }

    pub fn extend(&mut self, other: Samples) {
        self.micros.extend(other.micros);
    }

    pub fn len(&self) -> usize {
        self.micros.len()
    }

    pub fn is_empty(&self) -> bool {
        self.micros.is_empty()
    }

    /// None when there are no samples: a percentile of nothing is no figure.
    pub fn summary(&self) -> Option<Summary> {
        if self.micros.is_empty() {
            return None;
        }
        let mut v = self.micros.clone();
        v.sort_unstable();
        let ms = |us: u64| us as f64 / 1000.0;
        let sum: u128 = v.iter().map(|&x| x as u128).sum();
        Some(Summary {
            count: v.len(),
            min_ms: ms(v[0]),
            p50_ms: ms(percentile_sorted(&v, 50.0)),
            p90_ms: ms(percentile_sorted(&v, 90.0)),
            p99_ms: ms(percentile_sorted(&v, 99.0)),
            max_ms: ms(v[v.len() - 1]),
            mean_ms: sum as f64 / v.len() as f64 / 1000.0,
        })
    }
}

/// Nearest-rank percentile of ascending `sorted` (non-empty): the smallest
/// sample with at least `p`% of the samples at or below it. It is always a
/// sample that was measured, never an interpolation between two.
pub fn percentile_sorted(sorted: &[u64], p: f64) -> u64 {
    assert!(!sorted.is_empty(), "percentile of no samples");
    let n = sorted.len();
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_on_one_to_hundred() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile_sorted(&v, 50.0), 50);
        assert_eq!(percentile_sorted(&v, 99.0), 99);
        assert_eq!(percentile_sorted(&v, 100.0), 100);
        assert_eq!(percentile_sorted(&v, 0.0), 1);
        assert_eq!(percentile_sorted(&v, 0.5), 1);
        assert_eq!(percentile_sorted(&v, 99.1), 100);
    }

    #[test]
    fn p99_of_few_samples_is_the_worst() {
        // With fewer than 100 samples, p99 must not hide the slowest one.
        let v = [1, 2, 3, 1000];
        assert_eq!(percentile_sorted(&v, 99.0), 1000);
        assert_eq!(percentile_sorted(&v, 50.0), 2);
    }

    #[test]
    fn summary_sorts_and_converts() {
        let mut s = Samples::new();
        for us in [9000, 1000, 5000, 3000, 7000] {
            s.push(Duration::from_micros(us));
        }
        let m = s.summary().expect("samples");
        assert_eq!(m.count, 5);
        assert_eq!(m.min_ms, 1.0);
        assert_eq!(m.p50_ms, 5.0);
        assert_eq!(m.p99_ms, 9.0);
        assert_eq!(m.max_ms, 9.0);
        assert_eq!(m.mean_ms, 5.0);
        assert!(Samples::new().summary().is_none());
    }
}
