//! Scores to bins: unique values with their positive and negative weight, equal-frequency
//! grouping that never splits a tie, and bin assignment.

use crate::{Error, Result};
use rayon::prelude::*;

/// Scores sorted ascending with the total weight of positives and negatives at each distinct
/// value — lossless sufficient statistics for ROC AUC and average precision.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UniqueScores {
    pub values: Vec<f64>,
    pub pos: Vec<f64>,
    pub neg: Vec<f64>,
}

/// Order-preserving integer key of a finite float (as in `f64::total_cmp`); -0.0 and 0.0 are
/// folded together so that they form one tie.
#[inline(always)]
fn key(x: f64) -> i64 {
    let x = if x == 0.0 { 0.0 } else { x };
    let bits = x.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

/// Collapse `scores` into [`UniqueScores`]. `positive[i]` says whether row i is a positive;
/// `weights` (non-negative, default 1) weigh the rows. Rows with zero weight are dropped.
///
/// Sorting is by (score, signed weight), a total order, so the sums of fractional weights
/// are added in the same order whatever the thread count.
pub fn unique_scores(
    scores: &[f64],
    positive: &[bool],
    weights: Option<&[f64]>,
) -> Result<UniqueScores> {
    if scores.len() != positive.len() || weights.is_some_and(|w| w.len() != scores.len()) {
        return Err(Error::invalid(
            "scores, labels and weights must have the same length",
        ));
    }
    if let Some(bad) = scores.iter().find(|s| !s.is_finite()) {
        return Err(Error::invalid(format!(
            "scores must be finite, found {bad}"
        )));
    }
    if let Some(w) = weights
        && let Some(bad) = w.iter().find(|w| !(w.is_finite() && **w >= 0.0))
    {
        return Err(Error::invalid(format!(
            "weights must be finite and >= 0, found {bad}"
        )));
    }
    if weights.is_none() {
        return Ok(unit_weight_counts(scores, positive));
    }
    // Signed weight: + for positives, − for negatives (zero weights are dropped).
    let mut rows: Vec<(i64, f64)> = scores
        .iter()
        .zip(positive)
        .enumerate()
        .filter_map(|(i, (&s, &p))| {
            let w = weights.map_or(1.0, |w| w[i]);
            (w > 0.0).then_some((key(s), if p { w } else { -w }))
        })
        .collect();
    let order = |a: &(i64, f64), b: &(i64, f64)| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1));
    if rows.len() > 1 << 16 {
        rows.par_sort_unstable_by(order);
    } else {
        rows.sort_unstable_by(order);
    }
    let mut out = UniqueScores::default();
    let mut last: Option<i64> = None;
    for (k, w) in rows {
        if last != Some(k) {
            out.values.push(value_of(k));
            out.pos.push(0.0);
            out.neg.push(0.0);
            last = Some(k);
        }
        let i = out.values.len() - 1;
        if w > 0.0 {
            out.pos[i] += w;
        } else {
            out.neg[i] -= w;
        }
    }
    Ok(out)
}

/// [`unique_scores`] for unit weights: the positives' and the negatives' keys are sorted
/// separately (plain integer sorts, the fastest there are) and counted in one merge pass.
/// Counts of ones are exact in any order, so this path needs no tie-break on the weight.
fn unit_weight_counts(scores: &[f64], positive: &[bool]) -> UniqueScores {
    let (mut pos, mut neg): (Vec<i64>, Vec<i64>) = (Vec::new(), Vec::new());
    for (&s, &p) in scores.iter().zip(positive) {
        if p {
            pos.push(key(s))
        } else {
            neg.push(key(s))
        }
    }
    let sort = |keys: &mut Vec<i64>| {
        if keys.len() > 1 << 16 {
            keys.par_sort_unstable();
        } else {
            keys.sort_unstable();
        }
    };
    rayon::join(|| sort(&mut pos), || sort(&mut neg));
    let mut out = UniqueScores::default();
    let (mut i, mut j) = (0, 0);
    while i < pos.len() || j < neg.len() {
        let next = match (pos.get(i), neg.get(j)) {
            (Some(&a), Some(&b)) => a.min(b),
            (Some(&a), None) => a,
            (None, Some(&b)) => b,
            (None, None) => unreachable!(),
        };
        let start = (i, j);
        while i < pos.len() && pos[i] == next {
            i += 1;
        }
        while j < neg.len() && neg[j] == next {
            j += 1;
        }
        out.values.push(value_of(next));
        out.pos.push((i - start.0) as f64);
        out.neg.push((j - start.1) as f64);
    }
    out
}

/// The float whose [`key`] is `k`.
#[inline]
fn value_of(k: i64) -> f64 {
    f64::from_bits((k ^ ((((k >> 63) as u64) >> 1) as i64)) as u64)
}

/// Group consecutive unique values into at most `max_bins` bins of about equal total weight,
/// never splitting a value (a tie stays a tie). Returns per-bin positive and negative weight
/// and each bin's highest score; unchanged when there are at most `max_bins` values.
pub fn equal_frequency(u: &UniqueScores, max_bins: usize) -> Result<UniqueScores> {
    if max_bins < 1 {
        return Err(Error::invalid("max_bins must be at least 1"));
    }
    if u.values.len() <= max_bins {
        return Ok(u.clone());
    }
    let total: f64 = u.pos.iter().zip(&u.neg).map(|(p, n)| p + n).sum();
    let mut out = UniqueScores::default();
    let (mut pos, mut neg, mut cumulative) = (0.0, 0.0, 0.0);
    let mut next_bin = 1usize;
    for i in 0..u.values.len() {
        pos += u.pos[i];
        neg += u.neg[i];
        cumulative += u.pos[i] + u.neg[i];
        let is_last = i + 1 == u.values.len();
        // Close the bin once it reaches its share of the total (or at the end).
        if is_last || cumulative >= total * next_bin as f64 / max_bins as f64 {
            out.values.push(u.values[i]);
            out.pos.push(pos);
            out.neg.push(neg);
            pos = 0.0;
            neg = 0.0;
            while next_bin < max_bins && cumulative >= total * next_bin as f64 / max_bins as f64 {
                next_bin += 1;
            }
        }
    }
    Ok(out)
}

/// Merge two [`UniqueScores`] (data that arrived in parts): union of values, weights added.
pub fn merge(a: &UniqueScores, b: &UniqueScores) -> UniqueScores {
    let mut out = UniqueScores::default();
    let (mut i, mut j) = (0, 0);
    while i < a.values.len() || j < b.values.len() {
        let take_a =
            j >= b.values.len() || (i < a.values.len() && key(a.values[i]) <= key(b.values[j]));
        let take_b =
            i >= a.values.len() || (j < b.values.len() && key(b.values[j]) <= key(a.values[i]));
        let value = if take_a { a.values[i] } else { b.values[j] };
        let (mut p, mut n) = (0.0, 0.0);
        if take_a {
            p += a.pos[i];
            n += a.neg[i];
            i += 1;
        }
        if take_b {
            p += b.pos[j];
            n += b.neg[j];
            j += 1;
        }
        out.values.push(value);
        out.pos.push(p);
        out.neg.push(n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_scores_counts_ties_and_weights() {
        let scores = [0.3, 0.1, 0.3, 0.9, -0.0, 0.0, 0.1];
        let positive = [true, false, false, true, false, true, true];
        let u = unique_scores(&scores, &positive, None).unwrap();
        assert_eq!(u.values, vec![0.0, 0.1, 0.3, 0.9]);
        assert_eq!(u.pos, vec![1.0, 1.0, 1.0, 1.0]);
        assert_eq!(u.neg, vec![1.0, 1.0, 1.0, 0.0]);
        let w = [2.0, 0.5, 0.0, 1.0, 1.0, 1.0, 3.0];
        let u = unique_scores(&scores, &positive, Some(&w)).unwrap();
        assert_eq!(u.pos, vec![1.0, 3.0, 2.0, 1.0]);
        assert_eq!(u.neg, vec![1.0, 0.5, 0.0, 0.0]);
        let ones = [1.0; 7];
        assert_eq!(
            unique_scores(&scores, &positive, Some(&ones)).unwrap(),
            unique_scores(&scores, &positive, None).unwrap()
        );
        assert!(unique_scores(&[f64::NAN], &[true], None).is_err());
        assert!(unique_scores(&[0.1], &[true, false], None).is_err());
        assert!(unique_scores(&[0.1], &[true], Some(&[-1.0])).is_err());
    }

    #[test]
    fn equal_frequency_respects_ties_and_conserves_weight() {
        let scores: Vec<f64> = (0..1000).map(|i| (i / 7) as f64).collect(); // ties of 7
        let positive: Vec<bool> = (0..1000).map(|i| i % 3 == 0).collect();
        let u = unique_scores(&scores, &positive, None).unwrap();
        let b = equal_frequency(&u, 10).unwrap();
        assert!(b.values.len() <= 10);
        let sum = |v: &[f64]| v.iter().sum::<f64>();
        assert_eq!(sum(&b.pos), sum(&u.pos));
        assert_eq!(sum(&b.neg), sum(&u.neg));
        // Each bin holds whole unique values: exactly those in (previous upper, upper].
        let mut lower = f64::NEG_INFINITY;
        for ((upper, p), n) in b.values.iter().zip(&b.pos).zip(&b.neg) {
            let inside = |v: &f64| *v > lower && *v <= *upper;
            let expect_p: f64 = u
                .values
                .iter()
                .zip(&u.pos)
                .filter(|(v, _)| inside(v))
                .map(|x| x.1)
                .sum();
            let expect_n: f64 = u
                .values
                .iter()
                .zip(&u.neg)
                .filter(|(v, _)| inside(v))
                .map(|x| x.1)
                .sum();
            assert_eq!((*p, *n), (expect_p, expect_n));
            // About a tenth of the data each, give or take one tie group.
            assert!((p + n - 100.0).abs() <= 7.0, "bin of {}", p + n);
            lower = *upper;
        }
        assert_eq!(equal_frequency(&u, 1000).unwrap(), u);
    }

    #[test]
    fn merge_equals_collapsing_everything_at_once() {
        let s1 = [0.5, 0.2, 0.9, 0.2];
        let p1 = [true, false, true, true];
        let s2 = [0.2, 0.7, 0.5];
        let p2 = [false, false, true];
        let a = unique_scores(&s1, &p1, None).unwrap();
        let b = unique_scores(&s2, &p2, None).unwrap();
        let all: Vec<f64> = s1.iter().chain(&s2).copied().collect();
        let labels: Vec<bool> = p1.iter().chain(&p2).copied().collect();
        assert_eq!(merge(&a, &b), unique_scores(&all, &labels, None).unwrap());
        assert_eq!(merge(&a, &UniqueScores::default()), a);
    }
}
