//! Property tests of the kernels with arbitrary inputs: every call either returns an error or a
//! result with the kernel's invariants (ranges, conserved counts, draws on the simplex) — and
//! never panics, so nothing reaches the Python binding's last-resort panic guard.

use crate::metrics::Metric;
use crate::{
    auc, binning, ensemble, f1, labelfree, posterior, sampling, segments, special, summary,
};
use proptest::prelude::*;

/// Any f64: NaN, infinities, subnormals, zeros, huge and ordinary values.
fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        proptest::num::f64::ANY,
        Just(0.0),
        Just(-0.0),
        Just(1.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::MIN_POSITIVE / 4.0),
        Just(special::MIN_POSITIVE_SHAPE),
        1e-308f64..1e-290,
        0.0f64..1.0,
        0.0f64..1e15,
    ]
}

/// Non-negative counts and pseudo-counts, including the awkward ones.
fn count() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(1e-300),
        Just(5e-324),
        0.0f64..1e-3,
        0.0f64..10.0,
        0.0f64..1e6,
        Just(1e12),
        Just(1e99),
        Just(1e150),
    ]
}

fn metrics() -> Vec<Metric> {
    crate::metrics::BINARY_METRIC_NAMES
        .iter()
        .map(|n| Metric::from_name(n, 1.0).unwrap())
        .collect()
}

fn in_range(m: Metric, v: f64) -> bool {
    match m {
        Metric::Mcc | Metric::Informedness | Metric::Markedness | Metric::Kappa => {
            (-1.0..=1.0).contains(&v)
        }
        Metric::PositiveLikelihoodRatio
        | Metric::NegativeLikelihoodRatio
        | Metric::DiagnosticOddsRatio => v >= 0.0,
        _ => (0.0..=1.0).contains(&v),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // 256 cases in CI; PROPTEST_CASES overrides it for longer local runs.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        failure_persistence: None,
        // A fixed seed: CI must not pass or fail by luck. Change it locally to explore further.
        rng_seed: proptest::test_runner::RngSeed::Fixed(20_261_121),
        ..ProptestConfig::default()
    })]

    #[test]
    fn binning_conserves_counts(
        rows in proptest::collection::vec((any_f64(), any::<bool>()), 0..200),
        max_bins in 1usize..20,
    ) {
        let scores: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let positive: Vec<bool> = rows.iter().map(|r| r.1).collect();
        match binning::unique_scores(&scores, &positive, None) {
            Err(_) => prop_assert!(scores.iter().any(|s| !s.is_finite())),
            Ok(u) => {
                prop_assert!(u.values.windows(2).all(|w| w[0] < w[1]));
                let n_pos = positive.iter().filter(|p| **p).count() as f64;
                prop_assert_eq!(u.pos.iter().sum::<f64>(), n_pos);
                prop_assert_eq!(u.neg.iter().sum::<f64>(), rows.len() as f64 - n_pos);
                let b = binning::equal_frequency(&u, max_bins).unwrap();
                prop_assert!(b.values.len() <= max_bins.max(u.values.len().min(max_bins)));
                prop_assert_eq!(b.pos.iter().sum::<f64>(), n_pos);
                let merged = binning::merge(&u, &b);
                prop_assert_eq!(merged.pos.iter().sum::<f64>(), 2.0 * n_pos);
            }
        }
    }

    #[test]
    fn dirichlet_draws_lie_on_the_simplex(alpha in proptest::collection::vec(count(), 1..8)) {
        match posterior::dirichlet_draws(&alpha, 64, 3) {
            Err(_) => prop_assert!(
                alpha.iter().all(|a| *a == 0.0)
                    || alpha.iter().any(|a| *a > crate::sampling::MAX_SHAPE)
            ),
            Ok(draws) => {
                for draw in draws.chunks(alpha.len()) {
                    let sum: f64 = draw.iter().sum();
                    prop_assert!((sum - 1.0).abs() <= 1e-12, "sum {} for {:?}", sum, alpha);
                    prop_assert!(draw.iter().all(|v| (0.0..=1.0).contains(v)));
                }
            }
        }
    }

    #[test]
    fn binary_metric_draws_stay_in_range(alpha in proptest::array::uniform4(any_f64())) {
        let all = metrics();
        if let Ok(out) = posterior::binary_metric_draws(alpha, &all, 50, 9, 0.0) {
            for (m, row) in all.iter().zip(out.chunks(50)) {
                for &v in row {
                    prop_assert!(!v.is_nan() && in_range(*m, v), "{:?} = {} for {:?}", m, v, alpha);
                }
            }
        }
    }

    #[test]
    fn auc_draws_stay_in_the_unit_interval(
        counts in proptest::collection::vec((count(), count()), 1..30),
        prior in count(),
    ) {
        let pos: Vec<f64> = counts.iter().map(|c| c.0).collect();
        let neg: Vec<f64> = counts.iter().map(|c| c.1).collect();
        if let Ok(out) = auc::binned_draws(&pos, &neg, prior, 40, 5, true, true) {
            prop_assert!(out.iter().all(|v| (0.0..=1.0).contains(v)), "{:?}", out);
        }
        if let Ok((a, p)) = auc::point_values(&pos, &neg) {
            prop_assert!((0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&p));
        }
    }

    #[test]
    fn chunk_auc_and_ap_draws_stay_in_the_unit_interval_or_are_nan(
        rows in proptest::collection::vec((any_f64(), any::<bool>()), 0..60),
        cut in 0usize..60,
        bins in 1usize..40,
    ) {
        let scores: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let positive: Vec<bool> = rows.iter().map(|r| r.1).collect();
        let starts = [0, cut.min(rows.len())];
        for kernel in [auc::chunk_draws, auc::chunk_ap_draws] {
            if let Ok((observed, out)) = kernel(&scores, &positive, &starts, bins, 20, 3) {
                let valid = |v: &f64| v.is_nan() || (0.0..=1.0).contains(v);
                prop_assert!(out.iter().chain(&observed).all(valid), "{:?} {:?}", observed, out);
            } else {
                prop_assert!(scores.iter().any(|s| !s.is_finite()));
            }
        }
    }

    #[test]
    fn label_free_estimates_stay_in_range(
        reference in proptest::collection::vec((any_f64(), any::<bool>()), 1..80),
        rows in proptest::collection::vec((any_f64(), 0u8..3), 0..80),
        n_bins in 0usize..12,
        threshold in any_f64(),
        realized in any::<bool>(),
        perfect in any::<bool>(),
        drift_sd in 0.0f64..3.0,
        bin_sd in 0.0f64..3.0,
        slope in -5.0f64..5.0,
    ) {
        let scores: Vec<f64> = rows.iter().map(|r| r.0).collect();
        // Known labels: 0, 1, or missing (NaN).
        let labels: Vec<f64> = rows.iter().map(|r| [0.0, 1.0, f64::NAN][r.1 as usize]).collect();
        let ref_scores: Vec<f64> = reference.iter().map(|r| r.0).collect();
        let ref_labels: Vec<bool> = reference.iter().map(|r| r.1).collect();
        let Ok(cal) = labelfree::fit(&ref_scores, &ref_labels, n_bins, threshold) else {
            return Ok(());
        };
        let Ok(chunks) = labelfree::chunk_stats(&cal, &scores, &[0], perfect, Some(&labels)) else {
            prop_assert!(scores.iter().any(|s| !(0.0..=1.0).contains(s)));
            return Ok(());
        };
        let settings = labelfree::Settings {
            target: if realized { labelfree::Target::Realized } else { labelfree::Target::Population },
            mode: if perfect { labelfree::Mode::Perfect } else { labelfree::Mode::Reference },
            within_bin: true,
            want_auc: true,
            want_ap: true,
            zero_division: 0.0,
        };
        let all = metrics();
        let k = cal.n_bins();
        let delta: Vec<f64> = (0..21).map(|g| (g as f64 - 10.0) * 0.3 * drift_sd.max(0.01)).collect();
        let log_prior = delta.iter().map(|d| -0.5 * (d / drift_sd.max(0.01)).powi(2)).collect();
        let grid = labelfree::Grid { values: delta, log_prior };
        // Each chunk its own tilt prior: the grid's, moved by c points.
        let points = grid.values.len();
        let chunk_tilt_prior: Vec<f64> = (0..chunks.len() * points)
            .map(|i| {
                let (c, j) = (i / points, i % points);
                grid.log_prior[(j + c) % points]
            })
            .collect();
        let drift = labelfree::Drift {
            shift: grid.clone(),
            tilt: grid,
            centre: -1.0,
            bin_sd,
            slope: vec![slope; k],
            slope_se: vec![slope.abs(); k],
            ref_mean: (0..k).map(|i| { let (l, h) = cal.bounds(i); 0.5 * (l + h) }).collect(),
            chunk_shift_prior: Vec::new(),
            chunk_tilt_prior,
            // Chunks whose scores moved: each its own, larger bin sd.
            chunk_bin_sd: (0..chunks.len()).map(|c| bin_sd * (1.0 + c as f64)).collect(),
            chunk_centre_sd: Vec::new(),
            // Bins that move on their own more than the rest.
            bin_extra_var: (0..k).map(|i| bin_sd * (i % 3) as f64).collect(),
            // Two groups of bins (a multiclass model's predicted classes), each its own shift.
            class_shift: Some(labelfree::ClassShift {
                groups: (0..k).map(|i| i % 2).collect(),
                n_groups: 2,
                offset: (0..chunks.len() * k).map(|i| slope * (i % 3) as f64).collect(),
                sd: (0..chunks.len() * 2).map(|i| bin_sd * i as f64).collect(),
                move_sd: bin_sd,
                move_loading: (0..k * 2).map(|i| slope * (i % 2) as f64).collect(),
                // Each chunk's own lower-triangular factor of the moves, in place of move_sd.
                move_factor: (0..chunks.len())
                    .flat_map(|_| [bin_sd, 0.0, slope, bin_sd])
                    .collect(),
            }),
        };
        // Average precision's score slices: two per bin, the upper one with all the rows.
        let size = chunks.len() * k * 2;
        let slices = labelfree::ScoreSlices {
            per_bin: 2,
            share: (0..size).map(|i| (i % 2) as f64).collect(),
            mean: (0..size).map(|i| cal.bounds((i / 2) % k).1).collect(),
            span: (0..size).map(|i| 0.5 * (i % 2) as f64).collect(),
        };
        let out = labelfree::estimate(
            &cal, &chunks, &all, settings, Some(&drift), Some(&slices), 20, 1,
        ).unwrap();
        for (row, values) in out.chunks(20).enumerate() {
            for &v in values {
                if row < all.len() {
                    prop_assert!(!v.is_nan() && in_range(all[row], v), "{:?} = {}", all[row], v);
                } else {
                    prop_assert!((0.0..=1.0).contains(&v));
                }
            }
        }
    }

    #[test]
    fn ensemble_statistics_are_finite(
        values in proptest::collection::vec(any_f64(), 0..60),
        m in 1usize..6,
        threshold in any_f64(),
    ) {
        let n = values.len() / m.max(1);
        let proba = &values[..m * n];
        if let Ok(out) = ensemble::ensemble_stats(proba, m, n, threshold) {
            prop_assert!(out.iter().all(|v| v.is_finite() && *v >= 0.0));
        }
    }

    #[test]
    fn intervals_of_any_samples(samples in proptest::collection::vec(any_f64(), 0..100), ci in any_f64()) {
        match summary::summarize(&samples, ci) {
            Err(_) => prop_assert!(
                samples.is_empty() || samples.iter().any(|s| s.is_nan()) || !(ci > 0.0 && ci < 1.0)
            ),
            Ok(s) => {
                prop_assert!(s.hdi.0 <= s.hdi.1 && s.eti.0 <= s.eti.1);
                prop_assert!(!s.median.is_nan() && !s.eti.0.is_nan() && !s.eti.1.is_nan() && !s.mean.is_nan() || s.mean.is_nan());
                prop_assert!(s.eti.0 <= s.median && s.median <= s.eti.1, "{:?}", s);
            }
        }
    }

    #[test]
    fn exact_beta_functions_never_panic(a in any_f64(), b in any_f64(), p in any_f64()) {
        for x in [special::beta_ppf(p, a, b), special::beta_isf(p, a, b)].into_iter().flatten() {
            prop_assert!((0.0..=1.0).contains(&x));
        }
        if let Ok((low, high)) = special::beta_hdi(a, b, p) {
            prop_assert!(0.0 <= low && low <= high && high <= 1.0);
        }
        // Elementwise like scipy: NaN in, NaN out; anything else gives probabilities.
        if let Ok((below, above)) = special::beta_cdf(p, a, b)
            && !p.is_nan()
        {
            prop_assert!((0.0..=1.0).contains(&below) && (0.0..=1.0).contains(&above));
        }
    }

    #[test]
    fn exact_f1_functions_never_panic(a in any_f64(), b in any_f64(), ci in any_f64()) {
        if let Ok((mean, var)) = f1::f1_mean_var(a, b) {
            prop_assert!((0.0..=1.0).contains(&mean) && (0.0..=0.25).contains(&var));
        }
        if let Ok(mode) = f1::f1_mode(a, b) {
            prop_assert!((0.0..=1.0).contains(&mode));
        }
        if let Ok((low, high)) = f1::f1_hdi(a, b, ci) {
            prop_assert!(0.0 <= low && low <= high && high <= 1.0);
        }
    }

    #[test]
    fn exact_f1_at_ordinary_shapes(a in 1.0f64..1e13, b in 1.0f64..1e13, ci in 0.01f64..0.99) {
        let (mean, var) = f1::f1_mean_var(a, b).unwrap();
        prop_assert!(mean > 0.0 && mean <= 1.0 && var >= 0.0);
        let (low, high) = f1::f1_hdi(a, b, ci).unwrap();
        prop_assert!(0.0 <= low && low <= high && high <= 1.0);
        let mode = f1::f1_mode(a, b).unwrap();
        prop_assert!(low <= mode && mode <= high, "mode {mode} outside [{low}, {high}]");
    }

    #[test]
    fn binomial_draws_stay_within_n(n in 0u64..2_000_000_000_000, p in any_f64()) {
        let mut s = sampling::Sampler::new(crate::rng::stream(n, 1));
        let x = s.binomial(n, p);
        prop_assert!(x <= n);
    }

    #[test]
    fn segment_summaries_stay_in_range(cells in proptest::collection::vec(count(), 0..24)) {
        let usable = cells.len() / 4 * 4;
        let metric = [segments::SegmentMetric::Sampled(Metric::F1)];
        if let Ok(out) = segments::segment_summaries(&cells[..usable], [1.0; 4], &metric, 30, 2, 0.9, 0.0) {
            prop_assert!(out.iter().all(|v| (0.0..=1.0).contains(v)), "{:?}", out);
        }
    }
}
