//! Performance without labels: reference-calibrated posterior estimation (SPEC §2.4).
//!
//! Fit on reference data (scores with labels): equal-frequency bins of the reference scores plus
//! an edge at the decision threshold, so that every bin predicts one class; per bin the counts
//! of positives and negatives (the posterior of its positive rate rᵢ is Beta(pos + 2p̄, neg +
//! 2(1 − p̄)), a prior of two rows' weight centred on the reference's positive rate p̄)
//! and the within-bin concordance of positives over negatives (for ROC AUC, see below).
//!
//! Estimate on experiment data (scores only), per chunk: bin counts nᵢ and mean scores. Each
//! population draw takes w ~ Dirichlet(nᵢ + widthᵢ) and rᵢ, and the expected confusion masses
//! TP = Σ wᵢ rᵢ [predᵢ = 1], FP = Σ wᵢ (1 − rᵢ) [predᵢ = 1], FN, TN likewise; every binary
//! metric follows. A realized draw instead takes Xᵢ ~ Binomial(nᵢ, rᵢ) positives per bin: the
//! posterior predictive of the metric these very rows will show once their labels arrive.
//!
//! ROC AUC uses the bins' positive and negative masses in score order. Ten bins make most
//! within-bin pairs ties, and half credit for them biases the AUC low, since a calibrated score
//! still ranks within a bin. The refinement credits within-bin pairs with the bin's measured
//! concordance cₖ instead of ½ — from the reference labels (with its standard error as
//! uncertainty), or from the experiment scores themselves under perfect calibration:
//! AUC = Σₖ pₖ (Qₖ₋₁ + cₖ qₖ) / (P N). For the realized target the within-bin Mann–Whitney count
//! also gets its sampling noise, N(0, X Y (X + Y + 1) / 12).
//!
//! Average precision needs more of the order inside a bin than one concordance: how the
//! positives are spread from the bin's top to its bottom. The model is the simplest that has
//! the bin's concordance: rows spread evenly from top (u = 0) to bottom (u = 1), the positive
//! rate linear in u, p(u) = p̄ + s (½ − u), whose concordance is ½ + s / (12 p̄ (1 − p̄)). AP is
//! then ∫ precision d(recall) bin by bin from the top, by Gauss–Legendre quadrature (see
//! `binned_ap`).

use std::sync::OnceLock;

use crate::f1::gauss_legendre;
use crate::metrics::{Cells, ClassTotals, Metric, MulticlassMetric, class_totals_into};
use crate::parallel;
use crate::posterior::{alloc_output, check_draws, fill_blocks};
use crate::rng::{fork, stream};
use crate::sampling::{Beta, Gamma, Sampler};
use crate::special::{digamma, ln_beta};
use crate::{Error, Result};

/// A fitted reference calibration.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// Inner bin edges, strictly increasing; bin i is `(edges[i − 1], edges[i]]` with outer
    /// edges 0 and 1 (so a score equal to the threshold falls below it: predicted 0).
    pub edges: Vec<f64>,
    /// Reference positives and negatives per bin.
    pub pos: Vec<f64>,
    pub neg: Vec<f64>,
    /// Within-bin concordance of reference positives over negatives (½ with one class only)
    /// and its standard error (Hanley & McNeil).
    pub concordance: Vec<f64>,
    pub concordance_se: Vec<f64>,
    /// Gini mean difference of the reference scores in each bin (`SpreadSum`); empty when
    /// not known (an estimator saved before it was kept): the concordances are then used as
    /// they are in every chunk.
    pub spread: Vec<f64>,
    /// Centre of each bin's rate prior ([`Calibration::rate_prior`]): what the score says of
    /// the bin's rate (its reference rows' mean score, for a calibrated one); empty: the
    /// reference's overall rate in every bin.
    pub rate_centre: Vec<f64>,
    pub threshold: f64,
}

impl Calibration {
    pub fn n_bins(&self) -> usize {
        self.edges.len() + 1
    }

    /// Lower and upper edge of bin i.
    pub fn bounds(&self, i: usize) -> (f64, f64) {
        let low = if i == 0 { 0.0 } else { self.edges[i - 1] };
        let high = if i == self.edges.len() {
            1.0
        } else {
            self.edges[i]
        };
        (low, high)
    }

    /// Whether bin i predicts the positive class (it lies above the threshold).
    pub fn predicts_positive(&self, i: usize) -> bool {
        self.bounds(i).0 >= self.threshold
    }

    /// Prior of bin i's positive rate: a Beta with the weight of two rows, Beta(2 m, 2 (1 − m)),
    /// centred on m = `rate_centre[i]`, or without centres on the reference's positive rate
    /// p̄ = (P + 1) / (P + N + 2). Beta(1, 1) (centred on ½) put half a positive into every bin,
    /// which for a rare class is most of the positives of its low bins, and biased its ROC AUC
    /// low; centred on p̄, every bin's rate is pulled towards the others', which flattens the
    /// calibration and still biased a rare class's AUC low (by 0.14 posterior sds per class
    /// at K = 10 with 2,000 reference rows per bin).
    pub fn rate_prior(&self, i: usize) -> (f64, f64) {
        let rate = match self.rate_centre.get(i) {
            Some(&centre) => centre,
            None => {
                let (p, n): (f64, f64) = (self.pos.iter().sum(), self.neg.iter().sum());
                (p + 1.0) / (p + n + 2.0)
            }
        };
        (2.0 * rate, 2.0 * (1.0 - rate))
    }

    /// Posterior mean of bin i's positive rate ([`Calibration::rate_prior`]).
    pub fn rate_mean(&self, i: usize) -> f64 {
        let prior = self.rate_prior(i);
        (self.pos[i] + prior.0) / (self.pos[i] + self.neg[i] + prior.0 + prior.1)
    }

    /// Bin i's within-bin concordance in a chunk whose scores in the bin have Gini mean
    /// difference `spread`, given its concordance `c` on the reference. The bin's positive rate
    /// climbs with the score by the same slope β in both (P(y | score) is what the reference
    /// measured), and c = ½ + β G / (4 r (1 − r)) (see [`ScoreSlices`]): c − ½ scales with the
    /// chunk's spread over the reference's. A chunk whose rows in the bin share one score
    /// ranks none of them (½); one spread wider ranks them more.
    pub fn chunk_concordance(&self, i: usize, c: f64, spread: f64) -> f64 {
        match self.spread.get(i) {
            Some(&reference) if reference > 0.0 => {
                (0.5 + (c - 0.5) * spread / reference).clamp(0.0, 1.0)
            }
            _ => c,
        }
    }

    /// Bin of a score: the number of inner edges strictly below it.
    #[inline]
    pub fn bin_of(&self, score: f64) -> usize {
        self.edges.partition_point(|&e| e < score)
    }

    /// Rebuild from stored parts (a saved estimator), checking them.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        edges: Vec<f64>,
        pos: Vec<f64>,
        neg: Vec<f64>,
        concordance: Vec<f64>,
        concordance_se: Vec<f64>,
        spread: Vec<f64>,
        rate_centre: Vec<f64>,
        threshold: f64,
    ) -> Result<Self> {
        let k = edges.len() + 1;
        if [
            pos.len(),
            neg.len(),
            concordance.len(),
            concordance_se.len(),
        ]
        .iter()
        .any(|&n| n != k)
        {
            return Err(Error::invalid(
                "a calibration needs one count, concordance and standard error per bin",
            ));
        }
        if edges.windows(2).any(|w| w[0] >= w[1] || w[0].is_nan())
            || edges.iter().any(|e| !(0.0..=1.0).contains(e))
        {
            return Err(Error::invalid(
                "bin edges must be strictly increasing within [0, 1]",
            ));
        }
        let ok = |v: &[f64], high: f64| v.iter().all(|x| x.is_finite() && (0.0..=high).contains(x));
        if !ok(&pos, f64::MAX) || !ok(&neg, f64::MAX) {
            return Err(Error::invalid("bin counts must be finite and >= 0"));
        }
        if !ok(&concordance, 1.0) || !ok(&concordance_se, 1.0) {
            return Err(Error::invalid(
                "concordances and their standard errors must lie in [0, 1]",
            ));
        }
        if !(spread.is_empty() || spread.len() == k) || !ok(&spread, 1.0) {
            return Err(Error::invalid(
                "score spreads must be one per bin (or none), each in [0, 1]",
            ));
        }
        if !(rate_centre.is_empty() || rate_centre.len() == k)
            || rate_centre.iter().any(|c| !(*c > 0.0 && *c < 1.0))
        {
            return Err(Error::invalid(
                "rate prior centres must be one per bin (or none), each in (0, 1)",
            ));
        }
        if !(0.0..=1.0).contains(&threshold) {
            return Err(Error::invalid(format!(
                "threshold must be in [0, 1], got {threshold}"
            )));
        }
        Ok(Self {
            edges,
            pos,
            neg,
            concordance,
            concordance_se,
            spread,
            rate_centre,
            threshold,
        })
    }
}

fn check_scores(name: &str, scores: &[f64]) -> Result<()> {
    if let Some(i) = scores.iter().position(|s| !(0.0..=1.0).contains(s)) {
        return Err(Error::invalid(format!(
            "{name} must be probabilities in [0, 1], found {} at index {i}",
            scores[i]
        )));
    }
    Ok(())
}

/// Values at the given ranks of `values` (reordered in place), by recursive selection:
/// O(n log q) for q ranks, never a full sort.
fn select_ranks(values: &mut [f64], ranks: &[usize], offset: usize, out: &mut Vec<(usize, f64)>) {
    if ranks.is_empty() || values.is_empty() {
        return;
    }
    let mid = ranks.len() / 2;
    let local = ranks[mid] - offset;
    let (below, at, above) = values.select_nth_unstable_by(local, f64::total_cmp);
    out.push((ranks[mid], *at));
    select_ranks(below, &ranks[..mid], offset, out);
    select_ranks(above, &ranks[mid + 1..], offset + local + 1, out);
}

/// Fit: equal-frequency edges of the reference scores (by selection) plus the threshold,
/// per-bin counts and within-bin concordances.
pub fn fit(
    scores: &[f64],
    positive: &[bool],
    n_bins: usize,
    threshold: f64,
) -> Result<Calibration> {
    if scores.len() != positive.len() || scores.is_empty() {
        return Err(Error::invalid(
            "reference scores and labels must be non-empty and of the same length",
        ));
    }
    if n_bins < 1 {
        return Err(Error::invalid("n_bins must be at least 1"));
    }
    if !(0.0..=1.0).contains(&threshold) {
        return Err(Error::invalid(format!(
            "threshold must be in [0, 1], got {threshold}"
        )));
    }
    check_scores("reference scores", scores)?;
    let n = scores.len();
    // The j/n_bins quantiles: the order statistic below which a fraction j/n_bins of the rows
    // lies (bins are closed on the right, so that statistic belongs to the lower bin).
    let ranks: Vec<usize> = (1..n_bins)
        .map(|j| ((j * n).div_ceil(n_bins)).saturating_sub(1))
        .collect();
    let mut work = scores.to_vec();
    let mut picked = Vec::with_capacity(ranks.len());
    let mut unique_ranks = ranks.clone();
    unique_ranks.dedup();
    select_ranks(&mut work, &unique_ranks, 0, &mut picked);
    let mut edges: Vec<f64> = picked.into_iter().map(|(_, v)| v).collect();
    edges.push(threshold);
    // An edge at 1 would leave an empty top bin (scores cannot exceed 1); 0 is a real edge
    // (bin 0 then holds the scores equal to 0).
    edges.retain(|&e| e < 1.0);
    edges.sort_by(f64::total_cmp);
    edges.dedup();
    let k = edges.len() + 1;
    let mut bins: Vec<Vec<(f64, bool)>> = vec![Vec::new(); k];
    let calibration_edges = edges.clone();
    for (&s, &p) in scores.iter().zip(positive) {
        bins[calibration_edges.partition_point(|&e| e < s)].push((s, p));
    }
    let mut pos = vec![0.0; k];
    let mut neg = vec![0.0; k];
    let mut concordance = vec![0.5; k];
    let mut concordance_se = vec![0.0; k];
    let mut spread = vec![0.0; k];
    for (i, rows) in bins.iter_mut().enumerate() {
        let (c, se, p, q, g) = mann_whitney(rows);
        pos[i] = p;
        neg[i] = q;
        concordance[i] = c;
        concordance_se[i] = se;
        spread[i] = g;
    }
    Ok(Calibration {
        edges,
        pos,
        neg,
        concordance,
        concordance_se,
        spread,
        rate_centre: Vec::new(),
        threshold,
    })
}

/// [`fit`] from sufficient statistics: distinct scores ascending with the number of positives
/// and negatives at each (e.g. a merged `ScoreSummary`, for data that never sat in one place).
/// Gives exactly what [`fit`] gives on the rows: the same order statistics as edges, the same
/// counts, the same within-bin concordances (sums of whole counts are exact in any order).
pub fn fit_from_counts(
    values: &[f64],
    pos: &[f64],
    neg: &[f64],
    n_bins: usize,
    threshold: f64,
) -> Result<Calibration> {
    if values.len() != pos.len() || values.len() != neg.len() || values.is_empty() {
        return Err(Error::invalid(
            "values, positives and negatives must be non-empty and of the same length",
        ));
    }
    if n_bins < 1 {
        return Err(Error::invalid("n_bins must be at least 1"));
    }
    if !(0.0..=1.0).contains(&threshold) {
        return Err(Error::invalid(format!(
            "threshold must be in [0, 1], got {threshold}"
        )));
    }
    check_scores("reference scores", values)?;
    if values.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::invalid("values must be strictly increasing"));
    }
    let whole = |v: &f64| v.is_finite() && *v >= 0.0 && v.fract() == 0.0;
    if !pos.iter().chain(neg).all(whole) {
        return Err(Error::invalid(
            "counts must be whole numbers >= 0 (unweighted rows)",
        ));
    }
    let counts: Vec<f64> = pos.iter().zip(neg).map(|(p, q)| p + q).collect();
    let n = counts.iter().sum::<f64>() as usize;
    if n == 0 {
        return Err(Error::invalid("no rows"));
    }
    // Order statistic r is the value where the running count first exceeds r.
    let mut edges = Vec::with_capacity(n_bins);
    let (mut index, mut below) = (0usize, 0.0f64);
    for j in 1..n_bins {
        let rank = ((j * n).div_ceil(n_bins)).saturating_sub(1) as f64;
        while below + counts[index] <= rank {
            below += counts[index];
            index += 1;
        }
        edges.push(values[index]);
    }
    edges.push(threshold);
    edges.retain(|&e| e < 1.0);
    edges.sort_by(f64::total_cmp);
    edges.dedup();
    let k = edges.len() + 1;
    let (mut bin_pos, mut bin_neg) = (vec![0.0; k], vec![0.0; k]);
    let (mut wins, mut neg_below) = (vec![0.0; k], vec![0.0; k]);
    let mut spreads: Vec<SpreadSum> = (0..k).map(|_| SpreadSum::default()).collect();
    for ((&v, &p), &q) in values.iter().zip(pos).zip(neg) {
        let b = edges.partition_point(|&e| e < v);
        // Ascending values: every negative seen before in the bin scored lower.
        wins[b] += p * (neg_below[b] + 0.5 * q);
        neg_below[b] += q;
        bin_pos[b] += p;
        bin_neg[b] += q;
        spreads[b].add(v, p + q);
    }
    let mut concordance = vec![0.5; k];
    let mut concordance_se = vec![0.0; k];
    for b in 0..k {
        (concordance[b], concordance_se[b]) = concordance_and_se(wins[b], bin_pos[b], bin_neg[b]);
    }
    Ok(Calibration {
        edges,
        pos: bin_pos,
        neg: bin_neg,
        concordance,
        concordance_se,
        spread: spreads.iter().map(SpreadSum::gini).collect(),
        rate_centre: Vec::new(),
        threshold,
    })
}

/// Concordance P(score of a positive > score of a negative) + ½ P(tie) within one bin, its
/// Hanley–McNeil standard error, the numbers of positives and negatives, and the scores'
/// Gini mean difference ([`SpreadSum`]).
fn mann_whitney(rows: &mut [(f64, bool)]) -> (f64, f64, f64, f64, f64) {
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut pos, mut neg, mut wins) = (0.0, 0.0, 0.0);
    let mut spread = SpreadSum::default();
    let mut i = 0;
    while i < rows.len() {
        let mut j = i;
        let (mut tie_pos, mut tie_neg) = (0.0, 0.0);
        while j < rows.len() && rows[j].0 == rows[i].0 {
            if rows[j].1 {
                tie_pos += 1.0
            } else {
                tie_neg += 1.0
            }
            j += 1;
        }
        wins += tie_pos * (neg + 0.5 * tie_neg);
        pos += tie_pos;
        neg += tie_neg;
        spread.add(rows[i].0, tie_pos + tie_neg);
        i = j;
    }
    let (concordance, se) = concordance_and_se(wins, pos, neg);
    (concordance, se, pos, neg, spread.gini())
}

/// How a bin's scores spread, from its distinct scores taken in ascending order, each with
/// its number of rows: the Gini mean difference G = E|s − s′| over pairs of distinct rows
/// (tied pairs count 0), which with the positive rate's slope β on the score sets the
/// within-bin concordance ½ + β G / (4 r (1 − r)); and the share of the Mann–Whitney count's
/// variance that ties leave, 1 − Σ (t³ − t) / (n³ − n) over runs of t tied rows.
#[derive(Clone, Copy, Debug, Default)]
struct SpreadSum {
    rows: f64,
    sum: f64,
    /// Σ over pairs of distinct rows, each pair once, of the higher score minus the lower.
    gaps: f64,
    ties: f64,
}

impl SpreadSum {
    /// Add `count` rows at `value`, at least every value added before (one call per run of
    /// ties: the tie term counts a run as a whole).
    fn add(&mut self, value: f64, count: f64) {
        self.gaps += count * (value * self.rows - self.sum);
        self.rows += count;
        self.sum += count * value;
        self.ties += count * count * count - count;
    }

    fn gini(&self) -> f64 {
        if self.rows < 2.0 {
            return 0.0;
        }
        (2.0 * self.gaps / (self.rows * (self.rows - 1.0))).clamp(0.0, 1.0)
    }

    fn tie_factor(&self) -> f64 {
        if self.rows < 2.0 {
            return 1.0;
        }
        let n = self.rows;
        (1.0 - self.ties / (n * n * n - n)).clamp(0.0, 1.0)
    }
}

/// The concordance wins / (pos neg) and its Hanley–McNeil standard error (½ and 0 when a
/// class is missing).
fn concordance_and_se(wins: f64, pos: f64, neg: f64) -> (f64, f64) {
    if pos == 0.0 || neg == 0.0 {
        return (0.5, 0.0);
    }
    let a = wins / (pos * neg);
    let (q1, q2) = (a / (2.0 - a), 2.0 * a * a / (1.0 + a));
    let var =
        (a * (1.0 - a) + (pos - 1.0) * (q1 - a * a) + (neg - 1.0) * (q2 - a * a)) / (pos * neg);
    (a, var.max(0.0).sqrt())
}

/// How P(y | score) moves between periods, learned from the reference split into periods
/// (see `probeval.labelfree`): each chunk's positive rate in bin i is
///
///   logit θᵢ = ℓᵢ + offᵢ + a + b (ℓᵢ − ℓ̄) + εᵢ,   ℓᵢ = logit rᵢ,
///
/// with rᵢ the reference rate, offᵢ the within-bin shift (the chunk's scores sit higher or lower
/// inside the bin than the reference's did: `slope` × the difference of mean scores), (a, b) the
/// chunk's recalibration — a shift of all bins and a change of how far apart they are, priors on
/// equally spaced grids — and εᵢ ~ N(0, sdᵢ²) the bin's own deviation, drawn as a moment-matched
/// Beta so that the chunk's known labels update it conjugately. Known labels also update
/// (a, b), through their grid posterior.
#[derive(Clone, Debug, PartialEq)]
pub struct Drift {
    /// The common shift a (logit).
    pub shift: Grid,
    /// The change b of the calibration slope, around the centre ℓ̄ of the bins' logits.
    pub tilt: Grid,
    pub centre: f64,
    /// Standard deviation (logit) of each bin's own deviation.
    pub bin_sd: f64,
    /// Per bin, a further variance (logit²) of its own deviation on top of every chunk's
    /// `bin_sd` (or `chunk_bin_sd`): the bins are not alike in how much they move on their
    /// own (a threshold's few, clustered predicted positives move more). Empty: none.
    pub bin_extra_var: Vec<f64>,
    /// Per bin: slope of the positive rate on the score, its standard error, and the mean
    /// reference score.
    pub slope: Vec<f64>,
    pub slope_se: Vec<f64>,
    pub ref_mean: Vec<f64>,
    /// Per chunk, the prior log-density of its shift a on the shift grid (chunks × points,
    /// row-major), when the labels that arrived in other chunks say how production moves; empty:
    /// every chunk has the shift grid's own prior. The centring of the bins' logits always uses
    /// the grid's own prior (how the reference's periods move).
    pub chunk_shift_prior: Vec<f64>,
    /// Per chunk, the prior log-density of its tilt b on the tilt grid (chunks × points), as
    /// `chunk_shift_prior` for the shift: labels can show production's calibration flattening
    /// or steepening. Empty: the grid's own prior.
    pub chunk_tilt_prior: Vec<f64>,
    /// Per chunk, the standard deviation (logit) of each bin's own deviation, in place of
    /// `bin_sd`: a chunk whose scores moved beyond anything the reference showed can also move
    /// in the shape of its calibration, not only by a common shift. Empty: `bin_sd` for all.
    pub chunk_bin_sd: Vec<f64>,
    /// Per chunk, the sd (logit) by which its shift spreads beyond the reference periods' own
    /// (its scores moved further than theirs did): its bins' logits are centred so that
    /// averaging over that wider spread, too, gives the reference rates back
    /// ([`Drift::centre_shifts`]). Empty, or 0 for a chunk: the periods' own centring.
    pub chunk_centre_sd: Vec<f64>,
    /// A shift shared by the bins of each group (a multiclass model's predicted class), on top
    /// of the common one; None: no groups.
    pub class_shift: Option<ClassShift>,
}

/// A shift of the logit rate shared by the bins of a group, per chunk: bin i of group gᵢ moves
/// by offsetᵢ + sd_gᵢ z_gᵢ, z ~ N(0, 1) per group and draw. A multiclass model's predicted
/// classes each move by their own amount: whether a prediction of "late" is right moves with
/// the season more than whether one of "on time" is.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassShift {
    /// Per bin, its group.
    pub groups: Vec<usize>,
    pub n_groups: usize,
    /// Per chunk and bin (row-major), the mean offset (logit).
    pub offset: Vec<f64>,
    /// Per chunk and group (row-major), the sd (logit).
    pub sd: Vec<f64>,
    /// Moves of the groups' own log-odds that no stretch of the reference shows (a multiclass
    /// model's unseen drift): each draw moves class j's log-odds by eⱼ ~ N(0, move_sd²), which
    /// moves bin i's logit rate by Σⱼ loadingᵢⱼ eⱼ (`move_loading`, bins × groups, row-major;
    /// or chunks × bins × groups, each chunk's own: a label shift moves the shares the
    /// derivative is taken at)
    /// and the error shares' tilt of class j by eⱼ. Drawing both from the same eⱼ keeps what
    /// one class's move does to its precision and to its recall together: more rows of class j
    /// make more predictions of j right and more mistakes j. Empty loading: no moves.
    pub move_sd: f64,
    pub move_loading: Vec<f64>,
    /// Per chunk, a lower-triangular factor F of the moves' covariance (chunks × groups ×
    /// groups, row-major), in place of `move_sd`: each draw's moves are e = F z, z ~ N(0, I).
    /// A label shift located from the chunk's scores moves the classes' log-odds by amounts
    /// that are correlated (one class gaining rows is the others losing them) and known to
    /// each chunk's own precision. Empty: `move_sd` for every chunk.
    pub move_factor: Vec<f64>,
}

impl ClassShift {
    /// Whether the draws move the classes' log-odds (`move_sd` or `move_factor`, and
    /// `move_loading`).
    fn moves(&self) -> bool {
        (self.move_sd > 0.0 || !self.move_factor.is_empty()) && !self.move_loading.is_empty()
    }
}

/// What a chunk's labels need from the drift model: per bin the logit offset and standard
/// deviation of its own deviation (see [`Drift`]), the variance of the reference rate's logit,
/// the reference logit, and the bins with known labels.
struct LabelTerms {
    offset: Vec<f64>,
    /// Per bin, how much further (logit) its labelled rows' rate sits than the bin's, for
    /// where in the bin they sit ([`ChunkStats::label_move`]).
    label_move: Vec<f64>,
    /// Per bin, the variance of `label_move` ([`ChunkStats::label_move_var`]).
    label_var: Vec<f64>,
    sd: Vec<f64>,
    rate_var: Vec<f64>,
    centre: Vec<f64>,
    labelled: Vec<usize>,
    /// Per labelled bin (in `labelled`'s order), its labels' log-likelihood tabulated in
    /// t = a + b (ℓᵢ − ℓ̄), when that is cheaper than evaluating it at every grid point.
    curves: Vec<Option<LabelCurve>>,
}

impl LabelTerms {
    /// The logit variance of bin `i`'s labelled rows' rate around its drift model's: its own
    /// deviation, the reference rate's noise and where the labels sit in the bin.
    fn label_rate_var(&self, i: usize) -> f64 {
        self.sd[i] * self.sd[i] + self.rate_var[i] + self.label_var[i]
    }

    /// ln P(bin `i`'s known labels | t), evaluated.
    fn bin_ln(&self, stats: &ChunkStats, i: usize, t: f64) -> f64 {
        beta_binomial_ln(
            stats.labelled_pos[i],
            stats.labelled_neg[i],
            self.centre[i] + self.offset[i] + self.label_move[i] + t,
            self.label_rate_var(i),
        )
    }
}

/// Largest interpolation error allowed per bin in a [`LabelCurve`] (log-likelihood units): a
/// million times below anything a posterior weight could show, and a curve still costs a few
/// hundred to a few thousand evaluations where the grid of (a, b) costs ten or twenty thousand.
const CURVE_TOLERANCE: f64 = 1e-9;

/// A bin's labels' log-likelihood as a function of t = a + b (ℓᵢ − ℓ̄) on equally spaced nodes,
/// read back by four-point (cubic) Lagrange interpolation. The grid of (a, b) asks for it at
/// every pair: ten to twenty thousand beta-binomial evaluations per bin and chunk, which were
/// half of an estimate's time with labels. Its error is (9/16) h⁴ |f⁗| / 24 at most, and h⁴ f⁗
/// is what the table's fourth differences measure, so a table is kept only when they show it
/// within [`CURVE_TOLERANCE`]. The first step tried follows the binomial's |f⁗| ≤ n / 8 for n
/// labels; a bin whose rate may be U-shaped (a large own sd) bends harder: there the step
/// halves, and once the attempts would have cost half the grid's evaluations the bin is
/// evaluated at every grid point as before (a failed table costs at most half again). A bin
/// whose concentration can meet its floor ([`concentration`]: logit variance above 3.8) has a
/// kink there and is evaluated directly from the start.
struct LabelCurve {
    start: f64,
    step: f64,
    values: Vec<f64>,
}

impl LabelCurve {
    /// Bin `i`'s curve for t from `low` to `high`, or `None` (evaluate the bin at each grid
    /// point) when it may have a kink or when the tables tried would cost more than half of
    /// `budget`, the grid's number of points.
    fn new(
        terms: &LabelTerms,
        stats: &ChunkStats,
        i: usize,
        (low, high): (f64, f64),
        budget: usize,
    ) -> Option<Self> {
        if concentration(0.5, terms.label_rate_var(i)) <= CONCENTRATION_FLOOR {
            return None;
        }
        let n = stats.labelled_pos[i] + stats.labelled_neg[i];
        let mut step = (CURVE_TOLERANCE / (0.003 * n.max(1.0))).powf(0.25);
        let mut spent = 0.0;
        loop {
            let intervals = ((high - low) / step).ceil().max(1.0);
            // Three further nodes: one below the range and two above, for the stencil. All
            // attempts together evaluate at most half as many points as the grid would.
            spent += intervals + 4.0;
            if !intervals.is_finite() || 2.0 * spent > budget as f64 {
                return None;
            }
            let step_used = (high - low) / intervals;
            let start = low - step_used;
            let values: Vec<f64> = (0..intervals as usize + 4)
                .map(|j| terms.bin_ln(stats, i, start + step_used * j as f64))
                .collect();
            let bend = values
                .windows(5)
                .map(|w| (w[0] - 4.0 * w[1] + 6.0 * w[2] - 4.0 * w[3] + w[4]).abs())
                .fold(0.0, f64::max);
            if bend.is_finite() && bend * 9.0 / 16.0 / 24.0 <= CURVE_TOLERANCE {
                return Some(Self {
                    start,
                    step: step_used,
                    values,
                });
            }
            step /= 2.0;
        }
    }

    /// The curve at t, or `None` outside its nodes.
    #[inline]
    fn at(&self, t: f64) -> Option<f64> {
        let x = (t - self.start) / self.step;
        // Truncation is the floor wherever the answer is kept (x ≥ 1 - 1e-9).
        let j = (x as isize).clamp(1, self.values.len() as isize - 3) as usize;
        let u = x - j as f64;
        if !(-1e-9..=1.0 + 1e-9).contains(&u) {
            return None;
        }
        let [f0, f1, f2, f3] = [
            self.values[j - 1],
            self.values[j],
            self.values[j + 1],
            self.values[j + 2],
        ];
        // Lagrange on nodes −1, 0, 1, 2.
        let (um, u1, u2) = (u + 1.0, u - 1.0, u - 2.0);
        Some(
            -f0 * u * u1 * u2 / 6.0 + f1 * um * u1 * u2 / 2.0 - f2 * um * u * u2 / 2.0
                + f3 * um * u * u1 / 6.0,
        )
    }
}

/// An equally spaced grid of values with their prior log-densities (−∞ allowed).
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub values: Vec<f64>,
    pub log_prior: Vec<f64>,
}

impl Grid {
    fn check(&self, name: &str) -> Result<()> {
        let g = self.values.len();
        let fail = |what: &str| Err(Error::invalid(format!("the {name} grid {what}")));
        if g == 0 || self.log_prior.len() != g {
            return fail("needs one prior log-density per point");
        }
        if !self.values.iter().all(|d| d.is_finite())
            || self
                .log_prior
                .iter()
                .any(|p| p.is_nan() || *p == f64::INFINITY)
            || !self.log_prior.iter().any(|p| p.is_finite())
        {
            return fail("and its prior must be finite (prior -inf allowed)");
        }
        if g > 1 {
            let step = self.step();
            let even = self.values.windows(2).all(|w| {
                let d = w[1] - w[0];
                d > 0.0 && (d - step).abs() <= 1e-9 * step.abs().max(1.0)
            });
            if !even {
                return fail("must be equally spaced and increasing");
            }
        }
        Ok(())
    }

    /// The log-density `log_prior` on this grid convolved with N(0, `sd`²) on the grid
    /// itself: a further independent shift. An sd under half the grid's step leaves it as it
    /// is (each point stands for its step). Up to a constant: its maximum is 0, −∞ where the
    /// spread density underflows.
    pub fn spread_log_prior(&self, log_prior: &[f64], sd: f64) -> Vec<f64> {
        if sd <= 0.5 * self.step() {
            return log_prior.to_vec();
        }
        let top = log_prior.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let own: Vec<f64> = log_prior.iter().map(|p| (p - top).exp()).collect();
        let spread: Vec<f64> = self
            .values
            .iter()
            .map(|&to| {
                self.values
                    .iter()
                    .zip(&own)
                    .map(|(&from, w)| w * (-0.5 * ((to - from) / sd).powi(2)).exp())
                    .sum()
            })
            .collect();
        let most = spread.iter().copied().fold(0.0, f64::max);
        spread.iter().map(|w| (w / most).ln()).collect()
    }

    /// Chunk `chunk`'s row of `per_chunk` (chunks × points, checked by
    /// [`Drift::check_chunks`]), or the grid's own prior when `per_chunk` is empty.
    fn prior_of<'a>(&'a self, per_chunk: &'a [f64], chunk: usize) -> &'a [f64] {
        if per_chunk.is_empty() {
            &self.log_prior
        } else {
            let g = self.values.len();
            &per_chunk[chunk * g..(chunk + 1) * g]
        }
    }

    /// The mean of the grid's values under the log-density `log_prior` (one of its priors).
    fn mean_under(&self, log_prior: &[f64]) -> f64 {
        let top = log_prior.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (mut total, mut sum) = (0.0, 0.0);
        for (v, p) in self.values.iter().zip(log_prior) {
            let w = (p - top).exp();
            total += w;
            sum += w * v;
        }
        sum / total
    }

    /// The spacing (0 for a single point).
    fn step(&self) -> f64 {
        if self.values.len() > 1 {
            self.values[1] - self.values[0]
        } else {
            0.0
        }
    }

    /// Value of point `index`, smoothed uniformly over its step.
    #[inline]
    fn draw(&self, index: usize, s: &mut Sampler) -> f64 {
        if self.values.len() > 1 {
            self.values[index] + (s.uniform() - 0.5) * self.step()
        } else {
            self.values[index]
        }
    }
}

impl Drift {
    /// Check stored parts against a calibration with `k` bins.
    pub fn check(&self, k: usize) -> Result<()> {
        self.shift.check("shift")?;
        self.tilt.check("tilt")?;
        if [self.slope.len(), self.slope_se.len(), self.ref_mean.len()]
            .iter()
            .any(|&n| n != k)
        {
            return Err(Error::invalid(
                "the drift needs one slope, standard error and mean score per bin",
            ));
        }
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let valid = self.bin_sd.is_finite()
            && self.bin_sd >= 0.0
            && (self.bin_extra_var.is_empty() || self.bin_extra_var.len() == k)
            && self
                .bin_extra_var
                .iter()
                .all(|v| v.is_finite() && *v >= 0.0)
            && self.centre.is_finite()
            && finite(&self.slope)
            && finite(&self.ref_mean)
            && self.slope_se.iter().all(|x| x.is_finite() && *x >= 0.0);
        if !valid {
            return Err(Error::invalid(
                "drift parameters must be finite (standard deviations >= 0; one further bin variance \
                 >= 0 per bin, or none)",
            ));
        }
        Ok(())
    }

    /// Check the per-chunk shift priors and bin standard deviations against `n_chunks` chunks.
    pub fn check_chunks(&self, n_chunks: usize) -> Result<()> {
        self.check_chunk_bin_sd(n_chunks)?;
        if let Some(class) = &self.class_shift {
            let k = self.slope.len();
            let valid = class.groups.len() == k
                && class.groups.iter().all(|g| *g < class.n_groups)
                && class.offset.len() == n_chunks * k
                && class.sd.len() == n_chunks * class.n_groups
                && class.offset.iter().all(|v| v.is_finite())
                && class.sd.iter().all(|v| v.is_finite() && *v >= 0.0);
            if !valid {
                return Err(Error::invalid(
                    "the class shift needs a group below n_groups per bin, a finite offset per \
                     chunk and bin, and a finite sd >= 0 per chunk and group",
                ));
            }
            let g = class.n_groups;
            let moves_valid = class.move_sd.is_finite()
                && class.move_sd >= 0.0
                && (class.move_loading.is_empty()
                    || class.move_loading.len() == k * g
                    || class.move_loading.len() == n_chunks * k * g)
                && class.move_loading.iter().all(|v| v.is_finite())
                && (class.move_factor.is_empty() || class.move_factor.len() == n_chunks * g * g)
                && class.move_factor.iter().all(|v| v.is_finite());
            if !moves_valid {
                return Err(Error::invalid(
                    "the class moves need a finite sd >= 0, a finite loading per bin and group \
                     (or none), and a finite factor per chunk and pair of groups (or none)",
                ));
            }
        }
        let valid = |priors: &[f64], g: usize| {
            priors.is_empty() || (priors.len() == n_chunks * g && log_rows_valid(priors, g))
        };
        if !valid(&self.chunk_shift_prior, self.shift.values.len())
            || !valid(&self.chunk_tilt_prior, self.tilt.values.len())
        {
            return Err(Error::invalid(
                "the per-chunk shift and tilt priors need one finite row (-inf allowed) per chunk",
            ));
        }
        Ok(())
    }

    /// Check the per-chunk bin standard deviations against `n_chunks` chunks.
    fn check_chunk_bin_sd(&self, n_chunks: usize) -> Result<()> {
        let valid = |sds: &[f64]| {
            (sds.is_empty() || sds.len() == n_chunks)
                && sds.iter().all(|sd| sd.is_finite() && *sd >= 0.0)
        };
        if valid(&self.chunk_bin_sd) && valid(&self.chunk_centre_sd) {
            Ok(())
        } else {
            Err(Error::invalid(
                "the per-chunk bin and centring standard deviations need one finite value >= 0 \
                 per chunk",
            ))
        }
    }

    /// The standard deviation of each bin's own deviation in chunk `chunk`.
    fn bin_sd_of(&self, chunk: usize) -> f64 {
        self.chunk_bin_sd.get(chunk).copied().unwrap_or(self.bin_sd)
    }

    /// The prior log-density of chunk `chunk`'s shift on the shift grid.
    fn shift_prior(&self, chunk: usize) -> &[f64] {
        self.shift.prior_of(&self.chunk_shift_prior, chunk)
    }

    /// The prior log-density of chunk `chunk`'s tilt on the tilt grid.
    fn tilt_prior(&self, chunk: usize) -> &[f64] {
        self.tilt.prior_of(&self.chunk_tilt_prior, chunk)
    }

    /// A chunk's model: per bin the logit offset and the logit standard deviation of its own
    /// deviation, and the cumulative posterior of (a, b) over the grid (b varying fastest)
    /// given the chunk's labels.
    /// Per bin, how far to move the reference rate's logit so that averaging over a new
    /// period's recalibration (a, b) gives the reference rate back: the reference rate is the
    /// average over its periods, not the median period's. Solved once per estimate at the
    /// reference rates (a chunk's within-bin offset is small beside it).
    pub fn centre_shifts(&self, cal: &Calibration) -> Vec<f64> {
        self.centre_shifts_over(cal, &self.prior_points())
    }

    /// [`Drift::centre_shifts`] for a chunk whose shift spreads further by N(0, `sd`²), as its
    /// draws see it: the shift grid's prior convolved with that normal on the grid itself (how
    /// the chunk's own prior of its shift is spread), the tilt's as it is. An sd under half
    /// the grid's step leaves the prior as it is, as it leaves the chunk's.
    fn spread_centre_shifts(&self, cal: &Calibration, sd: f64) -> Vec<f64> {
        if sd <= 0.5 * self.shift.step() {
            return self.centre_shifts(cal);
        }
        let log_prior = self.shift.spread_log_prior(&self.shift.log_prior, sd);
        self.centre_shifts_over(cal, &self.points_under(&log_prior))
    }

    /// Per bin, the centring of [`Drift::centre_shifts`] over the recalibrations `prior`.
    fn centre_shifts_over(&self, cal: &Calibration, prior: &[(f64, f64, f64)]) -> Vec<f64> {
        (0..cal.n_bins())
            .map(|i| {
                let r = cal.rate_mean(i);
                mean_preserving_logit(r, prior, logit(r) - self.centre) - logit(r)
            })
            .collect()
    }

    /// What the labels of chunk `chunk` need (see [`LabelTerms`]); `centre_shift` comes from
    /// [`Drift::centre_shifts`].
    fn label_terms(
        &self,
        cal: &Calibration,
        stats: &ChunkStats,
        centre_shift: &[f64],
        chunk: usize,
    ) -> LabelTerms {
        let k = cal.n_bins();
        let own;
        let centre_shift = match self.chunk_centre_sd.get(chunk) {
            Some(&sd) if sd > 0.0 => {
                own = self.spread_centre_shifts(cal, sd);
                own.as_slice()
            }
            _ => centre_shift,
        };
        let bin_sd = self.bin_sd_of(chunk);
        let own_var =
            |i: usize| bin_sd * bin_sd + self.bin_extra_var.get(i).copied().unwrap_or(0.0);
        let mut offset = vec![0.0; k];
        let mut sd: Vec<f64> = (0..k).map(|i| own_var(i).sqrt()).collect();
        // The reference rate's own uncertainty (for the labels' likelihood only: the draws
        // carry it through the shared rate draws).
        let mut rate_var = vec![0.0; k];
        let mut centre = vec![0.0; k];
        let (mut label_move, mut label_var) = (vec![0.0; k], vec![0.0; k]);
        for i in 0..k {
            let (p, q) = (cal.pos[i], cal.neg[i]);
            let r = cal.rate_mean(i);
            let v = r * (1.0 - r);
            rate_var[i] = 1.0 / ((p + q + 2.0) * v);
            centre[i] = logit(r);
            if stats.counts[i] > 0.0 {
                let moved = stats.mean_score[i] - self.ref_mean[i];
                let shifted = (r + self.slope[i] * moved).clamp(1e-6, 1.0 - 1e-6);
                offset[i] = logit(shifted) - centre[i];
                let se = self.slope_se[i] * moved / v;
                sd[i] = (own_var(i) + se * se).sqrt();
                // Labels missing depending on the score: the labelled rows' rate where they
                // sit, not the bin's (the highest scores reviewed first put them at its top).
                if stats.labelled_pos[i] + stats.labelled_neg[i] > 0.0 {
                    label_move[i] = stats.label_move[i];
                    label_var[i] = stats.label_move_var[i];
                }
            }
        }
        for (o, shift) in offset.iter_mut().zip(centre_shift) {
            *o += shift;
        }
        if let Some(class) = &self.class_shift {
            for (o, v) in offset
                .iter_mut()
                .zip(&class.offset[chunk * k..(chunk + 1) * k])
            {
                *o += v;
            }
        }
        let labelled: Vec<usize> = (0..k)
            .filter(|&i| stats.labelled_pos[i] + stats.labelled_neg[i] > 0.0)
            .collect();
        let mut terms = LabelTerms {
            offset,
            label_move,
            label_var,
            sd,
            rate_var,
            centre,
            labelled,
            curves: Vec::new(),
        };
        // Every t the grid of (a, b) can ask for, per bin.
        let span = |g: &Grid| {
            let (first, last) = (g.values[0], g.values[g.values.len() - 1]);
            (first.min(last), first.max(last))
        };
        let ((a_low, a_high), (b_low, b_high)) = (span(&self.shift), span(&self.tilt));
        let budget = self.shift.values.len() * self.tilt.values.len();
        terms.curves = terms
            .labelled
            .iter()
            .map(|&i| {
                let spread = terms.centre[i] - self.centre;
                let (x, y) = (b_low * spread, b_high * spread);
                let range = (a_low + x.min(y), a_high + x.max(y));
                LabelCurve::new(&terms, stats, i, range, budget)
            })
            .collect();
        terms
    }

    /// `start` + ln P(the chunk's known labels | shift a, tilt b), up to a constant.
    fn labels_ln(&self, terms: &LabelTerms, stats: &ChunkStats, a: f64, b: f64, start: f64) -> f64 {
        terms
            .labelled
            .iter()
            .zip(&terms.curves)
            .fold(start, |total, (&i, curve)| {
                let t = a + b * (terms.centre[i] - self.centre);
                total
                    + curve
                        .as_ref()
                        .and_then(|c| c.at(t))
                        .unwrap_or_else(|| terms.bin_ln(stats, i, t))
            })
    }

    /// A chunk's model: per bin the logit offset and the logit standard deviation of its own
    /// deviation, and the cumulative posterior of (a, b) over the grid (b varying fastest)
    /// given the chunk's labels. `chunk` is the chunk's index (for its own shift prior);
    /// `centre_shift` comes from [`Drift::centre_shifts`].
    pub fn chunk_model(
        &self,
        cal: &Calibration,
        stats: &ChunkStats,
        centre_shift: &[f64],
        chunk: usize,
    ) -> ChunkModel {
        let terms = self.label_terms(cal, stats, centre_shift, chunk);
        let gb = self.tilt.values.len();
        let mut log_post = Vec::with_capacity(self.shift.values.len() * gb);
        for (&a, &pa) in self.shift.values.iter().zip(self.shift_prior(chunk)) {
            for (&b, &pb) in self.tilt.values.iter().zip(self.tilt_prior(chunk)) {
                let prior = pa + pb;
                log_post.push(if prior > f64::NEG_INFINITY && !terms.labelled.is_empty() {
                    self.labels_ln(&terms, stats, a, b, prior)
                } else {
                    prior
                });
            }
        }
        let top = log_post.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut cdf = Vec::with_capacity(log_post.len());
        let mut total = 0.0;
        for lp in &log_post {
            total += (lp - top).exp();
            cdf.push(total);
        }
        cdf.iter_mut().for_each(|c| *c /= total);
        let class_sd = self.class_shift.as_ref().map_or_else(Vec::new, |class| {
            class.sd[chunk * class.n_groups..(chunk + 1) * class.n_groups].to_vec()
        });
        let move_loading = self.class_shift.as_ref().map_or_else(Vec::new, |class| {
            let size = self.slope.len() * class.n_groups;
            if class.move_loading.len() == size {
                return Vec::new();
            }
            class
                .move_loading
                .get(chunk * size..(chunk + 1) * size)
                .map_or_else(Vec::new, <[f64]>::to_vec)
        });
        let move_factor = self.class_shift.as_ref().map_or_else(Vec::new, |class| {
            let size = class.n_groups * class.n_groups;
            class
                .move_factor
                .get(chunk * size..(chunk + 1) * size)
                .map_or_else(Vec::new, <[f64]>::to_vec)
        });
        ChunkModel {
            offset: terms.offset,
            label_odds: terms.label_move.iter().map(|l| l.exp_m1()).collect(),
            label_move: terms.label_move,
            sd: terms.sd,
            class_sd,
            move_loading,
            move_factor,
            cdf,
        }
    }

    /// ln P(the known labels of chunk `chunk` | the effect) at every point of its grid (0
    /// everywhere for a chunk without labels): what the labels of all chunks say about how
    /// production moves. The shift a with the tilt b averaged over its grid's prior
    /// ([`Drift::chunk_shift_prior`]); the tilt with the shift averaged over the chunk's own
    /// prior of it ([`Drift::chunk_tilt_prior`]).
    pub fn log_likelihood(
        &self,
        cal: &Calibration,
        stats: &ChunkStats,
        centre_shift: &[f64],
        chunk: usize,
        effect: Effect,
    ) -> Vec<f64> {
        let terms = self.label_terms(cal, stats, centre_shift, chunk);
        match effect {
            Effect::Shift => self.effect_log_likelihood(
                &terms,
                stats,
                &self.shift.values,
                |a, b| (a, b),
                &self.tilt.values,
                &self.tilt.log_prior,
            ),
            Effect::Tilt => self.effect_log_likelihood(
                &terms,
                stats,
                &self.tilt.values,
                |b, a| (a, b),
                &self.shift.values,
                self.shift_prior(chunk),
            ),
        }
    }

    /// ln P(labels | one effect at each of `values`), the other effect averaged over
    /// `other_prior` on `other`; `pair` puts (this, other) in (shift, tilt) order.
    fn effect_log_likelihood(
        &self,
        terms: &LabelTerms,
        stats: &ChunkStats,
        values: &[f64],
        pair: impl Fn(f64, f64) -> (f64, f64),
        other: &[f64],
        other_prior: &[f64],
    ) -> Vec<f64> {
        if terms.labelled.is_empty() {
            return vec![0.0; values.len()];
        }
        let top = other_prior
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<(f64, f64)> = other
            .iter()
            .zip(other_prior)
            .filter(|(_, p)| p.is_finite())
            .map(|(&v, &p)| (v, p - top))
            .collect();
        let norm = weights.iter().map(|(_, p)| p.exp()).sum::<f64>().ln();
        values
            .iter()
            .map(|&x| {
                let parts: Vec<f64> = weights
                    .iter()
                    .map(|&(y, p)| {
                        let (a, b) = pair(x, y);
                        self.labels_ln(terms, stats, a, b, p)
                    })
                    .collect();
                let m = parts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                m + parts.iter().map(|t| (t - m).exp()).sum::<f64>().ln() - norm
            })
            .collect()
    }

    /// The prior's (a, b) points with their probabilities, dropping those below 1e-12 of the
    /// total (they cannot move an average).
    fn prior_points(&self) -> Vec<(f64, f64, f64)> {
        self.points_under(&self.shift.log_prior)
    }

    /// [`Drift::prior_points`] with the shift's prior log-density `shift_log_prior` (on its
    /// grid, up to a constant) in place of the grid's own.
    fn points_under(&self, shift_log_prior: &[f64]) -> Vec<(f64, f64, f64)> {
        let weights = |log_prior: &[f64]| -> Vec<f64> {
            let top = log_prior.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let w: Vec<f64> = log_prior.iter().map(|p| (p - top).exp()).collect();
            let total: f64 = w.iter().sum();
            w.into_iter().map(|v| v / total).collect()
        };
        let (wa, wb) = (weights(shift_log_prior), weights(&self.tilt.log_prior));
        let mut points = Vec::new();
        for (a, pa) in self.shift.values.iter().zip(&wa) {
            for (b, pb) in self.tilt.values.iter().zip(&wb) {
                if pa * pb > 1e-12 {
                    points.push((*a, *b, pa * pb));
                }
            }
        }
        points
    }

    /// Posterior mean and standard deviation of the common shift a in a chunk's model.
    pub fn shift_posterior(&self, model: &ChunkModel) -> (f64, f64) {
        let gb = self.tilt.values.len();
        let (mut mean, mut second, mut last) = (0.0, 0.0, 0.0);
        for (ia, &a) in self.shift.values.iter().enumerate() {
            let c = model.cdf[ia * gb + gb - 1];
            let p = c - last;
            last = c;
            mean += p * a;
            second += p * a * a;
        }
        let step = self.shift.step();
        // The draws smooth each grid point over its step: add that uniform's variance.
        (
            mean,
            (second - mean * mean + step * step / 12.0).max(0.0).sqrt(),
        )
    }
}

impl Drift {
    /// One draw of the chunk's positive rates under the drift model: the recalibration (a, b)
    /// from its grid posterior (smoothed within a grid step), then each bin's rate around
    /// logit⁻¹(ℓᵢ + offᵢ + a + b (ℓᵢ − ℓ̄)), updated by the bin's known labels. `rate` holds
    /// the reference rates ℓᵢ = logit(rateᵢ) on entry. With a [`ClassShift`], each group's
    /// shared shift is drawn too, from its own stream `class_s` (so that it leaves every other
    /// draw as it was), into `class_z`, a buffer the caller keeps: one per group, followed by
    /// the groups' moves eⱼ when the shift has any ([`ClassShift::move_sd`]).
    ///
    /// A bin's labelled rows can sit elsewhere in it than its other rows (labels that arrive
    /// depending on the score): by the reference's finer calibration their rate is the bin's
    /// plus gᵢ = logit⁻¹(mᵢ + λᵢ) − logit⁻¹(mᵢ) ([`ChunkModel::label_move`] λᵢ, mᵢ the bin's
    /// logit above), so their counts update the bin's rate as if moved back by gᵢ (a positive
    /// count of n gᵢ fewer), and the rows without labels sit at the bin's rate − gᵢ n_L / n_U
    /// (the bin's mean is its rows' mean). Each bin's gᵢ goes to `gap`.
    fn drift_rates(
        &self,
        model: &ChunkModel,
        stats: &ChunkStats,
        s: &mut Sampler,
        rate: &mut [f64],
        gap: &mut [f64],
        (class_s, class_z): (&mut Sampler, &mut Vec<f64>),
    ) {
        let gb = self.tilt.values.len();
        let u = s.uniform();
        let index = model
            .cdf
            .partition_point(|&c| c < u)
            .min(model.cdf.len() - 1);
        let a = self.shift.draw(index / gb, s);
        let b = self.tilt.draw(index % gb, s);
        class_z.clear();
        // A group that does not move draws nothing: a zero class shift is no class shift.
        class_z.extend(
            model
                .class_sd
                .iter()
                .map(|&sd| if sd > 0.0 { sd * class_s.normal() } else { 0.0 }),
        );
        let moves = match &self.class_shift {
            Some(class) if class.moves() && !class_z.is_empty() => {
                let (g, start) = (class.n_groups, class_z.len());
                if model.move_factor.is_empty() {
                    class_z.extend((0..g).map(|_| class.move_sd * class_s.normal()));
                } else {
                    // e = F z in place: F is lower-triangular, so row i reads z_0..z_i only,
                    // which the rows after it (computed first) have left as they were.
                    class_z.extend((0..g).map(|_| class_s.normal()));
                    for i in (0..g).rev() {
                        let row = &model.move_factor[i * g..=i * g + i];
                        class_z[start + i] = row
                            .iter()
                            .zip(&class_z[start..=start + i])
                            .map(|(f, z)| f * z)
                            .sum();
                    }
                }
                Some((class, start))
            }
            _ => None,
        };
        let groups = self.class_shift.as_ref().map(|class| &class.groups);
        for (i, r) in rate.iter_mut().enumerate() {
            let centre = logit(r.clamp(1e-12, 1.0 - 1e-12));
            let mut class = match groups {
                Some(groups) if !class_z.is_empty() => class_z[groups[i]],
                _ => 0.0,
            };
            if let Some((shift, start)) = moves {
                let g = shift.n_groups;
                let loading = if model.move_loading.is_empty() {
                    &shift.move_loading
                } else {
                    &model.move_loading
                };
                class += loading[i * g..(i + 1) * g]
                    .iter()
                    .zip(&class_z[start..])
                    .map(|(l, e)| l * e)
                    .sum::<f64>();
            }
            let m = expit(centre + model.offset[i] + a + b * (centre - self.centre) + class)
                .clamp(1e-12, 1.0 - 1e-12);
            let sd = model.sd[i];
            let (pos, neg) = (stats.labelled_pos[i], stats.labelled_neg[i]);
            let q = model.label_odds[i];
            let g = if q == 0.0 {
                0.0
            } else {
                m * (1.0 - m) * q / (1.0 + m * q)
            };
            gap[i] = g;
            *r = if sd > 0.0 {
                let kappa = concentration(m, sd * sd);
                // The labels as if their rows sat at the bin's mean score.
                let moved = ((pos + neg) * g).clamp(-neg, pos);
                let (alpha, beta) = (kappa * m + pos - moved, kappa * (1.0 - m) + neg + moved);
                Beta::new(alpha, beta).map_or(m, |d| s.beta(&d))
            } else {
                m
            };
        }
    }

    /// How much the drift's spread alone raises a chunk's ROC AUC (Jensen's gap): the mean
    /// binned AUC of the chunk's bin counts over the drifted rates of the chunk's model, minus
    /// the binned AUC at those rates' means (likewise for average precision, `ranking`). The drift moves each bin's rate either way, but
    /// the AUC is not linear in the rates: rates spread apart raise it more than rates pulled
    /// together lower it, so averaged over a drift the AUC sits above the AUC of the average
    /// rates. On the real flights reference (one-vs-rest, in-sample) that put the estimate
    /// 0.005 above the realized values, and in simulated calibration drift it cost AUC
    /// coverage. Where the model moves the rates (known labels, a within-bin shift) the
    /// means move and the AUC with them; only the gap is removed. `concordance`: each bin's
    /// within-bin concordance; `draws` Monte Carlo draws from the stream `seed`.
    #[allow(clippy::too_many_arguments)]
    pub fn ranking_offset(
        &self,
        cal: &Calibration,
        model: &ChunkModel,
        stats: &ChunkStats,
        concordance: &[f64],
        ranking: (Ranking, Option<ChunkSlices>),
        draws: usize,
        seed: u64,
    ) -> f64 {
        let k = cal.n_bins();
        let reference: Vec<f64> = (0..k).map(|i| cal.rate_mean(i)).collect();
        let mut s = Sampler::new(stream(seed, 0));
        let (mut pm, mut nm) = (vec![0.0; k], vec![0.0; k]);
        let mut buffer = SliceBuffer::default();
        let mut auc = |rates: &[f64], s: &mut Sampler| {
            for i in 0..k {
                pm[i] = stats.counts[i] * rates[i];
                nm[i] = stats.counts[i] - pm[i];
            }
            let (metric, slices) = ranking;
            metric.eval(&pm, &nm, concordance, None, s, slices, None, &mut buffer)
        };
        let (mut rates, mut mean, mut gap) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        let (mut class_s, mut class_z) = (Sampler::new(stream(seed, 1)), Vec::new());
        let mut sum = 0.0;
        for _ in 0..draws {
            rates.copy_from_slice(&reference);
            self.drift_rates(
                model,
                stats,
                &mut s,
                &mut rates,
                &mut gap,
                (&mut class_s, &mut class_z),
            );
            for (m, r) in mean.iter_mut().zip(&rates) {
                *m += r / draws as f64;
            }
            sum += auc(&rates, &mut s);
        }
        sum / draws as f64 - auc(&mean, &mut s)
    }
}

/// Per chunk, the posterior mean and standard deviation of its common shift a given its known
/// labels (chunks in parallel).
pub fn drift_shift_posteriors(
    cal: &Calibration,
    drift: &Drift,
    chunks: &[ChunkStats],
) -> Result<Vec<(f64, f64)>> {
    drift.check(cal.n_bins())?;
    drift.check_chunks(chunks.len())?;
    let centre_shift = drift.centre_shifts(cal);
    parallel::map(chunks.len(), |c| {
        Ok(drift.shift_posterior(&drift.chunk_model(cal, &chunks[c], &centre_shift, c)))
    })
}

/// Per chunk and bin, the logit of the positive rate the draws expect of its labelled rows:
/// the reference rate ℓᵢ moved by the bin's within-bin shift, to where the labelled rows sit
/// in it by the reference's finer calibration ([`ChunkModel::label_move`]), and by the bins'
/// mean-preserving centring ([`Drift::centre_shifts`]), plus the chunk's common shift a at
/// the posterior mean given its labels and its tilt b at the prior mean (what the other
/// chunks' labels say): ℓᵢ + offᵢ + E[a] + E[b] (ℓᵢ − ℓ̄). What production's labels are
/// compared with to learn each bin's lasting offset (chunks in parallel).
pub fn drift_expected_logits(
    cal: &Calibration,
    drift: &Drift,
    chunks: &[ChunkStats],
) -> Result<Vec<Vec<f64>>> {
    drift.check(cal.n_bins())?;
    drift.check_chunks(chunks.len())?;
    let centre_shift = drift.centre_shifts(cal);
    parallel::map(chunks.len(), |c| {
        let model = drift.chunk_model(cal, &chunks[c], &centre_shift, c);
        let (a, _) = drift.shift_posterior(&model);
        let b = drift.tilt.mean_under(drift.tilt_prior(c));
        Ok((0..cal.n_bins())
            .map(|i| {
                let ell = logit(cal.rate_mean(i));
                ell + model.offset[i] + model.label_move[i] + a + b * (ell - drift.centre)
            })
            .collect())
    })
}

/// Whether every row of `rows` (rows of `g` log-densities, row-major) is a usable prior:
/// finite somewhere, −∞ allowed, no NaN or +∞.
fn log_rows_valid(rows: &[f64], g: usize) -> bool {
    rows.chunks(g).all(|row| {
        row.iter().all(|p| !p.is_nan() && *p != f64::INFINITY) && row.iter().any(|p| p.is_finite())
    })
}

/// Each row of `log_priors` (rows × points, row-major: prior log-densities on the uniform grid
/// `values`, −∞ allowed) spread further by N(0, `sds[row]`²): [`Grid::spread_log_prior`], the
/// one convolution the estimator's per-chunk priors and the core's centring of a chunk whose
/// scores moved both use (rows in parallel).
pub fn spread_log_priors(values: &[f64], log_priors: &[f64], sds: &[f64]) -> Result<Vec<f64>> {
    let g = values.len();
    let grid = Grid {
        values: values.to_vec(),
        log_prior: vec![0.0; g],
    };
    grid.check("spread")?;
    if log_priors.len() != sds.len() * g {
        return Err(Error::invalid(format!(
            "log_priors needs one row of {g} grid points per sd ({} sds, {} values)",
            sds.len(),
            log_priors.len()
        )));
    }
    if !sds.iter().all(|sd| sd.is_finite() && *sd >= 0.0) {
        return Err(Error::invalid("sds must be finite and >= 0"));
    }
    if !log_rows_valid(log_priors, g) {
        return Err(Error::invalid(
            "each row of log_priors must be finite somewhere (-inf allowed, no NaN or +inf)",
        ));
    }
    let rows = parallel::map(sds.len(), |r| {
        Ok(grid.spread_log_prior(&log_priors[r * g..(r + 1) * g], sds[r]))
    })?;
    Ok(rows.concat())
}

/// A recalibration effect: the common shift a or the tilt b.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Shift,
    Tilt,
}

/// Per chunk, [`Drift::log_likelihood`] of `effect` (chunks in parallel).
pub fn drift_likelihoods(
    cal: &Calibration,
    drift: &Drift,
    chunks: &[ChunkStats],
    effect: Effect,
) -> Result<Vec<Vec<f64>>> {
    drift.check(cal.n_bins())?;
    match effect {
        // Before the shifts' per-chunk priors exist.
        Effect::Shift => drift.check_chunk_bin_sd(chunks.len())?,
        Effect::Tilt => drift.check_chunks(chunks.len())?,
    }
    let centre_shift = drift.centre_shifts(cal);
    parallel::map(chunks.len(), |c| {
        Ok(drift.log_likelihood(cal, &chunks[c], &centre_shift, c, effect))
    })
}

/// What [`Drift::chunk_model`] works out for one chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkModel {
    pub offset: Vec<f64>,
    /// Per bin, how much further (logit) its labelled rows' rate sits than the bin's
    /// ([`ChunkStats::label_move`]); 0 without labels.
    pub label_move: Vec<f64>,
    /// Per bin, e^λ − 1 of `label_move` λ: the draws' gap between the labelled rows' rate and
    /// the bin's, m (1 − m) (e^λ − 1) / (1 + m (e^λ − 1)), without a logarithm and an
    /// exponential per draw (with them, 5% of rows labelled at random cost a fifth more).
    label_odds: Vec<f64>,
    pub sd: Vec<f64>,
    /// Per group, the sd of its shared shift (empty: none; see [`ClassShift`]).
    pub class_sd: Vec<f64>,
    /// The chunk's own loading of its bins on the groups' moves (bins × groups; empty:
    /// [`ClassShift::move_loading`], shared by every chunk).
    pub move_loading: Vec<f64>,
    /// The chunk's factor of its groups' moves (groups × groups, lower-triangular; empty:
    /// [`ClassShift::move_sd`]).
    pub move_factor: Vec<f64>,
    /// Cumulative posterior probabilities of the drift grid points.
    pub cdf: Vec<f64>,
}

/// The logit m whose rate, averaged over the recalibrations `points` (a, b, probability) at
/// distance `spread` from the centre, is `target`: Σ w expit(m + a + b spread) = target. The
/// average is increasing in m, so Newton steps kept inside a shrinking bracket converge.
fn mean_preserving_logit(target: f64, points: &[(f64, f64, f64)], spread: f64) -> f64 {
    // expit(m + c) = 1 / (1 + e^-m e^-c): with each point's e^-c and weight taken once, a
    // Newton step costs a division per point instead of an exponential (the centring of a
    // chunk whose scores moved runs over ten thousand points or more, and was a seventh of an
    // estimate with labels). e^-c may be +inf (a point far below): expit 0, as it should be.
    let terms: Vec<(f64, f64)> = points
        .iter()
        .map(|&(a, b, w)| ((-(a + b * spread)).exp(), w))
        .collect();
    let start = logit(target.clamp(1e-12, 1.0 - 1e-12));
    let (mut low, mut high) = (start - 40.0, start + 40.0);
    let mut m = start;
    for _ in 0..100 {
        let t = (-m).exp();
        let (mut value, mut slope) = (-target, 0.0);
        for &(ec, w) in &terms {
            let e = 1.0 / (1.0 + t * ec);
            value += w * e;
            slope += w * e * (1.0 - e);
        }
        if value > 0.0 {
            high = m;
        } else {
            low = m;
        }
        if value.abs() <= (1e-13 * target.min(1.0 - target)).max(1e-16) || high - low < 1e-13 {
            break;
        }
        let next = m - value / slope;
        m = if slope > 0.0 && next > low && next < high {
            next
        } else {
            0.5 * (low + high)
        };
    }
    m
}

#[inline]
fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

#[inline]
fn expit(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The concentration κ of the Beta with mean m whose variance matches a logit-normal with
/// logit variance `var` (delta method: Var θ ≈ var m² (1 − m)²), or infinity when var = 0.
#[inline]
fn concentration(m: f64, var: f64) -> f64 {
    if var <= 0.0 {
        return f64::INFINITY;
    }
    (1.0 / (var * m * (1.0 - m)) - 1.0).max(CONCENTRATION_FLOOR)
}

/// The least concentration [`concentration`] gives (a rate spread over (0, 1) no further).
const CONCENTRATION_FLOOR: f64 = 0.05;

/// ln expit(x) without overflow, and finite wherever x is (expit itself rounds to 0 or 1 far
/// out, and 0 · ln 0 would be NaN).
#[inline]
fn ln_expit(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

/// ln P(x positives, y negatives | rate ~ Beta with mean m = expit(`logit_m`), logit variance
/// var), up to a constant in m: beta-binomial, or binomial when the rate is (nearly) fixed —
/// in particular when m rounds to 0 or 1, where the binomial's log terms stay finite.
fn beta_binomial_ln(x: f64, y: f64, logit_m: f64, var: f64) -> f64 {
    let m = expit(logit_m);
    let kappa = concentration(m, var);
    if kappa > 1e8 {
        return x * ln_expit(logit_m) + y * ln_expit(-logit_m);
    }
    let (a, b) = (kappa * m, kappa * (1.0 - m));
    ln_beta(a + x, b + y) - ln_beta(a, b)
}

/// What the estimator needs from one chunk of experiment scores.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkStats {
    pub counts: Vec<f64>,
    /// Mean score per bin (the bin's midpoint when it is empty).
    pub mean_score: Vec<f64>,
    /// Within-bin concordance implied by the scores themselves, were they calibrated.
    pub perfect_concordance: Vec<f64>,
    /// Rows of the chunk whose labels are known already, per bin: positives and negatives.
    pub labelled_pos: Vec<f64>,
    pub labelled_neg: Vec<f64>,
    /// Per bin, how much higher (logit) the reference's rate is where the labelled rows sit
    /// inside the bin than where all its rows sit ([`FineCalibration`]; 0 without one, or
    /// without labels): labels that arrive depending on the score (the highest scores
    /// reviewed first) come from one end of a bin, not from all of it.
    pub label_move: Vec<f64>,
    /// Per bin, the variance of `label_move` from the finer calibration's own noise (its
    /// sub-bins hold few reference rows each, fewest where the rates are extreme): what its
    /// pooled blocks' errors leave of the labelled rows' mean rate against all the bin's
    /// rows' (nothing where they share the blocks in proportion: labelled at random, or all).
    pub label_move_var: Vec<f64>,
    /// Per bin, the Gini mean difference of the chunk's scores
    /// ([`Calibration::chunk_concordance`]) and the share of the within-bin Mann–Whitney
    /// variance their ties leave (1 without ties; 0 when every row shares one score).
    pub spread: Vec<f64>,
    pub tie_factor: Vec<f64>,
}

/// Rows of a chunk whose scores give its bins' spread and ties ([`ChunkStats::spread`]): a
/// longer chunk gives them from every stride-th row (in row order), so that sorting costs at
/// most this many rows per chunk. Every row of a 5,000-row chunk counts; a chunk of 10⁷ rows
/// took 0.49 s instead of 0.13 s when all of them were sorted, and a sample of 16,384 rows
/// puts a tenth of them in a bin of a tenth of the rows: G within about 2.5%, which moves a
/// concordance of 0.55 by about 0.001.
const SPREAD_ROWS: usize = 1 << 14;

/// Assign the scores of each chunk (`starts` are chunk start offsets, ascending, the first 0)
/// to the calibration's bins in one pass; chunks in parallel. Each bin's scores (of a long
/// chunk, a sample: `SPREAD_ROWS`) are then sorted for their spread and ties; the calibrated
/// within-bin concordance (perfect calibration only, from every row) is computed only when
/// `concordance` asks for it (else ½). `labels`,
/// aligned with the scores, are the labels known already: 1, 0, or NaN for a row still
/// without one.
pub fn chunk_stats(
    cal: &Calibration,
    scores: &[f64],
    starts: &[usize],
    concordance: bool,
    labels: Option<&[f64]>,
) -> Result<Vec<ChunkStats>> {
    chunk_stats_placed(cal, scores, starts, concordance, labels, None)
}

/// [`chunk_stats`], with each bin's labelled rows placed inside it by the reference's finer
/// calibration `fine` ([`ChunkStats::label_move`]).
pub fn chunk_stats_placed(
    cal: &Calibration,
    scores: &[f64],
    starts: &[usize],
    concordance: bool,
    labels: Option<&[f64]>,
    fine: Option<&FineCalibration>,
) -> Result<Vec<ChunkStats>> {
    check_scores("scores", scores)?;
    if let Some(labels) = labels {
        if labels.len() != scores.len() {
            return Err(Error::invalid(
                "labels and scores must have the same length",
            ));
        }
        if let Some(i) = labels
            .iter()
            .position(|&y| !(y.is_nan() || y == 0.0 || y == 1.0))
        {
            return Err(Error::invalid(format!(
                "known labels must be 0, 1 or NaN (missing), found {} at index {i}",
                labels[i]
            )));
        }
    }
    if starts.first() != Some(&0)
        || starts.windows(2).any(|w| w[0] > w[1])
        || starts.last().is_some_and(|&s| s > scores.len())
    {
        return Err(Error::invalid(
            "chunk starts must begin at 0, ascend and stay within the data",
        ));
    }
    let k = cal.n_bins();
    parallel::map(starts.len(), |c| {
        let end = starts.get(c + 1).copied().unwrap_or(scores.len());
        let rows = &scores[starts[c]..end];
        let mut counts = vec![0.0; k];
        let mut sums = vec![0.0; k];
        let mut by_bin: Vec<Vec<f64>> = vec![Vec::new(); k];
        // The calibrated concordance counts every row; the spread and ties of a long chunk
        // come from every stride-th row (see SPREAD_ROWS).
        let stride = if concordance {
            1
        } else {
            rows.len().div_ceil(SPREAD_ROWS).max(1)
        };
        let (mut labelled_pos, mut labelled_neg) = (vec![0.0; k], vec![0.0; k]);
        // Per bin and pooled block of the finer calibration, all rows and the labelled ones.
        let blocks = fine.map_or(0, FineCalibration::n_blocks);
        let (mut fine_all, mut fine_labelled) = (vec![0.0; k * blocks], vec![0.0; k * blocks]);
        for (r, &s) in rows.iter().enumerate() {
            let b = cal.bin_of(s);
            counts[b] += 1.0;
            sums[b] += s;
            if r % stride == 0 {
                by_bin[b].push(s);
            }
            if let Some(labels) = labels {
                let y = labels[starts[c] + r];
                if y == 1.0 {
                    labelled_pos[b] += 1.0;
                } else if y == 0.0 {
                    labelled_neg[b] += 1.0;
                }
                if let Some(fine) = fine {
                    let j = b * blocks + fine.block_of(s);
                    fine_all[j] += 1.0;
                    if !y.is_nan() {
                        fine_labelled[j] += 1.0;
                    }
                }
            }
        }
        let mean_score = (0..k)
            .map(|i| {
                if counts[i] > 0.0 {
                    sums[i] / counts[i]
                } else {
                    let (low, high) = cal.bounds(i);
                    0.5 * (low + high)
                }
            })
            .collect();
        let (mut label_move, mut label_move_var) = (vec![0.0; k], vec![0.0; k]);
        for i in 0..k {
            let known = labelled_pos[i] + labelled_neg[i];
            let Some(fine) = fine.filter(|_| known > 0.0) else {
                continue;
            };
            let (mut labelled_rate, mut all_rate, mut var) = (0.0, 0.0, 0.0);
            for j in 0..blocks {
                let share = fine_labelled[i * blocks + j] / known;
                let all = fine_all[i * blocks + j] / counts[i];
                labelled_rate += share * fine.block_rate[j];
                all_rate += all * fine.block_rate[j];
                var += (share - all).powi(2) * fine.block_se[j].powi(2);
            }
            label_move[i] = logit(labelled_rate) - logit(all_rate);
            // The delta method: the rates' difference's variance over the logit's slope².
            label_move_var[i] = var / (labelled_rate * (1.0 - labelled_rate)).powi(2);
        }
        let (mut spread, mut tie_factor) = (vec![0.0; k], vec![1.0; k]);
        for (b, values) in by_bin.iter_mut().enumerate() {
            values.sort_by(f64::total_cmp);
            let mut sum = SpreadSum::default();
            for run in values.chunk_by(|a, b| a == b) {
                sum.add(run[0], run.len() as f64);
            }
            (spread[b], tie_factor[b]) = (sum.gini(), sum.tie_factor());
        }
        let perfect_concordance = if concordance {
            by_bin
                .iter_mut()
                .map(|values| calibrated_concordance(values))
                .collect()
        } else {
            vec![0.5; k]
        };
        Ok(ChunkStats {
            counts,
            mean_score,
            perfect_concordance,
            labelled_pos,
            labelled_neg,
            label_move,
            label_move_var,
            spread,
            tie_factor,
        })
    })
}

/// The reference's positive rate on a finer grid of scores than its bins: sub-bins of its
/// scores, sub-bin j holding those above `upper[j - 1]` up to `upper[j]` (the last also any
/// higher score), each with the rate (P + ½) / (N + 1) of the pooled adjacent sub-bins
/// that a monotone (non-decreasing) fit merges it with. The fit can restart at given
/// sub-bins: a multiclass model's confidence pseudo-scores run through each predicted class in
/// turn, and the rate of right predictions climbs within a class but falls back at the next.
/// Where a bin's labelled rows sit inside it (the top of the top bin, say) their rate is not
/// the bin's: a stable simulated stream with its highest 5% of scores labelled had its
/// accuracy estimated 0.036 low when their labels were taken as the bin's.
#[derive(Clone, Debug, PartialEq)]
pub struct FineCalibration {
    upper: Vec<f64>,
    /// Each sub-bin's pooled block, and each block's rate and its standard error.
    block: Vec<usize>,
    block_rate: Vec<f64>,
    block_se: Vec<f64>,
}

impl FineCalibration {
    /// The finer calibration of sub-bins with upper scores `upper` (finite, increasing) and
    /// `pos` positives and `neg` negatives (finite, >= 0) each, monotone from each sub-bin in
    /// `restarts` (increasing, within the sub-bins) on; a restart at 0 changes nothing.
    pub fn new(upper: &[f64], pos: &[f64], neg: &[f64], restarts: &[usize]) -> Result<Self> {
        if upper.is_empty()
            || pos.len() != upper.len()
            || neg.len() != upper.len()
            || upper.iter().any(|u| !u.is_finite())
            || upper.windows(2).any(|w| w[0] >= w[1])
            || pos.iter().chain(neg).any(|c| !(c.is_finite() && *c >= 0.0))
        {
            return Err(Error::invalid(
                "a finer calibration needs increasing finite scores with finite counts >= 0, \
                 one positive and one negative count per score",
            ));
        }
        if restarts.windows(2).any(|w| w[0] >= w[1])
            || restarts.last().is_some_and(|&r| r >= upper.len())
        {
            return Err(Error::invalid(format!(
                "a finer calibration's restarts must increase and stay below its {} sub-bins, \
                 got {restarts:?}",
                upper.len()
            )));
        }
        // Pool adjacent violators on the rates P / N weighted by N (blocks of positives, rows
        // and sub-bins; a block without rows joins its neighbour), then each block's rate
        // smoothed: (P + ½) / (N + 1). Blocks before the latest restart stay as they are.
        let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
        let mut kept = 0;
        for (j, (&p, &q)) in pos.iter().zip(neg).enumerate() {
            if restarts.binary_search(&j).is_ok() {
                kept = blocks.len();
            }
            blocks.push((p, p + q, 1));
            while blocks.len() > kept + 1 {
                let last = blocks[blocks.len() - 1];
                let before = blocks[blocks.len() - 2];
                // before.0 / before.1 < last.0 / last.1, without dividing by zero rows: blocks
                // of equal rates pool too, so that each block is as long as it can be.
                if before.1 > 0.0 && last.1 > 0.0 && before.0 * last.1 < last.0 * before.1 {
                    break;
                }
                blocks.pop();
                let merged = blocks.last_mut().expect("two blocks");
                *merged = (before.0 + last.0, before.1 + last.1, before.2 + last.2);
            }
        }
        let rate = |(p, n, _): (f64, f64, usize)| (p + 0.5) / (n + 1.0);
        let block_rate: Vec<f64> = blocks.iter().map(|&b| rate(b)).collect();
        Ok(Self {
            upper: upper.to_vec(),
            block: (0..blocks.len())
                .flat_map(|b| std::iter::repeat_n(b, blocks[b].2))
                .collect(),
            block_se: block_rate
                .iter()
                .zip(&blocks)
                .map(|(r, b)| (r * (1.0 - r) / (b.1 + 1.0)).sqrt())
                .collect(),
            block_rate,
        })
    }

    fn n_blocks(&self) -> usize {
        self.block_rate.len()
    }

    /// The pooled block of the sub-bin holding `score`.
    fn block_of(&self, score: f64) -> usize {
        let j = self.upper.partition_point(|&u| u < score);
        self.block[j.min(self.block.len() - 1)]
    }
}

/// Concordance within a bin if each score were its row's probability of being positive: a row
/// is a positive with weight s and a negative with weight 1 − s.
fn calibrated_concordance(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let (mut pos, mut neg, mut wins) = (0.0, 0.0, 0.0);
    let mut i = 0;
    while i < values.len() {
        let mut j = i;
        while j < values.len() && values[j] == values[i] {
            j += 1;
        }
        let m = (j - i) as f64;
        let (p, q) = (m * values[i], m * (1.0 - values[i]));
        wins += p * (neg + 0.5 * q);
        pos += p;
        neg += q;
        i = j;
    }
    if pos > 0.0 && neg > 0.0 {
        wins / (pos * neg)
    } else {
        0.5
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The metric of the population the experiment data came from.
    Population,
    /// The metric these rows will show once their labels arrive (posterior predictive).
    Realized,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Positive rates from the reference labels, with their uncertainty.
    Reference,
    /// Trust the scores: a bin's positive rate is its mean experiment score.
    Perfect,
}

/// Settings of one estimation call.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub target: Target,
    pub mode: Mode,
    /// Credit within-bin pairs with the bin's concordance (the refinement) instead of ½.
    pub within_bin: bool,
    pub want_auc: bool,
    pub want_ap: bool,
    pub zero_division: f64,
}

impl Settings {
    /// The ranking metrics asked for, in their output order (after the binary metrics).
    fn rankings(&self) -> Vec<Ranking> {
        let wanted = [
            (self.want_auc, Ranking::RocAuc),
            (self.want_ap, Ranking::AveragePrecision),
        ];
        wanted.iter().filter(|w| w.0).map(|w| w.1).collect()
    }
}

/// A metric of the scores' order, computed from the bins' masses in score order and their
/// within-bin concordances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranking {
    RocAuc,
    AveragePrecision,
}

impl Ranking {
    /// Which of [`Sink::emit`]'s samplers draws this metric's within-bin noise: one each, so
    /// that asking for one ranking metric leaves the other's draws as they were.
    fn noise_stream(self) -> usize {
        match self {
            Ranking::RocAuc => 0,
            Ranking::AveragePrecision => 1,
        }
    }

    /// The metric of positive masses `pm` and negative masses `nm` over bins in ascending
    /// score order; with `noise` (realized counts: the bins' tie factors) plus its within-bin
    /// sampling noise. Average precision follows the chunk's own scores inside each bin where
    /// `slices` has them, the bins' masses drawn at `rate` (None: their own ratio).
    #[allow(clippy::too_many_arguments)]
    fn eval(
        self,
        pm: &[f64],
        nm: &[f64],
        c: &[f64],
        noise: Option<&[f64]>,
        s: &mut Sampler,
        slices: Option<ChunkSlices>,
        rate: Option<&[f64]>,
        buffer: &mut SliceBuffer,
    ) -> f64 {
        match (self, slices) {
            (Ranking::RocAuc, _) => binned_auc(pm, nm, c, noise, s),
            (Ranking::AveragePrecision, None) => binned_ap(pm, nm, c, noise.is_some(), s),
            (Ranking::AveragePrecision, Some(slices)) => {
                // The slices of a bin share out its positives (drawn per bin): their noise
                // is the bin's, taken over all its slices.
                slices.split(pm, nm, c, rate, buffer);
                let (pos, neg, c) = (&buffer.pos, &buffer.neg, &buffer.c);
                let tied = Some(&buffer.tied[..]);
                let (sd, own) = match (noise.is_some(), buffer.noise) {
                    (false, _) => (0.0, 0.0),
                    (true, Some(kept)) => kept,
                    (true, None) => {
                        let sd = ap_noise_sd(pos, neg, c, Some(&buffer.group), tied);
                        let kept = (sd, ap_own_label_term(pos, neg, tied));
                        buffer.noise = Some(kept);
                        kept
                    }
                };
                with_noise(ap_mean(pos, neg, c, tied) + own, sd, s)
            }
        }
    }
}

/// The chunks' own scores inside each bin, for average precision, which depends on how the
/// positives spread inside the top bins far more than ROC AUC does: a bin's positive rate
/// taken as linear in the score, p(s) = r + β (s − s̄), the chunk's concordance fixing β
/// (c = ½ + β G / (4 r (1 − r)) with G the Gini mean difference E|s − s′| of the chunk's
/// scores in the bin, [`ChunkStats::spread`]; a calibrated score has β = 1), and the chunk's
/// rows in the bin cut into `per_bin` equal-count slices in score order, each with the share
/// of the bin's rows, their mean score and their span (max − min). Under a covariate shift
/// inside a bin the slices follow the chunk's scores. Per chunk, bin and slice, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreSlices {
    pub per_bin: usize,
    pub share: Vec<f64>,
    pub mean: Vec<f64>,
    pub span: Vec<f64>,
}

impl ScoreSlices {
    fn check(&self, k: usize, n_chunks: usize) -> Result<()> {
        let size = n_chunks * k * self.per_bin;
        let sizes_fit = self.per_bin > 0
            && [self.share.len(), self.mean.len(), self.span.len()]
                .iter()
                .all(|&n| n == size);
        let in_range = |v: &[f64]| v.iter().all(|x| x.is_finite() && *x >= 0.0);
        if !sizes_fit || !in_range(&self.share) || !in_range(&self.span) {
            return Err(Error::invalid(
                "score slices need per chunk, bin and slice a share, mean and span >= 0",
            ));
        }
        if !self.mean.iter().all(|x| (0.0..=1.0).contains(x)) {
            return Err(Error::invalid(
                "score slices' mean scores must lie in [0, 1]",
            ));
        }
        Ok(())
    }

    /// Chunk `chunk`'s slices, with the spread of its scores in each bin.
    fn chunk<'a>(&'a self, chunk: usize, k: usize, spread: &'a [f64]) -> ChunkSlices<'a> {
        let range = chunk * k * self.per_bin..(chunk + 1) * k * self.per_bin;
        ChunkSlices {
            per_bin: self.per_bin,
            share: &self.share[range.clone()],
            mean: &self.mean[range.clone()],
            span: &self.span[range],
            spread,
        }
    }
}

/// One chunk's part of [`ScoreSlices`], with its scores' spread per bin.
#[derive(Clone, Copy)]
pub struct ChunkSlices<'a> {
    per_bin: usize,
    share: &'a [f64],
    mean: &'a [f64],
    span: &'a [f64],
    spread: &'a [f64],
}

/// The slices' masses and concordances of one draw (reused from draw to draw).
#[derive(Default)]
pub struct SliceBuffer {
    pos: Vec<f64>,
    neg: Vec<f64>,
    c: Vec<f64>,
    /// The bin each slice belongs to, and whether its rows share one score.
    group: Vec<usize>,
    tied: Vec<bool>,
    /// One bin's slices' rates, and the realized masses with a bin count's spread as the
    /// slices' rates give it.
    rates: Vec<f64>,
    pos_bins: Vec<f64>,
    neg_bins: Vec<f64>,
    /// The sd of average precision's within-bin noise and [`ap_own_label_term`], kept for the
    /// next draws (None: work them out at this draw; see [`AP_NOISE_EVERY`]).
    noise: Option<(f64, f64)>,
}

/// Average precision's within-bin noise (realized target) has its sd worked out at every
/// `AP_NOISE_EVERY`-th draw of a block and reused for the draws after it. The sd depends on the
/// draw only through the bins' masses, which move it by a few percent, so a draw's sd is as
/// likely as its own (the mixture's variance is the same in expectation: over 40,000 draws of
/// 60 chunks the sds are within 0.05% of every draw's own, over 1,000 draws of a K = 10 macro
/// average precision within 0.3%); working it out for every draw was half of
/// average precision's cost. [`ap_own_label_term`], a mean that moves as little, goes with it.
const AP_NOISE_EVERY: usize = 8;

impl ChunkSlices<'_> {
    /// Bin `b`'s slices' positive rates q_g = r + β (s̄_g − s̄) at bin rate `rate` and
    /// concordance `c` (clipped to [0, 1]), into `out`; and β. None when the chunk has no rows
    /// in the bin.
    fn slice_rates(&self, b: usize, rate: f64, c: f64, out: &mut Vec<f64>) -> Option<f64> {
        let slots = b * self.per_bin..(b + 1) * self.per_bin;
        let (share, mean) = (&self.share[slots.clone()], &self.mean[slots]);
        let total: f64 = share.iter().sum();
        if total <= 0.0 {
            return None;
        }
        let beta = if self.spread[b] > 0.0 {
            4.0 * rate * (1.0 - rate) * (c - 0.5) / self.spread[b]
        } else {
            0.0
        };
        let centre: f64 = share.iter().zip(mean).map(|(a, m)| a * m).sum::<f64>() / total;
        out.clear();
        out.extend(
            mean.iter()
                .map(|m| (rate + beta * (m - centre)).clamp(0.0, 1.0)),
        );
        Some(beta)
    }

    /// How much less bin `b`'s count of positives varies than one binomial at its rate, as a
    /// ratio of sds: sqrt(Σ n_g q_g (1 − q_g) / (n r (1 − r))) (rows whose rates differ vary
    /// less than rows all at their mean rate); 1 without rows or spread.
    fn count_sd_ratio(&self, b: usize, rate: f64, c: f64, rates: &mut Vec<f64>) -> f64 {
        let whole = rate * (1.0 - rate);
        if whole <= 0.0 || self.slice_rates(b, rate, c, rates).is_none() {
            return 1.0;
        }
        let share = &self.share[b * self.per_bin..(b + 1) * self.per_bin];
        let total: f64 = share.iter().sum();
        let parts: f64 = share
            .iter()
            .zip(rates.iter())
            .map(|(a, q)| a * q * (1.0 - q))
            .sum();
        (parts / total / whole).clamp(0.0, 1.0).sqrt()
    }

    /// Realized masses whose bin counts of positives spread as the slices' rates say: each
    /// bin's drawn count of unlabelled positives moved towards its expectation by
    /// [`Self::count_sd_ratio`] (the same draw, so that average precision moves with the
    /// other metrics; the labelled rows stay as they are).
    fn narrow_counts(
        &self,
        stats: &ChunkStats,
        masses: &Masses,
        rates: &mut Vec<f64>,
        pos: &mut Vec<f64>,
        neg: &mut Vec<f64>,
    ) {
        pos.clear();
        neg.clear();
        for b in 0..masses.pos.len() {
            let (x, total) = (masses.pos[b], masses.pos[b] + masses.neg[b]);
            let known = stats.labelled_pos[b] + stats.labelled_neg[b];
            let rate = masses.rate[b];
            let expected = stats.labelled_pos[b] + (stats.counts[b] - known) * rate;
            let ratio = self.count_sd_ratio(b, rate, masses.concordance[b], rates);
            let narrowed = (expected + ratio * (x - expected)).clamp(0.0, total);
            pos.push(narrowed);
            neg.push(total - narrowed);
        }
    }

    /// Split each bin's masses over its slices, ascending. At the bin's rate r (`rate`, the
    /// rate its masses were drawn at; else their own ratio) slice g expects the positives
    /// m a_g q_g of its rows' share a_g, with q_g = r + β (s̄_g − s̄) (clipped to [0, 1]); the
    /// masses' departure D from that expectation (realized labels) is shared out as
    /// independent rows' labels would be given their sum, in proportion to a_g q_g (1 − q_g).
    /// Inside a slice the rate falls by β × its span from top to bottom (as a concordance for
    /// [`binned_ap`]). A bin without rows in the chunk stays whole, with its own concordance.
    fn split(
        &self,
        pm: &[f64],
        nm: &[f64],
        c: &[f64],
        rate: Option<&[f64]>,
        out: &mut SliceBuffer,
    ) {
        let g = self.per_bin;
        out.pos.clear();
        out.neg.clear();
        out.c.clear();
        out.group.clear();
        out.tied.clear();
        for b in 0..pm.len() {
            let slots = b * g..(b + 1) * g;
            let (share, span) = (&self.share[slots.clone()], &self.span[slots]);
            let (x, m) = (pm[b], pm[b] + nm[b]);
            let beta = if m > 0.0 {
                let r = rate.map_or(x / m, |r| r[b]);
                self.slice_rates(b, r, c[b], &mut out.rates)
            } else {
                None
            };
            let Some(beta) = beta else {
                out.pos.push(x);
                out.neg.push(nm[b]);
                out.c.push(c[b]);
                out.group.push(b);
                out.tied.push(false);
                continue;
            };
            let total: f64 = share.iter().sum();
            let q = &out.rates;
            let (mut expected, mut spread) = (0.0, 0.0);
            for (a, qj) in share.iter().zip(q) {
                expected += m * a * qj / total;
                spread += a * qj * (1.0 - qj);
            }
            let departure = x - expected;
            for j in 0..g {
                let (a, qj) = (share[j], q[j]);
                let rows = m * a / total;
                let moved = if spread > 0.0 {
                    departure * a * qj * (1.0 - qj) / spread
                } else {
                    departure * a / total
                };
                let positives = (rows * qj + moved).clamp(0.0, rows);
                out.group.push(b);
                out.tied.push(span[j] == 0.0);
                out.pos.push(positives);
                out.neg.push(rows - positives);
                let local = qj * (1.0 - qj);
                out.c.push(if local > 0.0 {
                    0.5 + beta * span[j] / (12.0 * local)
                } else {
                    0.5
                });
            }
        }
    }
}

/// Posterior draws for every chunk: row (chunk c, metric m) is `out[(c * M + m) * n_draws..]`,
/// with M = metrics.len() + (1 if want_auc) + (1 if want_ap): the binary metrics, then ROC AUC,
/// then average precision.
///
/// The reference calibration is one unknown shared by all chunks, so with reference
/// calibration its draws (every bin's positive rate and within-bin concordance) are made once
/// and draw d of every chunk uses draw d of the calibration: each chunk's posterior is as
/// before, and differences between chunks are coherent (the shared uncertainty cancels).
/// Chunks then draw their own bin weights (or labels) from streams derived from (seed, chunk).
/// Everything runs in parallel blocks whose streams do not depend on the thread count.
///
/// Average precision follows the chunks' scores inside the bins where `slices` gives them
/// (see [`ScoreSlices`]), else a rate linear in the rank inside each bin.
#[allow(clippy::too_many_arguments)]
pub fn estimate(
    cal: &Calibration,
    chunks: &[ChunkStats],
    metrics: &[Metric],
    settings: Settings,
    drift: Option<&Drift>,
    slices: Option<&ScoreSlices>,
    n_draws: usize,
    seed: u64,
) -> Result<Vec<f64>> {
    if let Some(slices) = slices {
        slices.check(cal.n_bins(), chunks.len())?;
    }
    let rows = metrics.len() + settings.rankings().len();
    let sink = BinarySink {
        predicted: (0..cal.n_bins())
            .map(|i| cal.predicts_positive(i))
            .collect(),
        metrics,
        settings,
        rankings: (metrics.len()..).zip(settings.rankings()).collect(),
        slices,
        k: cal.n_bins(),
    };
    draw_masses(cal, chunks, settings, drift, n_draws, seed, rows, &sink)
}

/// The masses of one draw of a chunk's bins: positive and negative (for the multiclass
/// estimate: correct and wrong predictions), and the within-bin concordances.
pub struct Masses<'a> {
    pub pos: &'a [f64],
    pub neg: &'a [f64],
    pub concordance: &'a [f64],
    /// The bins' positive rates the masses were drawn at.
    pub rate: &'a [f64],
    /// Per class of a [`ClassShift`], the standard normal its shift was drawn from in this
    /// draw (NaN: the class drew none); empty without one.
    pub class_normal: &'a [f64],
    /// Per class, its log-odds move eⱼ in this draw ([`ClassShift::move_sd`]); empty: none.
    pub class_moves: &'a [f64],
}

/// What each draw's bin masses become: the binary metrics and the ranking metrics, or a
/// multiclass confusion matrix's metrics. `emit` writes draw `d` of chunk `chunk` into the
/// output rows, drawing what it needs from its own streams `s` (one per ranking metric, so that
/// asking for average precision leaves ROC AUC's draws as they were).
trait Sink: Sync {
    type Scratch;
    fn scratch(&self) -> Self::Scratch;
    /// The output rows holding ranking metrics' draws (see [`Drift::ranking_offset`]).
    fn ranking_rows(&self) -> &[(usize, Ranking)] {
        &[]
    }
    /// The chunk's score slices for average precision, if any.
    fn slices<'a>(&'a self, _chunk: usize, _stats: &'a ChunkStats) -> Option<ChunkSlices<'a>> {
        None
    }
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        chunk: usize,
        stats: &ChunkStats,
        masses: &Masses,
        scratch: &mut Self::Scratch,
        s: &mut [Sampler; 2],
        out: &mut [&mut [f64]],
        d: usize,
    );
}

struct BinarySink<'a> {
    predicted: Vec<bool>,
    metrics: &'a [Metric],
    settings: Settings,
    /// Output row of each ranking metric asked for.
    rankings: Vec<(usize, Ranking)>,
    slices: Option<&'a ScoreSlices>,
    k: usize,
}

impl Sink for BinarySink<'_> {
    type Scratch = SliceBuffer;

    fn scratch(&self) -> SliceBuffer {
        SliceBuffer::default()
    }

    fn slices<'a>(&'a self, chunk: usize, stats: &'a ChunkStats) -> Option<ChunkSlices<'a>> {
        self.slices
            .map(|slices| slices.chunk(chunk, self.k, &stats.spread))
    }

    fn ranking_rows(&self) -> &[(usize, Ranking)] {
        &self.rankings
    }

    fn emit(
        &self,
        chunk: usize,
        stats: &ChunkStats,
        masses: &Masses,
        scratch: &mut SliceBuffer,
        s: &mut [Sampler; 2],
        out: &mut [&mut [f64]],
        d: usize,
    ) {
        let mut cells = Cells::new(0.0, 0.0, 0.0, 0.0);
        for (i, (&p, &n)) in masses.pos.iter().zip(masses.neg).enumerate() {
            if self.predicted[i] {
                cells.tp += p;
                cells.fp += n;
            } else {
                cells.fn_ += p;
                cells.tn += n;
            }
        }
        for (m, metric) in self.metrics.iter().enumerate() {
            out[m][d] = metric.eval(&cells, self.settings.zero_division);
        }
        let noise = self.settings.target == Target::Realized && self.settings.within_bin;
        // Every block of draws starts afresh (d = 0), so no sd crosses from chunk to chunk and
        // the draws do not depend on the thread count.
        if d % AP_NOISE_EVERY == 0 {
            scratch.noise = None;
        }
        for &(row, ranking) in &self.rankings {
            let slices = self.slices(chunk, stats);
            let narrow = slices.filter(|_| noise && ranking == Ranking::AveragePrecision);
            let (mut pos, mut neg) = (
                std::mem::take(&mut scratch.pos_bins),
                std::mem::take(&mut scratch.neg_bins),
            );
            if let Some(slices) = narrow {
                slices.narrow_counts(stats, masses, &mut scratch.rates, &mut pos, &mut neg);
            }
            let (p, n) = if narrow.is_some() {
                (&pos[..], &neg[..])
            } else {
                (masses.pos, masses.neg)
            };
            let rate = Some(masses.rate);
            let s = &mut s[ranking.noise_stream()];
            let ties = noise.then_some(&stats.tie_factor[..]);
            out[row][d] = ranking.eval(p, n, masses.concordance, ties, s, slices, rate, scratch);
            (scratch.pos_bins, scratch.neg_bins) = (pos, neg);
        }
    }
}

/// What the multiclass estimate adds to a calibration whose bins each hold the rows of one
/// predicted class (between two confidences) and whose "positives" are the reference's correct
/// predictions: per bin the predicted class and the Dirichlet parameters of the true class of
/// its wrong predictions (reference counts plus prior; the predicted class's entry unused).
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorModel {
    pub n_classes: usize,
    pub predicted: Vec<usize>,
    /// Bins × classes, row-major: one set for every chunk; or chunks × bins × classes, each
    /// chunk's own (the reference's moved to where the chunk's rows put their other scores).
    pub alpha: Vec<f64>,
    /// Chunks × bins × classes: how far a move eⱼ of class j's log-odds tilts the bin's error
    /// shares, κ e_j in place of e_j ([`ClassShift::move_sd`]). A share m of the bin's
    /// mistakes moves by m (1 - m) e under a common tilt, but the rows' own shares q each move
    /// by q (1 - q) e, whose mean is below it: κ = E[q (1 - q)] / (m (1 - m)) ≤ 1. Empty: 1.
    pub move_share: Vec<f64>,
}

impl ErrorModel {
    fn check(&self, n_bins: usize, n_chunks: usize) -> Result<()> {
        let k = self.n_classes;
        let per_chunk = n_bins * k;
        if k < 2
            || self.predicted.len() != n_bins
            || !(self.alpha.len() == per_chunk || self.alpha.len() == n_chunks * per_chunk)
        {
            return Err(Error::invalid(
                "the error model needs a predicted class per bin and K error parameters per bin \
                 (or per chunk and bin)",
            ));
        }
        for (i, &c) in self.predicted.iter().enumerate() {
            if c >= k {
                return Err(Error::invalid(format!(
                    "bin {i} predicts class {c}, but there are {k} classes"
                )));
            }
        }
        if !(self.move_share.is_empty() || self.move_share.len() == n_chunks * per_chunk)
            || self
                .move_share
                .iter()
                .any(|v| !(v.is_finite() && *v >= 0.0))
        {
            return Err(Error::invalid(
                "the error shares' move shares must be finite and >= 0, K per chunk and bin",
            ));
        }
        for (cell, row) in self.alpha.chunks(k).enumerate() {
            let (i, c) = (cell % n_bins, self.predicted[cell % n_bins]);
            let usable = row.iter().enumerate().filter(|&(j, _)| j != c);
            if row.iter().any(|a| !(a.is_finite() && *a >= 0.0))
                || usable.clone().all(|(_, a)| *a == 0.0)
            {
                return Err(Error::invalid(format!(
                    "bin {i}'s error parameters must be finite, >= 0, and not all 0"
                )));
            }
        }
        Ok(())
    }

    /// The error parameters (bins × classes) of one chunk.
    fn alpha_of(&self, chunk: usize) -> &[f64] {
        let size = self.predicted.len() * self.n_classes;
        if self.alpha.len() == size {
            &self.alpha
        } else {
            &self.alpha[chunk * size..(chunk + 1) * size]
        }
    }

    /// Bin `bin`'s move share per class in chunk `chunk` (None: 1 for every class).
    fn move_share_of(&self, chunk: usize, bin: usize) -> Option<&[f64]> {
        let k = self.n_classes;
        let start = (chunk * self.predicted.len() + bin) * k;
        self.move_share.get(start..start + k)
    }
}

/// Per chunk, the Gamma laws of each bin's error classes (the reference's parameters plus the
/// chunk's wrong predictions whose true class is known), and those known counts; `tilt`: per
/// class the mean and sd of the chunk's common tilt γ of the error shares (empty: none).
struct ChunkErrors {
    shapes: Vec<Option<Gamma>>,
    known: Vec<f64>,
    tilt: Vec<(f64, f64)>,
}

/// Largest |γ| a tilt draw takes (e^30 ≈ 1e13: one class takes a bin's whole error mass).
const MAX_TILT: f64 = 30.0;

struct MulticlassSink<'a> {
    errors: &'a ErrorModel,
    chunks: Vec<ChunkErrors>,
    /// Per class, the correlation of its error-share tilt with its class shift (empty: none).
    tilt_correlation: &'a [f64],
    metrics: &'a [MulticlassMetric],
    target: Target,
    zero_division: f64,
}

/// Per-block buffers of the multiclass sink: the K × K matrix, its class totals and one bin's
/// error-class draws.
struct MulticlassScratch {
    matrix: Vec<f64>,
    actual: Vec<f64>,
    predicted: Vec<f64>,
    correct: Vec<f64>,
    share: Vec<f64>,
    counted: Vec<bool>,
    /// e^γ of the draw's common tilt, per class.
    tilt: Vec<f64>,
    /// The common tilt times a bin's own factor from the classes' moves, per class.
    bin_tilt: Vec<f64>,
}

impl Sink for MulticlassSink<'_> {
    type Scratch = MulticlassScratch;

    fn scratch(&self) -> MulticlassScratch {
        let k = self.errors.n_classes;
        MulticlassScratch {
            matrix: vec![0.0; k * k],
            actual: vec![0.0; k],
            predicted: vec![0.0; k],
            correct: vec![0.0; k],
            share: vec![0.0; k],
            counted: vec![true; k],
            tilt: vec![1.0; k],
            bin_tilt: vec![1.0; k],
        }
    }

    /// Correct mass goes to the bin's diagonal cell; wrong mass is spread over the true
    /// classes by a draw of the bin's error shares φ ~ Dirichlet: in proportion (population),
    /// or the unknown wrong rows as Multinomial(φ) plus the known ones (realized).
    fn emit(
        &self,
        chunk: usize,
        stats: &ChunkStats,
        masses: &Masses,
        scratch: &mut MulticlassScratch,
        s: &mut [Sampler; 2],
        out: &mut [&mut [f64]],
        d: usize,
    ) {
        let s = &mut s[0];
        let k = self.errors.n_classes;
        let errors = &self.chunks[chunk];
        let m = &mut scratch.matrix;
        m.fill(0.0);
        // The chunk's common tilt: every bin's error shares move towards the same classes,
        // class j's with the shift of its predictions' correct rates at correlation ρⱼ (more
        // rows of j make both more predictions of j right and more mistakes j).
        for (j, (w, &(mean, sd))) in scratch.tilt.iter_mut().zip(&errors.tilt).enumerate() {
            let mut z = s.normal();
            if let (Some(&rho), Some(&shared)) =
                (self.tilt_correlation.get(j), masses.class_normal.get(j))
            {
                if rho != 0.0 && shared.is_finite() {
                    z = rho * shared + (1.0 - rho * rho).sqrt() * z;
                }
            }
            *w = (mean + sd * z).clamp(-MAX_TILT, MAX_TILT).exp();
        }
        let moves = masses.class_moves;
        for (i, &c) in self.errors.predicted.iter().enumerate() {
            m[c * k + c] += masses.pos[i];
            let wrong = masses.neg[i];
            if wrong <= 0.0 {
                continue;
            }
            let mut total = 0.0;
            if errors.tilt.is_empty() {
                let shapes = &errors.shapes[i * k..(i + 1) * k];
                for (share, shape) in scratch.share.iter_mut().zip(shapes) {
                    *share = shape.as_ref().map_or(0.0, |g| s.gamma(g));
                    total += *share;
                }
            } else {
                // Dirichlet(A m̃ + known): the bin's reference shares m tilted by e^γ, at the
                // same total weight A, plus the chunk's known wrong labels.
                let alpha = &self.errors.alpha_of(chunk)[i * k..(i + 1) * k];
                let known = &errors.known[i * k..(i + 1) * k];
                // The classes' moves tilt the bin's shares too, each by its move share.
                let bin_tilt: &[f64] = if moves.is_empty() {
                    &scratch.tilt
                } else {
                    let share = self.errors.move_share_of(chunk, i);
                    scratch.bin_tilt.copy_from_slice(&scratch.tilt);
                    for (j, (w, e)) in scratch.bin_tilt.iter_mut().zip(moves).enumerate() {
                        // The predicted class holds no share of the bin's mistakes.
                        if j != c {
                            let kappa = share.map_or(1.0, |v| v[j]);
                            *w *= (kappa * e).clamp(-MAX_TILT, MAX_TILT).exp();
                        }
                    }
                    &scratch.bin_tilt
                };
                let (mut weight, mut tilted) = (0.0, 0.0);
                for (j, (a, w)) in alpha.iter().zip(bin_tilt.iter()).enumerate() {
                    if j != c {
                        weight += a;
                        tilted += a * w;
                    }
                }
                for (j, share) in scratch.share.iter_mut().enumerate() {
                    let shape = if j == c || tilted <= 0.0 {
                        0.0
                    } else {
                        weight * alpha[j] * bin_tilt[j] / tilted + known[j]
                    };
                    *share = match Gamma::new(shape) {
                        Ok(g) if shape > 0.0 => s.gamma(&g),
                        _ => 0.0,
                    };
                    total += *share;
                }
            }
            if total <= 0.0 {
                // Every share underflowed (tiny parameters): the wrong mass goes to the
                // class with the largest parameter, which the draws would favour.
                let alpha = &self.errors.alpha_of(chunk)[i * k..(i + 1) * k];
                let top = (0..k)
                    .filter(|&j| j != c)
                    .max_by(|&a, &b| alpha[a].total_cmp(&alpha[b]))
                    .unwrap_or(c);
                scratch.share.fill(0.0);
                scratch.share[top] = 1.0;
                total = 1.0;
            }
            match self.target {
                Target::Population => {
                    for (j, share) in scratch.share.iter().enumerate() {
                        m[j * k + c] += wrong * share / total;
                    }
                }
                Target::Realized => {
                    let known = &errors.known[i * k..(i + 1) * k];
                    let mut left = (wrong - stats.labelled_neg[i]).round().max(0.0) as u64;
                    let mut rest = total;
                    // The last class with a share takes what is left, whatever rounding did
                    // to `rest`.
                    let last = scratch.share.iter().rposition(|v| *v > 0.0).unwrap_or(0);
                    for (j, share) in scratch.share.iter().enumerate() {
                        let x = if left == 0 || *share <= 0.0 {
                            0
                        } else if j == last {
                            left
                        } else {
                            s.binomial(left, (share / rest).min(1.0))
                        };
                        left -= x;
                        rest -= share;
                        m[j * k + c] += x as f64 + known[j];
                    }
                }
            }
        }
        let total = class_totals_into(
            m,
            &mut scratch.actual,
            &mut scratch.predicted,
            &mut scratch.correct,
        );
        let totals = ClassTotals {
            actual: &scratch.actual,
            predicted: &scratch.predicted,
            correct: &scratch.correct,
            total,
        };
        for (row, metric) in self.metrics.iter().enumerate() {
            out[row][d] = metric.eval_counted(&totals, self.zero_division, &scratch.counted);
        }
    }
}

/// Multiclass posterior draws for every chunk, laid out as [`estimate`]'s: the calibration's
/// bins each hold one predicted class, its "positives" are correct predictions (so that the
/// drift model and the known labels work on correctness as they do on the binary label), and
/// `errors` says how the wrong predictions of each bin spread over the true classes.
/// `known_errors[c]` holds chunk c's known wrong predictions per bin and true class (bins × K;
/// each bin's sum is its `labelled_neg`). `tilts[c]`, when given (else empty), holds chunk c's
/// common tilt of the error shares: K means, then K sds, of a normal γ per class; each draw
/// then draws γ and every bin's shares from Dirichlet(A m ∘ e^γ / Σ m e^γ + known), m and A the
/// bin's shares and weight in `errors` (the chunk's own when it holds one set per chunk). Every
/// class counts in macro averages.
#[allow(clippy::too_many_arguments)]
pub fn estimate_multiclass(
    cal: &Calibration,
    chunks: &[ChunkStats],
    errors: &ErrorModel,
    known_errors: &[Vec<f64>],
    tilts: &[Vec<f64>],
    tilt_correlation: &[f64],
    metrics: &[MulticlassMetric],
    settings: Settings,
    drift: Option<&Drift>,
    n_draws: usize,
    seed: u64,
) -> Result<Vec<f64>> {
    let (b, k) = (cal.n_bins(), errors.n_classes);
    errors.check(b, chunks.len())?;
    if known_errors.len() != chunks.len() {
        return Err(Error::invalid("known errors need one table per chunk"));
    }
    let tilted = !tilts.is_empty();
    if tilted
        && (tilts.len() != chunks.len()
            || tilts.iter().any(|t| {
                t.len() != 2 * k
                    || t.iter().any(|v| !v.is_finite())
                    || t[k..].iter().any(|sd| *sd < 0.0)
            }))
    {
        return Err(Error::invalid(
            "the error shares' tilts need, per chunk, K finite means and K sds >= 0",
        ));
    }
    if !(tilt_correlation.is_empty() || tilt_correlation.len() == k)
        || tilt_correlation.iter().any(|r| !(-1.0..=1.0).contains(r))
    {
        return Err(Error::invalid(
            "the tilts' correlations with the class shifts must be one per class (or none), \
             each in [-1, 1]",
        ));
    }
    let mut prepared = Vec::with_capacity(chunks.len());
    for (index, (stats, known)) in chunks.iter().zip(known_errors).enumerate() {
        let consistent = known.len() == b * k
            && known.iter().all(|v| v.is_finite() && *v >= 0.0)
            && (0..b).all(|i| {
                let sum: f64 = known[i * k..(i + 1) * k].iter().sum();
                known[i * k + errors.predicted[i]] == 0.0
                    && (sum - stats.labelled_neg.get(i).copied().unwrap_or(f64::NAN)).abs() < 1e-6
            });
        if !consistent {
            return Err(Error::invalid(
                "known errors must be counts per bin and class that add up to each bin's known \
                 wrong predictions",
            ));
        }
        let shapes = (0..b * k)
            .map(|cell| {
                let shape = errors.alpha_of(index)[cell] + known[cell];
                if cell % k == errors.predicted[cell / k] || shape <= 0.0 {
                    Ok(None)
                } else {
                    Gamma::new(shape).map(Some)
                }
            })
            .collect::<Result<_>>()?;
        let tilt = if tilted {
            let t = &tilts[index];
            t[..k].iter().copied().zip(t[k..].iter().copied()).collect()
        } else {
            Vec::new()
        };
        prepared.push(ChunkErrors {
            shapes,
            known: known.clone(),
            tilt,
        });
    }
    let sink = MulticlassSink {
        errors,
        chunks: prepared,
        tilt_correlation,
        metrics,
        target: settings.target,
        zero_division: settings.zero_division,
    };
    let settings = Settings {
        want_auc: false,
        ..settings
    };
    draw_masses(
        cal,
        chunks,
        settings,
        drift,
        n_draws,
        seed,
        metrics.len(),
        &sink,
    )
}

/// The draws of every chunk's bin masses (see [`estimate`]), each turned into `rows` output
/// values by `sink`.
#[allow(clippy::too_many_arguments)]
fn draw_masses<S: Sink>(
    cal: &Calibration,
    chunks: &[ChunkStats],
    settings: Settings,
    drift: Option<&Drift>,
    n_draws: usize,
    seed: u64,
    rows: usize,
    sink: &S,
) -> Result<Vec<f64>> {
    let k = cal.n_bins();
    if let Some(drift) = drift {
        drift.check(k)?;
        drift.check_chunks(chunks.len())?;
    }
    let fits = |c: &ChunkStats| {
        [
            c.counts.len(),
            c.mean_score.len(),
            c.perfect_concordance.len(),
        ]
        .iter()
        .chain(&[c.labelled_pos.len(), c.labelled_neg.len()])
        .chain(&[c.spread.len(), c.tie_factor.len()])
        .all(|&n| n == k)
    };
    let labels_fit = |c: &ChunkStats| {
        (0..k).all(|i| {
            let (x, y) = (c.labelled_pos[i], c.labelled_neg[i]);
            x >= 0.0 && y >= 0.0 && x + y <= c.counts[i]
        }) && c
            .spread
            .iter()
            .chain(&c.tie_factor)
            .all(|v| (0.0..=1.0).contains(v))
    };
    if chunks.iter().any(|c| !fits(c) || !labels_fit(c)) {
        return Err(Error::invalid(
            "chunk statistics do not match the calibration",
        ));
    }
    if rows == 0 {
        return Err(Error::invalid("no metrics requested"));
    }
    check_draws(n_draws, rows * chunks.len().max(1))?;
    let widths: Vec<f64> = (0..k)
        .map(|i| {
            let (low, high) = cal.bounds(i);
            high - low
        })
        .collect();
    let shared = match settings.mode {
        Mode::Reference => Some(reference_draws(
            cal,
            settings,
            n_draws,
            fork(seed, u64::MAX),
        )?),
        Mode::Perfect => None,
    };
    let mut out = alloc_output(rows * n_draws * chunks.len())?;
    if chunks.is_empty() {
        return Ok(out);
    }
    let drift = drift.filter(|_| settings.mode == Mode::Reference);
    let job = Job {
        cal,
        settings,
        shared: shared.as_deref(),
        drift,
        centre_shift: drift.map_or_else(Vec::new, |d| d.centre_shifts(cal)),
        n_draws,
    };
    let chunk_seeds: Vec<u64> = (0..chunks.len() as u64).map(|c| fork(seed, c)).collect();
    parallel::for_each_chunk(&mut out, rows * n_draws, |c, chunk_out| {
        job.chunk(
            c,
            &chunks[c],
            &widths,
            chunk_out,
            rows,
            chunk_seeds[c],
            sink,
        )
    })?;
    Ok(out)
}

/// Draws of the reference calibration, row-major (2k × n_draws): every bin's positive rate
/// rᵢ ~ Beta(pos + 2mᵢ, neg + 2(1 − mᵢ)) ([`Calibration::rate_prior`]), then every bin's within-bin concordance
/// cᵢ ~ N(ĉᵢ, seᵢ²) clipped to [0, 1] (½ for the plain algorithm). Each row is one tight
/// loop from its own sub-stream.
fn reference_draws(
    cal: &Calibration,
    settings: Settings,
    n_draws: usize,
    seed: u64,
) -> Result<Vec<f64>> {
    let k = cal.n_bins();
    let rates: Vec<Beta> = (0..k)
        .map(|i| {
            let prior = cal.rate_prior(i);
            Beta::new(cal.pos[i] + prior.0, cal.neg[i] + prior.1)
        })
        .collect::<Result<_>>()?;
    let mut shared = alloc_output(2 * k * n_draws)?;
    fill_blocks(&mut shared, 2 * k, n_draws, seed, |streams, rows| {
        for (i, row) in rows.iter_mut().enumerate() {
            let mut s = streams.sampler(i as u64);
            if i < k {
                row.iter_mut().for_each(|v| *v = s.beta(&rates[i]));
            } else if settings.within_bin {
                let (c, se) = (cal.concordance[i - k], cal.concordance_se[i - k]);
                row.iter_mut()
                    .for_each(|v| *v = (c + se * s.normal()).clamp(0.0, 1.0));
            } else {
                row.fill(0.5);
            }
        }
    })?;
    Ok(shared)
}

/// Draws of [`Drift::ranking_offset`] per chunk. The AUC at the draws' mean rates cancels the part
/// of their mean AUC that is linear in the rates (a control variate), so the gap is sure long
/// before the mean AUC is: with a drift like the flights' (shift sd 0.2, tilt 0.1, bins 0.1,
/// 10 bins) its sd over seeds was 1.5e-4, 9.5e-5, 6.7e-5 and 3.6e-5 at 250, 500, 1,000 and
/// 4,000 draws, for a gap of 1.5e-3; 1,000 draws cost about a millisecond per chunk.
const RANKING_OFFSET_DRAWS: usize = 1_000;

struct Job<'a> {
    cal: &'a Calibration,
    settings: Settings,
    /// The shared reference draws (reference calibration only), see [`reference_draws`].
    shared: Option<&'a [f64]>,
    /// Between-period drift of the calibration (reference calibration only).
    drift: Option<&'a Drift>,
    /// [`Drift::centre_shifts`] of the drift (empty without one).
    centre_shift: Vec<f64>,
    n_draws: usize,
}

impl Job<'_> {
    #[allow(clippy::too_many_arguments)]
    fn chunk<S: Sink>(
        &self,
        index: usize,
        stats: &ChunkStats,
        widths: &[f64],
        out: &mut [f64],
        rows: usize,
        seed: u64,
        sink: &S,
    ) -> Result<()> {
        let k = self.cal.n_bins();
        let (settings, n_draws) = (self.settings, self.n_draws);
        let bin_shapes: Vec<Gamma> = (0..k)
            .map(|i| Gamma::new(stats.counts[i] + widths[i]))
            .collect::<Result<_>>()?;
        // Rows still without labels, per bin (the labelled ones are counted as they are).
        let unlabelled: Vec<u64> = (0..k)
            .map(|i| {
                (stats.counts[i] - stats.labelled_pos[i] - stats.labelled_neg[i]).round() as u64
            })
            .collect();
        let model = self
            .drift
            .map(|drift| drift.chunk_model(self.cal, stats, &self.centre_shift, index));
        fill_blocks(out, rows, n_draws, seed, |streams, rows_out| {
            let (mut sw, mut sx) = (streams.sampler(0), streams.sampler(1));
            // The noise of the ranking metrics' within-bin order, ROC AUC's and average
            // precision's (see Sink).
            let mut sn = [streams.sampler(2), streams.sampler(5)];
            let mut sd = streams.sampler(3);
            let (mut class_s, mut class_z) = (streams.sampler(4), Vec::new());
            let mut class_normal: Vec<f64> = Vec::new();
            let mut scratch = sink.scratch();
            let first = streams.first_column();
            let (mut pm, mut nm) = (vec![0.0; k], vec![0.0; k]);
            let (mut rate, mut c) = (vec![0.0; k], vec![0.0; k]);
            // Per bin, how much higher its labelled rows' rate is than its own (Drift::drift_rates).
            let mut gap = vec![0.0; k];
            for d in 0..rows_out[0].len() {
                let column = first + d;
                for i in 0..k {
                    (rate[i], c[i]) = match self.shared {
                        Some(shared) => (
                            shared[i * n_draws + column],
                            self.cal.chunk_concordance(
                                i,
                                shared[(k + i) * n_draws + column],
                                stats.spread[i],
                            ),
                        ),
                        None if settings.within_bin => {
                            (stats.mean_score[i], stats.perfect_concordance[i])
                        }
                        None => (stats.mean_score[i], 0.5),
                    };
                }
                if let (Some(model), Some(drift)) = (&model, self.drift) {
                    drift.drift_rates(
                        model,
                        stats,
                        &mut sd,
                        &mut rate,
                        &mut gap,
                        (&mut class_s, &mut class_z),
                    );
                    class_normal.clear();
                    class_normal.extend(
                        model
                            .class_sd
                            .iter()
                            .zip(&class_z)
                            .map(|(&sd, &z)| if sd > 0.0 { z / sd } else { f64::NAN }),
                    );
                }
                // The groups' moves follow their shifts in `class_z` (Drift::drift_rates).
                let class_moves = class_z.get(class_normal.len()..).unwrap_or(&[]);
                // Positive and negative mass per bin: expected (population) or the drawn
                // labels of these very rows plus the known ones (realized).
                for i in 0..k {
                    match settings.target {
                        Target::Population => {
                            let w = sw.gamma(&bin_shapes[i]);
                            pm[i] = w * rate[i];
                            nm[i] = w - pm[i];
                        }
                        Target::Realized => {
                            // The rows without labels sit where the labelled ones do not.
                            let unlabelled_rate = if gap[i] == 0.0 || unlabelled[i] == 0 {
                                rate[i]
                            } else {
                                let known = stats.labelled_pos[i] + stats.labelled_neg[i];
                                (rate[i] - gap[i] * known / unlabelled[i] as f64).clamp(0.0, 1.0)
                            };
                            let x = sx.binomial(unlabelled[i], unlabelled_rate) as f64;
                            pm[i] = x + stats.labelled_pos[i];
                            nm[i] = (unlabelled[i] as f64 - x) + stats.labelled_neg[i];
                        }
                    }
                }
                let masses = Masses {
                    pos: &pm,
                    neg: &nm,
                    concordance: &c,
                    rate: &rate,
                    class_normal: &class_normal,
                    class_moves,
                };
                sink.emit(index, stats, &masses, &mut scratch, &mut sn, rows_out, d);
            }
        })?;
        let (Some(drift), Some(model)) = (self.drift, &model) else {
            return Ok(());
        };
        let concordance: Vec<f64> = (0..k)
            .map(|i| {
                if settings.within_bin {
                    self.cal
                        .chunk_concordance(i, self.cal.concordance[i], stats.spread[i])
                } else {
                    0.5
                }
            })
            .collect();
        for &(row, ranking) in sink.ranking_rows() {
            let offset = drift.ranking_offset(
                self.cal,
                model,
                stats,
                &concordance,
                (ranking, sink.slices(index, stats)),
                RANKING_OFFSET_DRAWS,
                fork(seed, u64::MAX),
            );
            for v in &mut out[row * n_draws..(row + 1) * n_draws] {
                *v = (*v - offset).clamp(0.0, 1.0);
            }
        }
        Ok(())
    }
}

/// AUC of bins in score order with positive masses `pm`, negative masses `nm` and within-bin
/// concordances `c`. With `noise` (realized counts: each bin's tie factor, see
/// [`ChunkStats::tie_factor`]), each bin's within-bin concordant count also gets its
/// Mann–Whitney sampling noise, N(0, X Y (X + Y + 1) / 12) times the tie factor (pairs of
/// tied rows count ½ whichever of them is the positive). ½ when a class has no mass.
fn binned_auc(pm: &[f64], nm: &[f64], c: &[f64], noise: Option<&[f64]>, s: &mut Sampler) -> f64 {
    let (mut below, mut wins) = (0.0, 0.0);
    for i in 0..pm.len() {
        let (x, y) = (pm[i], nm[i]);
        let mut within = c[i] * x * y;
        if let Some(ties) = noise.filter(|_| x > 0.0 && y > 0.0) {
            let sd = (x * y * (x + y + 1.0) / 12.0 * ties[i]).sqrt();
            within = (within + sd * s.normal()).clamp(0.0, x * y);
        }
        wins += x * below + within;
        below += y;
    }
    let (p, n): (f64, f64) = (pm.iter().sum(), nm.iter().sum());
    if p > 0.0 && n > 0.0 {
        (wins / (p * n)).clamp(0.0, 1.0)
    } else {
        0.5
    }
}

/// Nodes of the Gauss–Legendre rule that integrates across one bin. Inside a bin the
/// precision is a ratio of a quadratic and a linear polynomial in u with its pole at
/// u = −o, o = M / m; an n-node rule's relative error is about ρ^(−2n) with
/// ρ = 1 + 2o + sqrt((1 + 2o)² − 1): with o ≥ 1, 8 nodes give ~1e-12. Nearer the pole AP's
/// integral is taken in closed form (the nodes then serve only the realized noise's variance).
const AP_NODES: usize = 8;

/// [`AP_NODES`] Gauss–Legendre nodes and weights on [0, 1].
fn unit_rule() -> &'static [(f64, f64)] {
    static RULE: OnceLock<Vec<(f64, f64)>> = OnceLock::new();
    RULE.get_or_init(|| rule_on_unit(AP_NODES))
}

/// Fewer nodes for the mean where the pole is far ([`AP_NODES`]' error bound): 2 nodes from
/// o ≥ 64 (ρ > 257, ρ⁻⁴ < 3e-10), 4 from o ≥ 4 (ρ > 17.9, ρ⁻⁸ < 1e-10), else 8. A chunk's
/// score slices put most of them deep below the top.
fn mean_rule(offset: f64) -> &'static [(f64, f64)] {
    static TWO: OnceLock<Vec<(f64, f64)>> = OnceLock::new();
    static FOUR: OnceLock<Vec<(f64, f64)>> = OnceLock::new();
    if offset >= 64.0 {
        TWO.get_or_init(|| rule_on_unit(2))
    } else if offset >= 4.0 {
        FOUR.get_or_init(|| rule_on_unit(4))
    } else {
        unit_rule()
    }
}

fn rule_on_unit(nodes: usize) -> Vec<(f64, f64)> {
    gauss_legendre(nodes)
        .into_iter()
        .map(|(x, w)| ((x + 1.0) / 2.0, w / 2.0))
        .collect()
}

/// The slope s of a bin's positive rate p(u) = p̄ + s (½ − u) from its top (u = 0) to its
/// bottom (u = 1) whose concordance is `c`: c = ½ + s / (12 p̄ (1 − p̄)). Clipped so that p(u)
/// stays in [0, 1] (a bin's concordance beyond ½ + 1 / (6 max(p̄, 1 − p̄)) is more than a
/// linear rate can hold).
fn within_slope(rate: f64, c: f64) -> f64 {
    let limit = 2.0 * rate.min(1.0 - rate);
    (12.0 * rate * (1.0 - rate) * (c - 0.5)).clamp(-limit, limit)
}

/// ∫₀¹ p(u) TP(u) / (o + u) du for p(u) = a + b u and TP(u) = t + a u + b u² / 2 (in units
/// of the bin's mass m, so `t` = T / m and `o` = M / m): the cubic numerator divided by
/// (u + o), whose remainder gives a logarithm. For o < 1, where quadrature would need many
/// nodes; beyond that its terms cancel.
fn near_pole_part(a: f64, b: f64, t: f64, o: f64) -> f64 {
    let (n0, n1, n2, n3) = (a * t, a * a + b * t, 1.5 * a * b, 0.5 * b * b);
    let q2 = n3;
    let q1 = n2 - o * q2;
    let q0 = n1 - o * q1;
    let remainder = n0 - o * q0;
    let log = if o > 0.0 { (1.0 / o).ln_1p() } else { 0.0 };
    q0 + q1 / 2.0
        + q2 / 3.0
        + if remainder != 0.0 {
            remainder * log
        } else {
            0.0
        }
}

/// Average precision of bins in score order with positive masses `pm`, negative masses `nm`
/// and within-bin concordances `c` (see the module's introduction): from the top bin down,
/// each bin adds ∫₀¹ precision(u) dTP(u), with TP(u) = T + m (p̄ u + s (u − u²) / 2) and
/// precision(u) = TP(u) / (M + m u) given the positive mass T and the whole mass M above it.
///
/// With `noise` (realized counts) it adds which of a bin's rows are the positives: by the
/// delta method, a row j's label moves AP by (precision_j + Σ_{i ≥ j} yᵢ / i − AP) / P, and
/// given the bin's count of positives the rows' labels vary as independent Bernoullis
/// conditioned on their sum, so the variance is Σ pⱼ (1 − pⱼ) (hⱼ − h̄)² / P² with hⱼ the
/// bracket's first two terms and h̄ their mean weighted by pⱼ (1 − pⱼ) over the bin (terms
/// from the bins below are the same for every row of the bin and cancel). 0 when there are
/// no positives; 1 when there are no negatives.
fn binned_ap(pm: &[f64], nm: &[f64], c: &[f64], noise: bool, s: &mut Sampler) -> f64 {
    let (sd, own) = if noise {
        (
            ap_noise_sd(pm, nm, c, None, None),
            ap_own_label_term(pm, nm, None),
        )
    } else {
        (0.0, 0.0)
    };
    with_noise(ap_mean(pm, nm, c, None) + own, sd, s)
}

/// `ap` plus N(0, sd²) (no draw when sd is 0), within [0, 1].
fn with_noise(ap: f64, sd: f64, s: &mut Sampler) -> f64 {
    let noisy = if sd > 0.0 { ap + sd * s.normal() } else { ap };
    noisy.clamp(0.0, 1.0)
}

/// [`binned_ap`]'s average precision, without its noise. A `tied` bin's rows share one score:
/// its positives all get the precision at its end, as scikit-learn counts a tie.
fn ap_mean(pm: &[f64], nm: &[f64], c: &[f64], tied: Option<&[bool]>) -> f64 {
    let (p, n): (f64, f64) = (pm.iter().sum(), nm.iter().sum());
    // Masses are finite and >= 0, so "not > 0" means 0.
    if p <= 0.0 {
        return 0.0;
    }
    if n <= 0.0 {
        return 1.0;
    }
    let (mut pos_above, mut above, mut area) = (0.0, 0.0, 0.0);
    for i in (0..pm.len()).rev() {
        let (x, m) = (pm[i], pm[i] + nm[i]);
        if m <= 0.0 {
            continue;
        }
        if x > 0.0 {
            let rate = (x / m).min(1.0);
            let slope = within_slope(rate, c[i]);
            let offset = above / m;
            let part = if tied.is_some_and(|t| t[i]) {
                rate * (pos_above + x) / (above + m)
            } else if offset < 1.0 {
                near_pole_part(rate + 0.5 * slope, -slope, pos_above / m, offset)
            } else {
                mean_rule(offset)
                    .iter()
                    .map(|&(u, w)| {
                        let local = rate + slope * (0.5 - u);
                        let gained = rate * u + 0.5 * slope * (u - u * u);
                        w * local * (pos_above + m * gained) / (above + m * u)
                    })
                    .sum()
            };
            area += m * part;
        }
        pos_above += x;
        above += m;
    }
    area / p
}

/// The sd of [`binned_ap`]'s within-bin noise: the rows of each group of consecutive bins
/// (`group`, ascending; None: every bin its own) share out the group's positives. Two
/// passes: the masses above each bin from the top, then each group from its bottom up, so
/// that a row's Σ_{i ≥ j} yᵢ / i within its group is known (the rest is the same for the
/// whole group and cancels).
fn ap_noise_sd(
    pm: &[f64],
    nm: &[f64],
    c: &[f64],
    group: Option<&[usize]>,
    tied: Option<&[bool]>,
) -> f64 {
    let (p, n): (f64, f64) = (pm.iter().sum(), nm.iter().sum());
    if p <= 0.0 || n <= 0.0 {
        return 0.0;
    }
    let len = pm.len();
    // The masses above a bin: the totals less everything up to and including it.
    let (mut pos_through, mut through) = (0.0, 0.0);
    let group_of = |i: usize| group.map_or(i, |g| g[i]);
    let finish = |(weight, first, second): (f64, f64, f64)| {
        if weight > 0.0 {
            (second - first * first / weight).max(0.0)
        } else {
            0.0
        }
    };
    let (mut variance, mut moments, mut below) = (0.0, (0.0, 0.0, 0.0), 0.0);
    for i in 0..len {
        if i > 0 && group_of(i) != group_of(i - 1) {
            variance += finish(moments);
            (moments, below) = ((0.0, 0.0, 0.0), 0.0);
        }
        let (x, m) = (pm[i], pm[i] + nm[i]);
        pos_through += x;
        through += m;
        let (pos_above, above) = ((p - pos_through).max(0.0), (p + n - through).max(0.0));
        if m <= 0.0 || x <= 0.0 {
            continue;
        }
        let rate = (x / m).min(1.0);
        if tied.is_some_and(|t| t[i]) {
            // One score: every row's label moves AP alike, by the precision at the tie's
            // end and its own y / rank there.
            let end = above + m;
            let h = (pos_above + x) / end + below;
            let q = m * rate * (1.0 - rate);
            moments.0 += q;
            moments.1 += q * h;
            moments.2 += q * h * h;
            below += x / end;
            continue;
        }
        let slope = within_slope(rate, c[i]);
        // ∫ p(v) / (o + v) dv from u to 1 (rows' y / rank, per unit of the bin's mass), in
        // closed form for p(v) = a + b v and o = M / m.
        let (a, b, offset) = (rate + 0.5 * slope, -slope, above / m);
        let tail = |u: f64| {
            let log = if offset > 0.0 || u > 0.0 {
                ((offset + 1.0) / (offset + u)).ln()
            } else {
                0.0
            };
            b * (1.0 - u) + (a - b * offset) * log
        };
        // A variance needs less accuracy than the mean: the mean's rule where the pole is far.
        let rule = if offset >= 1.0 {
            mean_rule(offset)
        } else {
            unit_rule()
        };
        for &(u, w) in rule {
            let local = rate + slope * (0.5 - u);
            let precision = if above > 0.0 {
                (pos_above + m * (rate * u + 0.5 * slope * (u - u * u))) / (above + m * u)
            } else {
                rate + 0.5 * slope * (1.0 - u)
            };
            let (q, h) = (m * w * local * (1.0 - local), precision + tail(u) + below);
            moments.0 += q;
            moments.1 += q * h;
            moments.2 += q * h * h;
        }
        // The bins above in the group count this one's rows whole (the top bin of all,
        // with nothing above it, is never below another).
        if offset > 0.0 {
            below += tail(0.0);
        }
    }
    variance += finish(moments);
    variance.sqrt() / p
}

/// What a finite chunk's expected average precision has beyond [`ap_mean`]'s continuum: each
/// positive counts itself in its own precision. Given a bin's (or slice's) m rows with x of
/// them positive, in an order the model does not know (exchangeable rows, q = x / m), its k-th
/// row, with M rows above the bin, adds E[y_k TP_k] / (M + k) = (q T + (k − 1) x (x − 1) /
/// (m (m − 1)) + q) / (M + k) to P × AP (T: the positives above), where the continuum counts
/// q (T + q k) / (M + k): short by q (1 − q) (m − k) / (m − 1) / (M + k). Summed over the
/// rows: q (1 − q) ((M + m) (ψ(M + m + 1) − ψ(M + 1)) − m) / (m − 1), then over the bins and
/// divided by the positives P. A realized chunk's AP sits that much higher than the continuum's
/// on average: without the term, 2% positives in 2,000-row chunks put the posterior mean 0.44 ±
/// 0.06 sds below the mean over brute-force label draws (−0.10 ± 0.06 with it). A `tied` bin's
/// positives all get the precision at its end, exactly; a bin of one row or less has no order.
fn ap_own_label_term(pm: &[f64], nm: &[f64], tied: Option<&[bool]>) -> f64 {
    let p: f64 = pm.iter().sum();
    if p <= 0.0 {
        return 0.0;
    }
    let (mut above, mut total) = (0.0, 0.0);
    for i in (0..pm.len()).rev() {
        let m = pm[i] + nm[i];
        if m > 1.0 && pm[i] > 0.0 && !tied.is_some_and(|t| t[i]) {
            let q = (pm[i] / m).min(1.0);
            let spread = (above + m) * (digamma(above + m + 1.0) - digamma(above + 1.0)) - m;
            total += q * (1.0 - q) * spread.max(0.0) / (m - 1.0);
        }
        above += m;
    }
    total / p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Average;
    use crate::rng::stream;

    fn calibrated(n: usize, seed: u64) -> (Vec<f64>, Vec<bool>) {
        let mut s = Sampler::new(stream(seed, 0));
        let b = Beta::new(1.3, 2.0).unwrap();
        let scores: Vec<f64> = (0..n).map(|_| s.beta(&b)).collect();
        let labels = scores.iter().map(|&p| s.uniform() < p).collect();
        (scores, labels)
    }

    #[test]
    fn labels_likelihood_is_finite_where_the_rate_rounds_to_0_or_1() {
        // No negatives at a rate that rounds to 1 (and no positives at one that rounds to
        // 0) are certain, not 0 * ln 0 = NaN; the other class there is impossible in effect.
        for &logit_m in &[-800.0, -40.0, 40.0, 800.0] {
            for &var in &[0.0, 0.1] {
                let (x, y) = if logit_m > 0.0 {
                    (7.0, 0.0)
                } else {
                    (0.0, 7.0)
                };
                let sure = beta_binomial_ln(x, y, logit_m, var);
                assert!(
                    sure.is_finite() && sure.abs() < 1e-9,
                    "{logit_m} {var}: {sure}"
                );
                let odd = beta_binomial_ln(y, x, logit_m, var);
                assert!(odd.is_finite() && odd < -200.0, "{logit_m} {var}: {odd}");
            }
        }
        let p: f64 = 0.3;
        let binomial = 4.0 * p.ln() + 6.0 * (1.0 - p).ln();
        assert!((beta_binomial_ln(4.0, 6.0, logit(p), 0.0) - binomial).abs() < 1e-12);
    }

    /// A drift on small grids around a fitted calibration, and two chunks of 2,000 rows whose
    /// labels are all known except every third row.
    fn drift_with_labelled_chunks() -> (Calibration, Drift, Vec<ChunkStats>) {
        let (scores, labels) = calibrated(20_000, 5);
        let cal = fit(&scores, &labels, 8, 0.5).unwrap();
        let grid = |half: f64, n: usize, sd: f64| Grid {
            values: (0..n)
                .map(|i| -half + 2.0 * half * i as f64 / (n - 1) as f64)
                .collect(),
            log_prior: (0..n)
                .map(|i| {
                    let v = -half + 2.0 * half * i as f64 / (n - 1) as f64;
                    -0.5 * (v / sd).powi(2)
                })
                .collect(),
        };
        let k = cal.n_bins();
        let drift = Drift {
            shift: grid(1.0, 41, 0.3),
            tilt: grid(0.5, 9, 0.2),
            centre: -0.4,
            bin_sd: 0.05,
            slope: vec![1.0; k],
            slope_se: vec![0.2; k],
            ref_mean: (0..k)
                .map(|i| {
                    let (l, h) = cal.bounds(i);
                    0.5 * (l + h)
                })
                .collect(),
            chunk_shift_prior: Vec::new(),
            chunk_tilt_prior: Vec::new(),
            chunk_bin_sd: Vec::new(),
            chunk_centre_sd: Vec::new(),
            bin_extra_var: Vec::new(),
            class_shift: None,
        };
        let (chunk_scores, chunk_labels) = calibrated(4_000, 6);
        let known: Vec<f64> = chunk_labels
            .iter()
            .enumerate()
            .map(|(i, &y)| {
                if i % 3 == 0 {
                    f64::NAN
                } else {
                    f64::from(u8::from(y))
                }
            })
            .collect();
        let chunks = chunk_stats(&cal, &chunk_scores, &[0, 2_000], false, Some(&known)).unwrap();
        (cal, drift, chunks)
    }

    #[test]
    fn a_finer_calibration_pools_adjacent_violators_and_places_labelled_rows() {
        // Rates 1/2, 0/2, 3/4, then a sub-bin without rows: the first two pool (1 of 4), the
        // empty one joins the last; each block smoothed, (P + 1/2) / (N + 1).
        let fine = FineCalibration::new(
            &[0.2, 0.4, 0.6, 0.8],
            &[1.0, 0.0, 3.0, 0.0],
            &[1.0, 2.0, 1.0, 0.0],
            &[0],
        )
        .unwrap();
        assert_eq!(fine.block, vec![0, 0, 1, 1]);
        assert_eq!(fine.block_rate, vec![1.5 / 5.0, 3.5 / 5.0]);
        for (&rate, &se) in fine.block_rate.iter().zip(&fine.block_se) {
            assert!((se - (rate * (1.0 - rate) / 5.0).sqrt()).abs() < 1e-15);
        }
        let want = [1.5 / 5.0, 1.5 / 5.0, 3.5 / 5.0, 3.5 / 5.0];
        // A score up to a sub-bin's upper score belongs to it; above the last, to the last.
        assert_eq!(fine.block_of(0.2), 0);
        assert_eq!(fine.block_of(0.5), 1);
        assert_eq!(fine.block_of(0.95), 1);
        for (upper, pos, neg) in [
            (vec![], vec![], vec![]),
            (vec![0.5, 0.4], vec![1.0; 2], vec![1.0; 2]),
            (vec![0.5, f64::NAN], vec![1.0; 2], vec![1.0; 2]),
            (vec![0.4, 0.5], vec![1.0, -1.0], vec![1.0; 2]),
            (vec![0.4, 0.5], vec![1.0; 2], vec![1.0]),
        ] {
            assert!(FineCalibration::new(&upper, &pos, &neg, &[]).is_err());
        }
        // Restarts must increase and name sub-bins.
        for restarts in [vec![2, 1], vec![1, 1], vec![4]] {
            let (pos, neg) = ([1.0; 4], [1.0; 4]);
            assert!(FineCalibration::new(&[0.2, 0.4, 0.6, 0.8], &pos, &neg, &restarts).is_err());
        }
        // A restart keeps a falling rate from pooling with what came before it (a multiclass
        // model's next class), and the fit is monotone again within each part.
        let parts = FineCalibration::new(
            &[0.2, 0.4, 0.6, 0.8],
            &[3.0, 1.0, 0.0, 3.0],
            &[1.0, 3.0, 1.0, 1.0],
            &[2],
        )
        .unwrap();
        assert_eq!(parts.block, vec![0, 0, 1, 2]);
        assert_eq!(parts.block_rate, vec![4.5 / 9.0, 0.5 / 2.0, 3.5 / 5.0]);
        let whole = FineCalibration::new(
            &[0.2, 0.4, 0.6, 0.8],
            &[3.0, 1.0, 0.0, 3.0],
            &[1.0, 3.0, 1.0, 1.0],
            &[],
        )
        .unwrap();
        assert_eq!(whole.block, vec![0, 0, 0, 1]);
        // Labelled rows at a bin's top: the logit of their sub-bins' mean rate over that of all
        // the bin's rows, and the variance of the first from their standard errors.
        let cal = fit(&[0.1, 0.3, 0.7, 0.9], &[false, false, true, true], 1, 1.0).unwrap();
        assert_eq!(cal.n_bins(), 1);
        let scores = [0.1, 0.3, 0.5, 0.7];
        let labels = [f64::NAN, f64::NAN, 1.0, 0.0];
        let stats =
            chunk_stats_placed(&cal, &scores, &[0], false, Some(&labels), Some(&fine)).unwrap();
        let all = (want[0] + want[1] + want[2] + want[2]) / 4.0;
        let known = (want[2] + want[2]) / 2.0;
        assert!((stats[0].label_move[0] - (logit(known) - logit(all))).abs() < 1e-12);
        // Shares of the two blocks: labelled 0 and 1, all rows 1/2 and 1/2.
        let se2 = |r: f64| r * (1.0 - r) / 5.0;
        let var = (0.25 * se2(want[0]) + 0.25 * se2(want[2])) / (known * (1.0 - known)).powi(2);
        assert!((stats[0].label_move_var[0] - var).abs() < 1e-12);
        // Every row labelled: the labelled rows are the bin's, and nothing moves.
        let every = [1.0, 0.0, 1.0, 0.0];
        let every =
            chunk_stats_placed(&cal, &scores, &[0], false, Some(&every), Some(&fine)).unwrap();
        assert_eq!(every[0].label_move[0], 0.0);
        assert_eq!(every[0].label_move_var[0], 0.0);
        // Without a finer calibration, or without labels, nothing moves.
        let plain = chunk_stats(&cal, &scores, &[0], false, Some(&labels)).unwrap();
        assert_eq!(plain[0].label_move, vec![0.0]);
        let unlabelled = chunk_stats_placed(&cal, &scores, &[0], false, None, Some(&fine)).unwrap();
        assert_eq!(unlabelled[0].label_move, vec![0.0]);
    }

    #[test]
    fn effect_likelihoods_times_priors_are_the_chunk_models_marginals() {
        // Two paths to P(a | labels): the (a, b) grid posterior of the chunk model summed over
        // b, and the prior of a times the likelihood of a with b averaged over its prior; and
        // the same for b, the shift averaged over the chunk's own prior of it. First with the
        // grids' priors, then with each chunk's own.
        let (cal, mut drift, chunks) = drift_with_labelled_chunks();
        let (ga, gb) = (drift.shift.values.len(), drift.tilt.values.len());
        let own = |g: usize, centre: f64, step: f64| -> Vec<f64> {
            (0..2 * g)
                .map(|i| -0.5 * ((i % g) as f64 - centre - step * (i / g) as f64).powi(2) / 16.0)
                .collect()
        };
        for per_chunk in [false, true] {
            if per_chunk {
                drift.chunk_shift_prior = own(ga, 12.0, 8.0);
                drift.chunk_tilt_prior = own(gb, 3.0, 2.0);
            }
            let centre = drift.centre_shifts(&cal);
            let shifts = drift_likelihoods(&cal, &drift, &chunks, Effect::Shift).unwrap();
            let tilts = drift_likelihoods(&cal, &drift, &chunks, Effect::Tilt).unwrap();
            for (c, stats) in chunks.iter().enumerate() {
                let model = drift.chunk_model(&cal, stats, &centre, c);
                let (mut shift, mut tilt) = (vec![0.0; ga], vec![0.0; gb]);
                let mut last = 0.0;
                for (index, &cdf) in model.cdf.iter().enumerate() {
                    shift[index / gb] += cdf - last;
                    tilt[index % gb] += cdf - last;
                    last = cdf;
                }
                // The shift's likelihood averages the tilt over the grid's own prior.
                let checks = [
                    (&shifts[c], drift.shift_prior(c), &shift, per_chunk),
                    (&tilts[c], drift.tilt_prior(c), &tilt, false),
                ];
                for (log_lik, prior, marginal, skip) in checks {
                    if skip {
                        continue;
                    }
                    let joint: Vec<f64> = log_lik.iter().zip(prior).map(|(l, p)| l + p).collect();
                    let top = joint.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let total: f64 = joint.iter().map(|j| (j - top).exp()).sum();
                    for (i, j) in joint.iter().enumerate() {
                        let direct = (j - top).exp() / total;
                        assert!(
                            (marginal[i] - direct).abs() < 1e-12,
                            "{per_chunk} {c} {i}: {} {direct}",
                            marginal[i]
                        );
                    }
                }
            }
        }
        // No labels: both likelihoods are flat.
        let centre = drift.centre_shifts(&cal);
        let mut bare = chunks[0].clone();
        bare.labelled_pos.fill(0.0);
        bare.labelled_neg.fill(0.0);
        for flat in [
            drift.log_likelihood(&cal, &bare, &centre, 0, Effect::Shift),
            drift.log_likelihood(&cal, &bare, &centre, 0, Effect::Tilt),
        ] {
            assert!(flat.iter().all(|&l| l == 0.0));
        }
    }

    #[test]
    fn tabulated_label_curves_match_the_beta_binomial_at_every_grid_point() {
        // Production's grids (241 shifts, 81 tilts), chunks from 1 to ~130,000 labels per bin
        // and bins' own sd from 0 to 2 logit: the interpolated log-likelihood against the
        // evaluated one at every (a, b) the grid asks for.
        let (cal, base, chunks) = drift_with_labelled_chunks();
        let grid = |half: f64, n: usize| Grid {
            values: (0..n)
                .map(|i| -half + 2.0 * half * i as f64 / (n - 1) as f64)
                .collect(),
            log_prior: vec![0.0; n],
        };
        let centre = base.centre_shifts(&cal);
        let mut worst: f64 = 0.0;
        let (mut tabulated, mut labelled) = (0, 0);
        for bin_sd in [0.0, 0.05, 0.5, 2.0] {
            let drift = Drift {
                shift: grid(2.5, 241),
                tilt: grid(1.0, 81),
                bin_sd,
                ..base.clone()
            };
            for scale in [0.005, 1.0, 100.0] {
                let mut stats = chunks[0].clone();
                for v in stats
                    .labelled_pos
                    .iter_mut()
                    .chain(stats.labelled_neg.iter_mut())
                    .chain(stats.counts.iter_mut())
                {
                    *v = (*v * scale).ceil();
                }
                let terms = drift.label_terms(&cal, &stats, &centre, 0);
                tabulated += terms.curves.iter().filter(|c| c.is_some()).count();
                labelled += terms.labelled.len();
                let evaluated = LabelTerms {
                    curves: terms.labelled.iter().map(|_| None).collect(),
                    ..drift.label_terms(&cal, &stats, &centre, 0)
                };
                for &a in &drift.shift.values {
                    for &b in &drift.tilt.values {
                        let got = drift.labels_ln(&terms, &stats, a, b, 0.0);
                        let want = drift.labels_ln(&evaluated, &stats, a, b, 0.0);
                        worst = worst.max((got - want).abs() / want.abs().max(1.0));
                    }
                }
            }
        }
        // Most bins are tabulated (81 of 100 here); the U-shaped ones near their kink are not.
        assert!(4 * tabulated >= 3 * labelled, "{tabulated} of {labelled}");
        assert!(worst < 1e-9, "{worst}");
    }

    #[test]
    fn each_chunk_gets_its_own_tilt_prior() {
        let (cal, mut drift, chunks) = drift_with_labelled_chunks();
        let centre = drift.centre_shifts(&cal);
        let gb = drift.tilt.values.len();
        let plain = drift.clone();
        // Chunk 0 keeps the grid's prior; chunk 1's tilt is pinned to the grid's last point.
        let mut rows = drift.tilt.log_prior.clone();
        rows.extend((0..gb).map(|i| if i + 1 == gb { 0.0 } else { f64::NEG_INFINITY }));
        drift.chunk_tilt_prior = rows;
        assert_eq!(
            drift.chunk_model(&cal, &chunks[0], &centre, 0),
            plain.chunk_model(&cal, &chunks[0], &centre, 0)
        );
        let pinned = drift.chunk_model(&cal, &chunks[1], &centre, 1);
        let mut last = 0.0;
        for (index, &cdf) in pinned.cdf.iter().enumerate() {
            if index % gb + 1 != gb {
                assert_eq!(cdf - last, 0.0, "{index}");
            }
            last = cdf;
        }
        // One finite row per chunk (-inf allowed), on both entry points.
        for bad in [
            drift.tilt.log_prior.clone(),
            vec![f64::NEG_INFINITY; 2 * gb],
            {
                let mut v = drift.chunk_tilt_prior.clone();
                v[2] = f64::NAN;
                v
            },
            {
                let mut v = drift.chunk_tilt_prior.clone();
                v[gb + 1] = f64::INFINITY;
                v
            },
        ] {
            let broken = Drift {
                chunk_tilt_prior: bad,
                ..drift.clone()
            };
            assert!(drift_shift_posteriors(&cal, &broken, &chunks).is_err());
            assert!(drift_likelihoods(&cal, &broken, &chunks, Effect::Tilt).is_err());
        }
    }

    /// Average precision of the within-bin linear model by brute force: each bin cut into
    /// `slices` slices, each slice's positives credited with the precision at its middle.
    fn ap_by_slices(pm: &[f64], nm: &[f64], c: &[f64], slices: usize) -> f64 {
        let p: f64 = pm.iter().sum();
        let (mut tp, mut total, mut area) = (0.0, 0.0, 0.0);
        for i in (0..pm.len()).rev() {
            let m = pm[i] + nm[i];
            if m == 0.0 {
                continue;
            }
            let rate = pm[i] / m;
            let slope = within_slope(rate, c[i]);
            for j in 0..slices {
                let u = (j as f64 + 0.5) / slices as f64;
                let positives = m * (rate + slope * (0.5 - u)) / slices as f64;
                let size = m / slices as f64;
                area += positives * (tp + 0.5 * positives) / (total + 0.5 * size);
                tp += positives;
                total += size;
            }
        }
        area / p
    }

    #[test]
    fn own_label_term_is_what_the_continuum_leaves_out_of_the_exact_expectation() {
        // One bin of m rows, x of them positive in every order alike (all C(m, x) placements
        // enumerated), below M rows holding T positives: the exact E[Σ_k y_k TP_k / (M + k)]
        // less the continuum's Σ_k q (T + q k) / (M + k) is P × the term.
        for (m, x, big_m, t) in [(6usize, 2usize, 4usize, 1usize), (7, 3, 0, 0), (5, 4, 9, 6)] {
            let (mut exact, mut placements) = (0.0, 0.0);
            for mask in 0u32..(1 << m) {
                if mask.count_ones() as usize != x {
                    continue;
                }
                let (mut tp, mut sum) = (t as f64, 0.0);
                for k in 1..=m {
                    if mask >> (k - 1) & 1 == 1 {
                        tp += 1.0;
                        sum += tp / (big_m + k) as f64;
                    }
                }
                exact += sum;
                placements += 1.0;
            }
            exact /= placements;
            let q = x as f64 / m as f64;
            let continuum: f64 = (1..=m)
                .map(|k| q * (t as f64 + q * k as f64) / (big_m + k) as f64)
                .sum();
            // Positives above as a bin of their own (tied: no order inside it).
            let (pm, nm) = ([x as f64, t as f64], [(m - x) as f64, (big_m - t) as f64]);
            let p = (x + t) as f64;
            let own = ap_own_label_term(&pm, &nm, Some(&[false, true])) * p;
            assert!(
                (exact - continuum - own).abs() < 1e-12,
                "{m} {x}: {exact} {continuum} {own}"
            );
        }
    }

    #[test]
    fn binned_ap_integrates_the_within_bin_model() {
        let mut s = Sampler::new(stream(21, 0));
        for case in 0..200 {
            let k = 1 + case % 12;
            let pm: Vec<f64> = (0..k).map(|_| s.uniform() * 100.0).collect();
            let mut nm: Vec<f64> = (0..k).map(|_| s.uniform() * 100.0).collect();
            // Some empty bins, and a tiny bin above a large one.
            if case % 5 == 0 {
                nm[0] = 0.0;
            }
            let mut pm = pm;
            if case % 7 == 0 && k > 1 {
                pm[k - 1] = 1e-3;
                nm[k - 1] = 1e-3;
            }
            if case % 3 == 0 && k > 1 {
                pm[0] = 0.0;
            }
            let c: Vec<f64> = (0..k).map(|_| 0.3 + 0.6 * s.uniform()).collect();
            let ap = binned_ap(&pm, &nm, &c, false, &mut s);
            // Slices must be fine next to the tiny bin, where precision changes fast.
            let slices = if case % 7 == 0 { 500_000 } else { 20_000 };
            let brute = ap_by_slices(&pm, &nm, &c, slices);
            assert!((ap - brute).abs() < 1e-7, "{case}: {ap} vs {brute}");
        }
        // Flat bins (concordance ½) and one bin: the top bin's precision is its rate throughout.
        let mut s = Sampler::new(stream(22, 0));
        assert!((binned_ap(&[30.0], &[70.0], &[0.5], false, &mut s) - 0.3).abs() < 1e-12);
        // Perfect separation in bins: 1; no positives: 0; no negatives: 1.
        assert_eq!(
            binned_ap(&[0.0, 5.0], &[5.0, 0.0], &[0.5, 0.5], false, &mut s),
            1.0
        );
        assert_eq!(
            binned_ap(&[0.0, 0.0], &[5.0, 1.0], &[0.5, 0.5], false, &mut s),
            0.0
        );
        assert_eq!(
            binned_ap(&[2.0, 3.0], &[0.0, 0.0], &[0.5, 0.5], true, &mut s),
            1.0
        );
    }

    #[test]
    fn slices_keep_each_bins_masses_and_share_out_a_realized_departure() {
        // One chunk, two bins of four slices; the upper bin's rate rises with the score.
        let slices = ScoreSlices {
            per_bin: 4,
            share: vec![0.25; 8],
            mean: vec![0.1, 0.15, 0.2, 0.25, 0.6, 0.7, 0.8, 0.9],
            span: vec![0.05; 8],
        };
        let spread = [0.08, 0.17];
        let chunk = slices.chunk(0, 2, &spread);
        let c = [0.55, 0.6];
        let mut buffer = SliceBuffer::default();
        // Population masses (at their own rates): totals kept, rates rising inside each bin.
        let (pm, nm) = ([20.0, 75.0], [80.0, 25.0]);
        chunk.split(&pm, &nm, &c, None, &mut buffer);
        assert_eq!(buffer.group, vec![0, 0, 0, 0, 1, 1, 1, 1]);
        for b in 0..2 {
            let (pos, neg): (f64, f64) = (
                buffer.pos[4 * b..4 * b + 4].iter().sum(),
                buffer.neg[4 * b..4 * b + 4].iter().sum(),
            );
            assert!((pos - pm[b]).abs() < 1e-9 && (neg - nm[b]).abs() < 1e-9);
            let rates: Vec<f64> = (4 * b..4 * b + 4)
                .map(|j| buffer.pos[j] / (buffer.pos[j] + buffer.neg[j]))
                .collect();
            assert!(rates.windows(2).all(|w| w[0] < w[1]), "{rates:?}");
            // Each slice holds its share of the bin's rows.
            for j in 4 * b..4 * b + 4 {
                assert!((buffer.pos[j] + buffer.neg[j] - 25.0).abs() < 1e-9);
            }
        }
        // The slope follows the concordance: c = ½ + β G / (4 r (1 − r)).
        let (rate, mut rates) = (0.75, Vec::new());
        let beta = chunk.slice_rates(1, rate, 0.6, &mut rates).unwrap();
        assert!((beta - 4.0 * rate * (1.0 - rate) * 0.1 / 0.17).abs() < 1e-12);
        // Realized counts 5 positives above the drawn rate's expectation: the slices get them
        // in proportion to q (1 − q), and the bin's totals stay.
        let before = buffer.pos.clone();
        let drawn = [0.2, 0.7];
        chunk.split(&[20.0, 75.0], &[80.0, 25.0], &c, Some(&drawn), &mut buffer);
        chunk.slice_rates(1, 0.7, c[1], &mut rates).unwrap();
        let weights: Vec<f64> = rates.iter().map(|q| q * (1.0 - q)).collect();
        let total: f64 = weights.iter().sum();
        for j in 0..4 {
            let expected = 25.0 * rates[j] + 5.0 * weights[j] / total;
            assert!((buffer.pos[4 + j] - expected).abs() < 1e-9, "{j}");
        }
        assert!((buffer.pos[4..].iter().sum::<f64>() - 75.0).abs() < 1e-9);
        assert!(
            (buffer.pos[..4]
                .iter()
                .zip(&before)
                .map(|(a, b)| a - b)
                .sum::<f64>())
            .abs()
                < 1e-9
        );
        // A bin without rows in the chunk stays whole.
        let empty = ScoreSlices {
            share: vec![0.0, 0.0, 0.0, 0.0, 0.25, 0.25, 0.25, 0.25],
            ..slices.clone()
        };
        empty
            .chunk(0, 2, &spread)
            .split(&pm, &nm, &c, None, &mut buffer);
        assert_eq!(buffer.pos.len(), 5);
        assert_eq!(
            (buffer.pos[0], buffer.neg[0], buffer.c[0]),
            (20.0, 80.0, 0.55)
        );
        // Bad shapes and values are refused.
        assert!(slices.check(2, 1).is_ok());
        assert!(slices.check(3, 1).is_err());
        let negative = ScoreSlices {
            span: vec![-0.1; 8],
            ..slices.clone()
        };
        assert!(negative.check(2, 1).is_err());
    }

    #[test]
    fn tied_bins_are_credited_like_scikit_learn_credits_a_tie() {
        // Every bin one score: AP is the step sum of the with-labels kernel (which equals
        // scikit-learn's average_precision_score with one bin per distinct score).
        let mut s = Sampler::new(stream(23, 0));
        for case in 0..50 {
            let k = 1 + case % 9;
            let pm: Vec<f64> = (0..k).map(|_| (s.uniform() * 20.0).floor()).collect();
            let nm: Vec<f64> = (0..k).map(|_| (s.uniform() * 20.0).floor() + 1.0).collect();
            if pm.iter().sum::<f64>() == 0.0 {
                continue;
            }
            let tied = vec![true; k];
            let ap = ap_mean(&pm, &nm, &vec![0.7; k], Some(&tied));
            let (_, step) = crate::auc::point_values(&pm, &nm).unwrap();
            assert!((ap - step).abs() < 1e-12, "{case}: {ap} vs {step}");
            // Tied bins each their own group: a bin's rows move AP alike, no spread within.
            let groups: Vec<usize> = (0..k).collect();
            let sd = ap_noise_sd(&pm, &nm, &vec![0.7; k], Some(&groups), Some(&tied));
            assert!(sd < 1e-7, "{sd}"); // rounding only
        }
    }

    #[test]
    fn binned_ap_is_close_to_the_average_precision_of_calibrated_rows() {
        // 200,000 calibrated rows in 10 equal-frequency bins, each with its measured
        // concordance: the bins' AP is within 0.002 of the rows' own (sorted, no ties).
        let (scores, labels) = calibrated(200_000, 8);
        let cal = fit(&scores, &labels, 10, 0.5).unwrap();
        let mut rows: Vec<(f64, bool)> =
            scores.iter().copied().zip(labels.iter().copied()).collect();
        rows.sort_by(|a, b| b.0.total_cmp(&a.0));
        let p = labels.iter().filter(|&&y| y).count() as f64;
        let (mut tp, mut exact) = (0.0, 0.0);
        for (rank, &(_, y)) in rows.iter().enumerate() {
            if y {
                tp += 1.0;
                exact += tp / (rank + 1) as f64 / p;
            }
        }
        let mut s = Sampler::new(stream(1, 0));
        let binned = binned_ap(&cal.pos, &cal.neg, &cal.concordance, false, &mut s);
        let flat = binned_ap(&cal.pos, &cal.neg, &vec![0.5; cal.n_bins()], false, &mut s);
        assert!((binned - exact).abs() < 0.002, "{binned} vs {exact}");
        // Without the within-bin order the bins lose most of the gap to the rows' AP.
        assert!(
            exact - flat > 5.0 * (exact - binned).abs(),
            "{flat} {binned} {exact}"
        );
    }

    #[test]
    fn ranking_offset_is_the_gap_between_the_mean_auc_and_the_auc_of_the_mean_rates() {
        let (cal, drift, chunks) = drift_with_labelled_chunks();
        let k = cal.n_bins();
        let c = cal.concordance.clone();
        let point = |v: f64| Grid {
            values: vec![v],
            log_prior: vec![0.0],
        };
        // A known movement (one grid point, no bin deviation): every draw is the same, the
        // AUC moves with the rates and nothing is taken off.
        let known = Drift {
            shift: point(0.3),
            tilt: point(0.4),
            bin_sd: 0.0,
            slope_se: vec![0.0; k],
            ..drift.clone()
        };
        let centre = known.centre_shifts(&cal);
        for (index, stats) in chunks.iter().enumerate() {
            let model = known.chunk_model(&cal, stats, &centre, index);
            let offset =
                known.ranking_offset(&cal, &model, stats, &c, (Ranking::RocAuc, None), 50, 1);
            assert!(offset.abs() < 1e-12, "{offset}");
        }
        // A movement either way (the fixture's drift): the mean AUC is above the AUC of the
        // mean rates, against a brute-force average of the same draws; reproducible.
        let centre = drift.centre_shifts(&cal);
        let bare = ChunkStats {
            labelled_pos: vec![0.0; k],
            labelled_neg: vec![0.0; k],
            ..chunks[0].clone()
        };
        let model = drift.chunk_model(&cal, &bare, &centre, 0);
        let offset =
            drift.ranking_offset(&cal, &model, &bare, &c, (Ranking::RocAuc, None), 4_000, 7);
        assert!(offset > 0.0, "{offset}");
        assert_eq!(
            offset,
            drift.ranking_offset(&cal, &model, &bare, &c, (Ranking::RocAuc, None), 4_000, 7)
        );
        let mut s = Sampler::new(stream(11, 0));
        let (mut sum, mut square, mut mean) = (0.0, 0.0, vec![0.0; k]);
        let auc_at = |rates: &[f64], s: &mut Sampler| {
            let pm: Vec<f64> = (0..k).map(|i| bare.counts[i] * rates[i]).collect();
            let nm: Vec<f64> = (0..k).map(|i| bare.counts[i] - pm[i]).collect();
            binned_auc(&pm, &nm, &c, None, s)
        };
        let n = 20_000;
        for _ in 0..n {
            let mut rates: Vec<f64> = (0..k).map(|i| cal.rate_mean(i)).collect();
            let mut class_s = Sampler::new(stream(9, 1));
            drift.drift_rates(
                &model,
                &bare,
                &mut s,
                &mut rates,
                &mut vec![0.0; k],
                (&mut class_s, &mut Vec::new()),
            );
            mean.iter_mut()
                .zip(&rates)
                .for_each(|(m, r)| *m += r / n as f64);
            let value = auc_at(&rates, &mut s);
            sum += value;
            square += value * value;
        }
        let brute = sum / n as f64 - auc_at(&mean, &mut s);
        // Within 4 Monte Carlo sds of the two estimates of the gap (the mean AUC's).
        let sd = (square / n as f64 - (sum / n as f64).powi(2)).sqrt();
        let tolerance = 4.0 * sd * (1.0 / 4_000.0 + 1.0 / n as f64).sqrt();
        assert!(
            (offset - brute).abs() < tolerance,
            "{offset} {brute} {tolerance}"
        );
    }

    #[test]
    fn each_chunk_gets_its_own_shift_prior() {
        let (cal, mut drift, chunks) = drift_with_labelled_chunks();
        let g = drift.shift.values.len();
        // Chunk 0: the shift is known to be the grid's 30th point; chunk 1: the grid's prior.
        let mut rows = vec![f64::NEG_INFINITY; g];
        rows[30] = 0.0;
        rows.extend_from_slice(&drift.shift.log_prior);
        drift.chunk_shift_prior = rows;
        let shifts = drift_shift_posteriors(&cal, &drift, &chunks).unwrap();
        let step = drift.shift.values[1] - drift.shift.values[0];
        assert!((shifts[0].0 - drift.shift.values[30]).abs() < 1e-12);
        assert!((shifts[0].1 - step / 12f64.sqrt()).abs() < 1e-12);
        let shared = Drift {
            chunk_shift_prior: Vec::new(),
            chunk_tilt_prior: Vec::new(),
            ..drift.clone()
        };
        assert_eq!(
            drift_shift_posteriors(&cal, &shared, &chunks).unwrap()[1],
            shifts[1]
        );
        // One row per chunk, each with a finite point.
        drift.chunk_shift_prior.truncate(g);
        assert!(drift_shift_posteriors(&cal, &drift, &chunks).is_err());
        drift.chunk_shift_prior = vec![f64::NEG_INFINITY; 2 * g];
        assert!(drift_shift_posteriors(&cal, &drift, &chunks).is_err());
        drift.chunk_shift_prior[3] = f64::NAN;
        assert!(drift_shift_posteriors(&cal, &drift, &chunks).is_err());
    }

    #[test]
    fn expected_logits_add_the_pinned_shift_and_tilt() {
        let (cal, mut drift, chunks) = drift_with_labelled_chunks();
        let (ga, gb) = (drift.shift.values.len(), drift.tilt.values.len());
        // Every chunk's shift pinned at the 30th point and its tilt at the grid's last one.
        let mut shift_rows = vec![f64::NEG_INFINITY; ga * chunks.len()];
        let mut tilt_rows = vec![f64::NEG_INFINITY; gb * chunks.len()];
        for c in 0..chunks.len() {
            shift_rows[c * ga + 30] = 0.0;
            tilt_rows[c * gb + gb - 1] = 0.0;
        }
        drift.chunk_shift_prior = shift_rows;
        drift.chunk_tilt_prior = tilt_rows;
        let (a, b) = (drift.shift.values[30], drift.tilt.values[gb - 1]);
        let centre = drift.centre_shifts(&cal);
        let expected = drift_expected_logits(&cal, &drift, &chunks).unwrap();
        assert_eq!(expected.len(), chunks.len());
        for (c, row) in expected.iter().enumerate() {
            let model = drift.chunk_model(&cal, &chunks[c], &centre, c);
            for (i, value) in row.iter().enumerate() {
                let ell = logit(cal.rate_mean(i));
                let want = ell + model.offset[i] + a + b * (ell - drift.centre);
                assert!((value - want).abs() < 1e-12, "{c} {i} {value} {want}");
            }
        }
        // One prior row per chunk.
        drift.chunk_tilt_prior.truncate(gb);
        assert!(drift_expected_logits(&cal, &drift, &chunks).is_err());
    }

    #[test]
    fn each_chunk_gets_its_own_bin_sd() {
        let (cal, drift, chunks) = drift_with_labelled_chunks();
        let centre = drift.centre_shifts(&cal);
        // Chunk 1's scores moved: its bins deviate by 0.4 on their own; chunk 0 keeps bin_sd.
        let moved = Drift {
            chunk_bin_sd: vec![drift.bin_sd, 0.4],
            chunk_centre_sd: Vec::new(),
            ..drift.clone()
        };
        let same = |a: &ChunkModel, b: &ChunkModel| a.sd == b.sd && a.cdf == b.cdf;
        assert!(same(
            &moved.chunk_model(&cal, &chunks[0], &centre, 0),
            &drift.chunk_model(&cal, &chunks[0], &centre, 0)
        ));
        let wide = moved.chunk_model(&cal, &chunks[1], &centre, 1);
        let plain = drift.chunk_model(&cal, &chunks[1], &centre, 1);
        for (i, (w, p)) in wide.sd.iter().zip(&plain.sd).enumerate() {
            // sd² = bin sd² + the within-bin slope's part, which both share.
            let slope_part = p * p - drift.bin_sd * drift.bin_sd;
            assert!(
                (w * w - (0.16 + slope_part)).abs() < 1e-12,
                "bin {i}: {w} {p}"
            );
        }
        // The labels say less about the common shift when each bin may deviate more.
        let spread = |d: &Drift| drift_shift_posteriors(&cal, d, &chunks).unwrap()[1].1;
        assert!(spread(&moved) > spread(&drift));
        assert_eq!(
            drift_likelihoods(&cal, &moved, &chunks, Effect::Shift).unwrap()[0],
            drift_likelihoods(&cal, &drift, &chunks, Effect::Shift).unwrap()[0]
        );
        // One finite value >= 0 per chunk.
        for bad in [
            vec![0.1],
            vec![0.1, -0.1],
            vec![0.1, f64::NAN],
            vec![0.1, f64::INFINITY],
        ] {
            let broken = Drift {
                chunk_bin_sd: bad,
                chunk_centre_sd: Vec::new(),
                ..drift.clone()
            };
            assert!(drift_shift_posteriors(&cal, &broken, &chunks).is_err());
            assert!(drift_likelihoods(&cal, &broken, &chunks, Effect::Shift).is_err());
        }
    }

    #[test]
    fn each_bin_gets_its_further_variance() {
        let (cal, drift, chunks) = drift_with_labelled_chunks();
        let centre = drift.centre_shifts(&cal);
        let k = cal.n_bins();
        // The last bin deviates further on its own, in every chunk; the others as before.
        let mut extra = vec![0.0; k];
        extra[k - 1] = 0.25;
        let uneven = Drift {
            bin_extra_var: extra.clone(),
            ..drift.clone()
        };
        for (c, chunk) in chunks.iter().enumerate() {
            let wide = uneven.chunk_model(&cal, chunk, &centre, c);
            let plain = drift.chunk_model(&cal, chunk, &centre, c);
            let bins = extra.iter().zip(wide.sd.iter().zip(&plain.sd));
            for (i, (e, (w, p))) in bins.enumerate() {
                assert!((w * w - (p * p + e)).abs() < 1e-12, "bin {i}: {w} {p}");
            }
        }
        // One finite value >= 0 per bin, or none.
        for bad in [
            vec![0.1],
            vec![-0.1; k],
            vec![f64::NAN; k],
            vec![f64::INFINITY; k],
        ] {
            let broken = Drift {
                bin_extra_var: bad,
                ..drift.clone()
            };
            assert!(drift_shift_posteriors(&cal, &broken, &chunks).is_err());
        }
    }

    #[test]
    fn rate_prior_is_two_rows_centred_on_the_bin_or_the_reference_rate() {
        let (scores, labels) = calibrated(5_000, 3);
        let cal = fit(&scores, &labels, 10, 0.5).unwrap();
        let (p, n): (f64, f64) = (cal.pos.iter().sum(), cal.neg.iter().sum());
        for i in 0..cal.n_bins() {
            let (a, b) = cal.rate_prior(i);
            assert!((a + b - 2.0).abs() < 1e-12);
            assert!((a / 2.0 - (p + 1.0) / (p + n + 2.0)).abs() < 1e-12);
        }
        // A bin without positives gets a fraction of a positive, not half of one.
        let empty = Calibration {
            pos: vec![0.0, 10.0],
            neg: vec![990.0, 0.0],
            ..cal.clone()
        };
        assert!((empty.rate_mean(0) - (2.0 * 11.0 / 1002.0) / 992.0).abs() < 1e-15);
        // With centres, each bin's own.
        let centred = Calibration {
            rate_centre: vec![0.001, 0.9],
            ..empty.clone()
        };
        let (a, b) = centred.rate_prior(1);
        assert!((a - 1.8).abs() < 1e-15 && (b - 0.2).abs() < 1e-15);
        assert!((centred.rate_mean(0) - 0.002 / 992.0).abs() < 1e-15);
        assert!((centred.rate_mean(1) - 11.8 / 12.0).abs() < 1e-15);
    }

    #[test]
    fn fit_makes_equal_frequency_bins_split_at_the_threshold() {
        let (scores, labels) = calibrated(10_000, 1);
        let cal = fit(&scores, &labels, 10, 0.5).unwrap();
        assert!(cal.edges.contains(&0.5));
        assert!(cal.edges.len() == 10 || cal.edges.len() == 9);
        for i in 0..cal.n_bins() {
            let (low, high) = cal.bounds(i);
            assert!(high <= 0.5 || low >= 0.5, "bin {i} mixes predictions");
            let n = cal.pos[i] + cal.neg[i];
            // About a tenth each, except the two halves of the bin cut by the threshold.
            assert!(n <= 1001.0, "bin {i} holds {n}");
        }
        assert_eq!(cal.pos.iter().chain(&cal.neg).sum::<f64>(), 10_000.0);
        // Selection agrees with sorting.
        let mut sorted = scores.clone();
        sorted.sort_by(f64::total_cmp);
        let q1 = sorted[999];
        assert!(cal.edges.contains(&q1));
        // Calibrated scores still rank within a bin: concordance above one half.
        let mean_c: f64 = cal.concordance.iter().sum::<f64>() / cal.n_bins() as f64;
        assert!(mean_c > 0.5 && mean_c < 0.6, "{mean_c}");
        assert!(fit(&[1.5], &[true], 10, 0.5).is_err());
        assert!(fit(&[0.5], &[true, false], 10, 0.5).is_err());
    }

    #[test]
    fn population_estimate_is_centred_on_the_truth_and_reproducible() {
        let (ref_scores, ref_labels) = calibrated(50_000, 2);
        let cal = fit(&ref_scores, &ref_labels, 10, 0.5).unwrap();
        let (scores, labels) = calibrated(50_000, 3);
        let chunks = chunk_stats(&cal, &scores, &[0, 25_000], false, None).unwrap();
        assert_eq!(chunks[0].counts.iter().sum::<f64>(), 25_000.0);
        let settings = Settings {
            target: Target::Population,
            mode: Mode::Reference,
            within_bin: true,
            want_auc: true,
            want_ap: false,
            zero_division: 0.0,
        };
        let metrics = [Metric::Accuracy];
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    estimate(&cal, &chunks, &metrics, settings, None, None, 4000, 9).unwrap()
                })
        };
        let out = run(1);
        assert_eq!(out, run(2));
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
        // Realized accuracy of chunk 0 at threshold 0.5: close to the estimate.
        let correct = scores[..25_000]
            .iter()
            .zip(&labels)
            .filter(|(s, y)| (**s > 0.5) == **y)
            .count() as f64
            / 25_000.0;
        assert!((mean(&out[..4000]) - correct).abs() < 0.015);
        let auc = mean(&out[4000..8000]);
        assert!(auc > 0.7 && auc < 0.85, "{auc}");
        for v in &out {
            assert!((0.0..=1.0).contains(v));
        }
    }

    #[test]
    fn mean_preserving_logit_gives_back_the_average_rate() {
        // A skewed three-point recalibration and a symmetric wide one, at rates from tiny to
        // near one, on both sides of the centre.
        let skewed = [(-1.5, 0.2, 0.2), (0.0, -0.1, 0.5), (0.8, 0.3, 0.3)];
        let wide = [(-2.0, 0.0, 0.25), (0.0, 0.0, 0.5), (2.0, 0.0, 0.25)];
        for points in [&skewed[..], &wide[..]] {
            for target in [1e-9, 0.01, 0.3, 0.5, 0.93, 1.0 - 1e-9] {
                for spread in [-2.0, 0.0, 1.5] {
                    let m = mean_preserving_logit(target, points, spread);
                    let average: f64 = points
                        .iter()
                        .map(|&(a, b, w)| w * expit(m + a + b * spread))
                        .sum();
                    assert!(
                        // Relative to the smaller tail, down to the spacing of doubles near 1.
                        (average - target).abs() <= (1e-10 * target.min(1.0 - target)).max(4e-16),
                        "{target} {spread}: {average}"
                    );
                }
            }
        }
        // Averaging over a symmetric spread pulls rates towards ½: the centre moves out.
        assert!(mean_preserving_logit(0.9, &wide, 0.0) > logit(0.9));
        assert!((mean_preserving_logit(0.5, &wide, 0.0)).abs() < 1e-12);
        // No spread: the rate's own logit.
        let point = [(0.0, 0.0, 1.0)];
        assert!((mean_preserving_logit(0.2, &point, 1.0) - logit(0.2)).abs() < 1e-12);
    }

    #[test]
    fn a_chunks_further_spread_is_centred_to_give_back_the_reference_rates() {
        // Each bin's centring over the tilt's prior and the shift's convolved with N(0, sd²)
        // on the grid, summed over every pair of grid points here (no pruning); sd 0 is the
        // periods' own centring, and a chunk with a further spread gets its own through its
        // model.
        let (cal, mut drift, chunks) = drift_with_labelled_chunks();
        let weights = |g: &Grid| -> Vec<f64> {
            let w: Vec<f64> = g.log_prior.iter().map(|p| p.exp()).collect();
            let total: f64 = w.iter().sum();
            w.iter().map(|v| v / total).collect()
        };
        let (wa, wb) = (weights(&drift.shift), weights(&drift.tilt));
        let a = &drift.shift.values;
        assert!(drift.shift.step() < 0.3);
        for sd in [0.3, 1.0] {
            let kernel = |to: f64, from: f64| (-0.5 * ((to - from) / sd).powi(2)).exp();
            let norm: f64 = a
                .iter()
                .map(|&to| {
                    a.iter()
                        .zip(&wa)
                        .map(|(&f, w)| w * kernel(to, f))
                        .sum::<f64>()
                })
                .sum();
            let centre = drift.spread_centre_shifts(&cal, sd);
            for (i, mu) in centre.iter().enumerate() {
                let r = cal.rate_mean(i);
                let spread = logit(r) - drift.centre;
                let mut average = 0.0;
                for &to in a {
                    let pa: f64 = a.iter().zip(&wa).map(|(&f, w)| w * kernel(to, f)).sum();
                    for (&b, pb) in drift.tilt.values.iter().zip(&wb) {
                        average += pa / norm * pb * expit(logit(r) + mu + to + b * spread);
                    }
                }
                assert!((average - r).abs() < 1e-9, "{sd} {i}: {average} {r}");
            }
        }
        // Under half a step: the periods' own centring.
        assert_eq!(
            drift.spread_centre_shifts(&cal, 0.4 * drift.shift.step()),
            drift.centre_shifts(&cal)
        );
        let own = drift.centre_shifts(&cal);
        let wide = drift.spread_centre_shifts(&cal, 1.0);
        drift.chunk_centre_sd = vec![0.0; chunks.len()];
        drift.chunk_centre_sd[1] = 1.0;
        drift.check_chunks(chunks.len()).unwrap();
        let models: Vec<ChunkModel> = (0..2)
            .map(|c| drift.chunk_model(&cal, &chunks[c], &own, c))
            .collect();
        drift.chunk_centre_sd.clear();
        for (c, centring) in [(0, &own), (1, &wide)] {
            let plain = drift.chunk_model(&cal, &chunks[c], &own, c);
            for i in 0..cal.n_bins() {
                let moved = models[c].offset[i] - plain.offset[i];
                assert!((moved - (centring[i] - own[i])).abs() < 1e-12, "{c} {i}");
            }
        }
        // One finite sd >= 0 per chunk, or none.
        for bad in [
            vec![0.1],
            vec![-0.1; chunks.len()],
            vec![f64::NAN; chunks.len()],
        ] {
            drift.chunk_centre_sd = bad;
            assert!(drift.check_chunks(chunks.len()).is_err());
        }
    }

    #[test]
    fn fit_from_counts_equals_fit_on_rows() {
        let (scores, labels) = calibrated(20_000, 5);
        // Rounded scores: many ties, as in real data.
        let scores: Vec<f64> = scores.iter().map(|s| (s * 200.0).round() / 200.0).collect();
        let rows = fit(&scores, &labels, 10, 0.5).unwrap();
        let u = crate::binning::unique_scores(&scores, &labels, None).unwrap();
        let counts = fit_from_counts(&u.values, &u.pos, &u.neg, 10, 0.5).unwrap();
        assert_eq!(rows, counts);
        assert!(fit_from_counts(&u.values, &u.pos, &u.neg, 0, 0.5).is_err());
        assert!(fit_from_counts(&[0.2, 0.1], &[1.0, 1.0], &[0.0, 0.0], 2, 0.5).is_err());
        assert!(fit_from_counts(&[0.2], &[0.5], &[0.0], 2, 0.5).is_err());
    }

    /// Three classes, one bin per predicted class: bins (0, 1/3], (1/3, 2/3], (2/3, 1].
    fn three_class_model() -> (Calibration, ErrorModel) {
        let cal = Calibration::from_parts(
            vec![1.0 / 3.0, 2.0 / 3.0],
            vec![80.0, 60.0, 90.0],
            vec![20.0, 40.0, 10.0],
            vec![0.5; 3],
            vec![0.0; 3],
            Vec::new(),
            Vec::new(),
            1.0,
        )
        .unwrap();
        let errors = ErrorModel {
            n_classes: 3,
            predicted: vec![0, 1, 2],
            alpha: vec![0.0, 15.0, 5.5, 30.0, 0.0, 10.5, 4.5, 5.5, 0.0],
            move_share: Vec::new(),
        };
        (cal, errors)
    }

    /// The three-class model learned from 100 times the rows, so that a test's draws' noise is
    /// mostly the moves it draws.
    fn large_three_class_model() -> (Calibration, ErrorModel) {
        let (small, mut errors) = three_class_model();
        let scaled = |v: &[f64]| v.iter().map(|x| 100.0 * x).collect::<Vec<f64>>();
        let cal = Calibration {
            pos: scaled(&small.pos),
            neg: scaled(&small.neg),
            ..small
        };
        errors.alpha = scaled(&errors.alpha);
        (cal, errors)
    }

    /// A rayon pool of `threads` threads, to check that results do not depend on them.
    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// Population target, reference calibration, nothing within bins or ranked.
    fn population_settings() -> Settings {
        Settings {
            target: Target::Population,
            mode: Mode::Reference,
            within_bin: false,
            want_auc: false,
            want_ap: false,
            zero_division: 0.0,
        }
    }

    /// A drift of [`three_class_model`]'s bins that moves nothing (every grid a point at 0).
    fn still_three_bin_drift() -> Drift {
        let point = Grid {
            values: vec![0.0],
            log_prior: vec![0.0],
        };
        Drift {
            shift: point.clone(),
            tilt: point,
            centre: 0.0,
            bin_sd: 0.0,
            slope: vec![0.0; 3],
            slope_se: vec![0.0; 3],
            ref_mean: vec![0.2, 0.5, 0.9],
            chunk_shift_prior: Vec::new(),
            chunk_tilt_prior: Vec::new(),
            chunk_bin_sd: Vec::new(),
            chunk_centre_sd: Vec::new(),
            bin_extra_var: Vec::new(),
            class_shift: None,
        }
    }

    /// A three-bin chunk of these row counts, nothing known.
    fn unlabelled_chunk(counts: [f64; 3]) -> ChunkStats {
        ChunkStats {
            counts: counts.to_vec(),
            mean_score: vec![0.2, 0.5, 0.9],
            perfect_concordance: vec![0.5; 3],
            labelled_pos: vec![0.0; 3],
            labelled_neg: vec![0.0; 3],
            label_move: vec![0.0; 3],
            label_move_var: vec![0.0; 3],
            spread: vec![0.0; 3],
            tie_factor: vec![1.0; 3],
        }
    }

    #[test]
    fn multiclass_estimate_counts_known_rows_and_ignores_thread_count() {
        let (cal, errors) = three_class_model();
        // Chunk 0: nothing known. Chunk 1: every row known (bin 0: 5 right, 2 wrong of class
        // 2; bin 1: 3 right, 1 wrong of class 0; bin 2: 4 right).
        let open = unlabelled_chunk([7.0, 4.0, 4.0]);
        let known = ChunkStats {
            labelled_pos: vec![5.0, 3.0, 4.0],
            labelled_neg: vec![2.0, 1.0, 0.0],
            ..open.clone()
        };
        let known_errors = vec![
            vec![0.0; 9],
            vec![0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ];
        let metrics = [
            MulticlassMetric::Accuracy,
            MulticlassMetric::PerClass(crate::metrics::ClassMetric::Recall, Average::Class(2)),
        ];
        let settings = Settings {
            target: Target::Realized,
            mode: Mode::Reference,
            within_bin: false,
            want_auc: false,
            want_ap: false,
            zero_division: 0.0,
        };
        let chunks = [open, known];
        let run = |threads: usize| {
            pool(threads).install(|| {
                estimate_multiclass(
                    &cal,
                    &chunks,
                    &errors,
                    &known_errors,
                    &[],
                    &[],
                    &metrics,
                    settings,
                    None,
                    3000,
                    4,
                )
                .unwrap()
            })
        };
        let out = run(1);
        assert_eq!(out, run(2));
        // Fully known chunk: accuracy 12/15, recall of class 2 = 4 / (4 + 2), every draw.
        let (accuracy, recall) = (&out[6000..9000], &out[9000..12000]);
        assert!(accuracy.iter().all(|&v| (v - 12.0 / 15.0).abs() < 1e-12));
        assert!(recall.iter().all(|&v| (v - 4.0 / 6.0).abs() < 1e-12));
        // Unknown chunk: realized accuracies are multiples of 1/15 around the rates' 0.77.
        let mean = out[..3000].iter().sum::<f64>() / 3000.0;
        assert!((mean - 0.77).abs() < 0.03, "{mean}");
        assert!(
            out[..3000]
                .iter()
                .all(|v| ((v * 15.0) - (v * 15.0).round()).abs() < 1e-9)
        );
        // Known errors that do not add up to the bins' known wrong rows are refused.
        let bad = vec![vec![0.0; 9], vec![0.0; 9]];
        let err = estimate_multiclass(
            &cal,
            &chunks,
            &errors,
            &bad,
            &[],
            &[],
            &metrics,
            settings,
            None,
            10,
            1,
        );
        assert!(err.is_err());
        let wrong_class = ErrorModel {
            predicted: vec![0, 1, 3],
            ..errors.clone()
        };
        assert!(
            estimate_multiclass(
                &cal,
                &chunks,
                &wrong_class,
                &known_errors,
                &[],
                &[],
                &metrics,
                settings,
                None,
                10,
                1
            )
            .is_err()
        );
    }

    #[test]
    fn each_chunk_can_have_its_own_error_parameters() {
        let (cal, errors) = three_class_model();
        let chunks = [
            unlabelled_chunk([700.0, 400.0, 400.0]),
            unlabelled_chunk([500.0, 500.0, 500.0]),
        ];
        let metrics = [MulticlassMetric::PerClass(
            crate::metrics::ClassMetric::Recall,
            Average::Class(2),
        )];
        let tilts = vec![vec![0.0, 0.0, 0.0, 0.1, 0.1, 0.1]; 2];
        let run = |errors: &ErrorModel, tilts: &[Vec<f64>], threads: usize| {
            pool(threads).install(|| {
                estimate_multiclass(
                    &cal,
                    &chunks,
                    errors,
                    &[vec![0.0; 9], vec![0.0; 9]],
                    tilts,
                    &[],
                    &metrics,
                    population_settings(),
                    None,
                    2000,
                    3,
                )
            })
        };
        // The shared parameters repeated per chunk: the same draws, with a tilt or without.
        let repeated = ErrorModel {
            alpha: errors.alpha.repeat(2),
            ..errors.clone()
        };
        for t in [&tilts[..], &[]] {
            assert_eq!(run(&errors, t, 1).unwrap(), run(&repeated, t, 1).unwrap());
        }
        // The second chunk's errors in the bins predicting 0 and 1 all class 2: its class-2
        // recall falls, the first chunk's stays as it was, whatever the thread count.
        let mut own = repeated.clone();
        own.alpha[9..18].copy_from_slice(&[0.0, 0.01, 20.0, 0.01, 0.0, 40.0, 4.5, 5.5, 0.0]);
        let shared = run(&errors, &tilts, 1).unwrap();
        let moved = run(&own, &tilts, 1).unwrap();
        assert_eq!(moved, run(&own, &tilts, 2).unwrap());
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert_eq!(moved[..2000], shared[..2000]);
        assert!(mean(&moved[2000..]) < mean(&shared[2000..]) - 0.1);
        // Neither one set nor one per chunk: refused.
        let bad = ErrorModel {
            alpha: errors.alpha.repeat(3),
            ..errors.clone()
        };
        assert!(run(&bad, &tilts, 1).is_err());
    }

    #[test]
    fn a_common_tilt_moves_every_bins_errors_and_ignores_thread_count() {
        let (cal, errors) = three_class_model();
        let chunk = unlabelled_chunk([700.0, 400.0, 400.0]);
        let metrics = [MulticlassMetric::PerClass(
            crate::metrics::ClassMetric::Recall,
            Average::Class(2),
        )];
        let settings = population_settings();
        let run = |tilts: &[Vec<f64>], threads: usize| {
            pool(threads).install(|| {
                estimate_multiclass(
                    &cal,
                    std::slice::from_ref(&chunk),
                    &errors,
                    &[vec![0.0; 9]],
                    tilts,
                    &[],
                    &metrics,
                    settings,
                    None,
                    4000,
                    9,
                )
                .unwrap()
            })
        };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let plain = run(&[], 1);
        // No tilt at all (means and sds 0): the same Dirichlet, other random numbers.
        let still = run(&[vec![0.0; 6]], 1);
        assert!((mean(&plain) - mean(&still)).abs() < 0.01);
        // Errors pushed towards class 2 in every bin: more rows really of class 2, lower recall.
        let towards = vec![0.0, 0.0, 2.0, 0.0, 0.0, 0.3];
        let tilted = run(std::slice::from_ref(&towards), 1);
        assert_eq!(tilted, run(std::slice::from_ref(&towards), 2));
        assert!(
            mean(&tilted) < mean(&plain) - 0.1,
            "{} {}",
            mean(&tilted),
            mean(&plain)
        );
        // Malformed tilts are refused.
        for bad in [
            vec![0.0; 5],
            vec![0.0, 0.0, 0.0, 0.0, -1.0, 0.0],
            vec![f64::NAN; 6],
        ] {
            assert!(
                estimate_multiclass(
                    &cal,
                    std::slice::from_ref(&chunk),
                    &errors,
                    &[vec![0.0; 9]],
                    &[bad],
                    &[],
                    &metrics,
                    settings,
                    None,
                    10,
                    1
                )
                .is_err()
            );
        }
    }

    #[test]
    fn a_class_shift_moves_its_own_bins_only_and_zero_is_none() {
        let (cal, errors) = three_class_model();
        let chunk = unlabelled_chunk([700.0, 400.0, 400.0]);
        let still = still_three_bin_drift();
        let shifted = |offset: [f64; 3], sd: [f64; 3]| Drift {
            class_shift: Some(ClassShift {
                groups: errors.predicted.clone(),
                n_groups: 3,
                offset: offset.to_vec(),
                sd: sd.to_vec(),
                move_sd: 0.0,
                move_loading: Vec::new(),
                move_factor: Vec::new(),
            }),
            ..still.clone()
        };
        let metrics = [
            MulticlassMetric::PerClass(crate::metrics::ClassMetric::Precision, Average::Class(0)),
            MulticlassMetric::PerClass(crate::metrics::ClassMetric::Precision, Average::Class(1)),
        ];
        let settings = population_settings();
        let run = |drift: &Drift| {
            estimate_multiclass(
                &cal,
                std::slice::from_ref(&chunk),
                &errors,
                &[vec![0.0; 9]],
                &[],
                &[],
                &metrics,
                settings,
                Some(drift),
                4000,
                5,
            )
            .unwrap()
        };
        let plain = run(&still);
        assert_eq!(plain, run(&shifted([0.0; 3], [0.0; 3])));
        let sd = |v: &[f64]| {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64).sqrt()
        };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        // Class 0's bin moves by +1 logit: its precision rises (0.80 -> 0.92), class 1's stays.
        let up = run(&shifted([1.0, 0.0, 0.0], [0.0; 3]));
        assert!(mean(&up[..4000]) > mean(&plain[..4000]) + 0.08);
        assert!((mean(&up[4000..]) - mean(&plain[4000..])).abs() < 0.01);
        // A spread of class 1's shift widens its precision, not class 0's.
        let wide = run(&shifted([0.0; 3], [0.0, 0.8, 0.0]));
        assert!(sd(&wide[4000..]) > 2.0 * sd(&plain[4000..]));
        assert!((sd(&wide[..4000]) / sd(&plain[..4000]) - 1.0).abs() < 0.1);
        // A malformed class shift is refused.
        let mut bad = shifted([0.0; 3], [0.0; 3]);
        if let Some(class) = bad.class_shift.as_mut() {
            class.sd[1] = -1.0;
        }
        assert!(
            estimate_multiclass(
                &cal,
                std::slice::from_ref(&chunk),
                &errors,
                &[vec![0.0; 9]],
                &[],
                &[],
                &metrics,
                settings,
                Some(&bad),
                10,
                1
            )
            .is_err()
        );
    }

    #[test]
    fn a_tilt_correlated_with_its_class_shift_steadies_the_class_recall() {
        let (cal, errors) = large_three_class_model();
        let chunk = unlabelled_chunk([700.0, 400.0, 400.0]);
        // Class 2's predictions' correct rate and the errors' share of class 2 both move by
        // 0.8 logit (sd): more rows of class 2 make both more right predictions of 2 and more
        // mistakes that are 2, so its recall moves less than either.
        let drift = Drift {
            class_shift: Some(ClassShift {
                groups: errors.predicted.clone(),
                n_groups: 3,
                offset: vec![0.0; 3],
                sd: vec![0.0, 0.0, 0.8],
                move_sd: 0.0,
                move_loading: Vec::new(),
                move_factor: Vec::new(),
            }),
            ..still_three_bin_drift()
        };
        let tilt = vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.8];
        let metrics = [MulticlassMetric::PerClass(
            crate::metrics::ClassMetric::Recall,
            Average::Class(2),
        )];
        let settings = population_settings();
        let run = |correlation: &[f64], threads: usize| {
            pool(threads).install(|| {
                estimate_multiclass(
                    &cal,
                    std::slice::from_ref(&chunk),
                    &errors,
                    &[vec![0.0; 9]],
                    std::slice::from_ref(&tilt),
                    correlation,
                    &metrics,
                    settings,
                    Some(&drift),
                    4000,
                    13,
                )
            })
        };
        let sd = |v: &[f64]| {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64).sqrt()
        };
        let apart = run(&[], 1).unwrap();
        // Correlation 0 draws the same random numbers as none.
        assert_eq!(apart, run(&[0.0; 3], 1).unwrap());
        let together = run(&[0.0, 0.0, 0.9], 1).unwrap();
        assert_eq!(together, run(&[0.0, 0.0, 0.9], 2).unwrap());
        assert!(
            sd(&together) < 0.9 * sd(&apart),
            "{} {}",
            sd(&together),
            sd(&apart)
        );
        // Opposite moves make it swing more.
        let opposite = run(&[0.0, 0.0, -0.9], 1).unwrap();
        assert!(
            sd(&opposite) > 1.1 * sd(&apart),
            "{} {}",
            sd(&opposite),
            sd(&apart)
        );
        for bad in [vec![0.5; 2], vec![0.0, 0.0, 1.5], vec![0.0, f64::NAN, 0.0]] {
            assert!(run(&bad, 1).is_err());
        }
    }

    #[test]
    fn a_class_move_makes_its_predictions_right_and_its_mistakes_together() {
        let (cal, errors) = large_three_class_model();
        let chunk = unlabelled_chunk([700.0, 400.0, 400.0]);
        // Bin i moves by e_k - Σⱼ wᵢⱼ eⱼ, w its error shares.
        let mut loading = vec![0.0; 9];
        for i in 0..3 {
            let row = &errors.alpha[i * 3..(i + 1) * 3];
            let total: f64 = row.iter().sum();
            for j in 0..3 {
                loading[i * 3 + j] = f64::from(u8::from(i == j)) - row[j] / total;
            }
        }
        let factored = |move_sd: f64, move_loading: Vec<f64>, move_factor: Vec<f64>| Drift {
            class_shift: Some(ClassShift {
                groups: errors.predicted.clone(),
                n_groups: 3,
                offset: vec![0.0; 3],
                sd: vec![0.0; 3],
                move_sd,
                move_loading,
                move_factor,
            }),
            ..still_three_bin_drift()
        };
        let moving = |move_sd: f64, move_loading: Vec<f64>| factored(move_sd, move_loading, vec![]);
        let metrics = [
            MulticlassMetric::PerClass(crate::metrics::ClassMetric::Precision, Average::Class(2)),
            MulticlassMetric::PerClass(crate::metrics::ClassMetric::Recall, Average::Class(2)),
        ];
        let n = 4000;
        let run = |drift: &Drift, tilts: &[Vec<f64>], threads: usize| {
            pool(threads).install(|| {
                estimate_multiclass(
                    &cal,
                    std::slice::from_ref(&chunk),
                    &errors,
                    &[vec![0.0; 9]],
                    tilts,
                    &[],
                    &metrics,
                    population_settings(),
                    Some(drift),
                    n,
                    17,
                )
            })
        };
        let still_tilt = [vec![0.0; 6]];
        let plain = run(&moving(0.0, Vec::new()), &still_tilt, 1).unwrap();
        // No sd, or no loading, is no move: the same random numbers as none.
        assert_eq!(
            plain,
            run(&moving(0.0, loading.clone()), &still_tilt, 1).unwrap()
        );
        assert_eq!(
            plain,
            run(&moving(0.5, Vec::new()), &still_tilt, 1).unwrap()
        );
        let moved = run(&moving(0.5, loading.clone()), &still_tilt, 1).unwrap();
        assert_eq!(
            moved,
            run(&moving(0.5, loading.clone()), &still_tilt, 2).unwrap()
        );
        // A chunk's factor in place of the sd: 0.5 I is the same moves from the same normals.
        let diagonal = (0..9).map(|i| if i % 4 == 0 { 0.5 } else { 0.0 }).collect();
        let by_factor = factored(0.0, loading.clone(), diagonal);
        assert_eq!(moved, run(&by_factor, &still_tilt, 1).unwrap());
        // A factor that ties class 2's move to class 0's (the label shift of a chunk whose
        // rows of 2 came at the expense of 0's) moves the same draws, apart from the rest.
        let tied = vec![0.5, 0.0, 0.0, 0.0, 0.5, 0.0, -0.5, 0.0, 0.1];
        let tied_moves = run(
            &factored(0.0, loading.clone(), tied.clone()),
            &still_tilt,
            1,
        );
        assert_ne!(moved, tied_moves.clone().unwrap());
        assert_eq!(
            tied_moves.unwrap(),
            run(&factored(0.0, loading.clone(), tied), &still_tilt, 2).unwrap()
        );
        for bad in [vec![0.5; 4], vec![f64::NAN; 9]] {
            assert!(run(&factored(0.0, loading.clone(), bad), &still_tilt, 1).is_err());
        }
        let correlation = |v: &[f64]| {
            let (x, y) = v.split_at(n);
            let mean = |u: &[f64]| u.iter().sum::<f64>() / n as f64;
            let (mx, my) = (mean(x), mean(y));
            let cov: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
            let var = |u: &[f64], m: f64| u.iter().map(|a| (a - m) * (a - m)).sum::<f64>();
            cov / (var(x, mx) * var(y, my)).sqrt()
        };
        // Class 2 gaining rows makes more predictions of 2 right (precision up) and more of
        // the mistakes 2 (recall down): drawn from the same move, the two go opposite ways.
        assert!(correlation(&moved) < -0.5, "{}", correlation(&moved));
        // Without a tilt of the error shares only the bins move, and recall barely follows.
        let bins_only = run(&moving(0.5, loading.clone()), &[], 1).unwrap();
        assert!(
            correlation(&bins_only) > -0.3,
            "{}",
            correlation(&bins_only)
        );
        // Each bin's move share scales how far a move tilts its error shares: 1 is the whole
        // move (the same draws as none given), 0 none of it.
        let run_shared = |errors: &ErrorModel| {
            estimate_multiclass(
                &cal,
                std::slice::from_ref(&chunk),
                errors,
                &[vec![0.0; 9]],
                &still_tilt,
                &[],
                &metrics,
                population_settings(),
                Some(&moving(0.5, loading.clone())),
                n,
                17,
            )
        };
        let with_share = |value: f64, len: usize| ErrorModel {
            move_share: vec![value; len],
            ..errors.clone()
        };
        assert_eq!(moved, run_shared(&with_share(1.0, 9)).unwrap());
        let unshared = run_shared(&with_share(0.0, 9)).unwrap();
        assert!(correlation(&unshared) > -0.3, "{}", correlation(&unshared));
        for bad in [
            with_share(1.0, 8),
            with_share(-0.5, 9),
            with_share(f64::NAN, 9),
        ] {
            assert!(run_shared(&bad).is_err());
        }
        // A malformed move is refused.
        for (sd, loading) in [
            (-0.1, loading.clone()),
            (f64::NAN, loading),
            (0.5, vec![0.0; 4]),
        ] {
            assert!(run(&moving(sd, loading), &still_tilt, 1).is_err());
        }
    }

    #[test]
    fn calibrated_concordance_by_hand() {
        // Two rows: 0.2 and 0.8. Positive weights .2, .8; negative .8, .2.
        // Wins: the 0.8 row as a positive over the 0.2 row as a negative: .8 * .8 = .64;
        // self pairs at ties: .2 * .8 / 2 + .8 * .2 / 2 = .16. Total pairs (1.0)(1.0).
        let c = calibrated_concordance(&mut [0.8, 0.2]);
        assert!((c - 0.8).abs() < 1e-12, "{c}");
        assert_eq!(calibrated_concordance(&mut []), 0.5);
    }

    #[test]
    fn spread_and_ties_against_every_pair() {
        let mut s = Sampler::new(stream(31, 0));
        for size in [2usize, 3, 7, 40] {
            // Scores on a coarse grid, so that some are tied.
            let mut values: Vec<f64> = (0..size)
                .map(|_| (s.uniform() * 8.0).floor() / 8.0)
                .collect();
            values.sort_by(f64::total_cmp);
            let mut sum = SpreadSum::default();
            for run in values.chunk_by(|a, b| a == b) {
                sum.add(run[0], run.len() as f64);
            }
            let n = size as f64;
            let gaps: f64 = (0..size)
                .flat_map(|i| (0..size).map(move |j| (i, j)))
                .filter(|(i, j)| i != j)
                .map(|(i, j)| (values[i] - values[j]).abs())
                .sum();
            assert!((sum.gini() - gaps / (n * (n - 1.0))).abs() < 1e-12);
            // The tie-corrected Mann–Whitney variance over the untied one.
            let ties: f64 = values
                .chunk_by(|a, b| a == b)
                .map(|run| (run.len().pow(3) - run.len()) as f64)
                .sum();
            assert!((sum.tie_factor() - (1.0 - ties / (n * n * n - n))).abs() < 1e-12);
        }
        let mut one = SpreadSum::default();
        one.add(0.3, 5.0);
        assert_eq!((one.gini(), one.tie_factor()), (0.0, 0.0));
        assert_eq!(
            (
                SpreadSum::default().gini(),
                SpreadSum::default().tie_factor()
            ),
            (0.0, 1.0)
        );
    }

    #[test]
    fn fit_from_counts_keeps_the_spread_of_the_rows() {
        let (scores, labels) = calibrated(3_000, 8);
        let rounded: Vec<f64> = scores.iter().map(|v| (v * 50.0).round() / 50.0).collect();
        let cal = fit(&rounded, &labels, 10, 0.5).unwrap();
        let mut values = rounded.clone();
        values.sort_by(f64::total_cmp);
        values.dedup();
        let count = |v: f64, y: bool| {
            rounded
                .iter()
                .zip(&labels)
                .filter(|(s, l)| **s == v && **l == y)
                .count() as f64
        };
        let pos: Vec<f64> = values.iter().map(|&v| count(v, true)).collect();
        let neg: Vec<f64> = values.iter().map(|&v| count(v, false)).collect();
        let from_counts = fit_from_counts(&values, &pos, &neg, 10, 0.5).unwrap();
        for (a, b) in cal.spread.iter().zip(&from_counts.spread) {
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
        assert!(cal.spread.iter().filter(|&&g| g > 0.0).count() >= cal.n_bins() / 2);
    }

    #[test]
    fn a_long_chunks_spread_comes_from_a_sample_of_its_rows() {
        let (ref_scores, ref_labels) = calibrated(20_000, 5);
        let cal = fit(&ref_scores, &ref_labels, 10, 0.5).unwrap();
        let (scores, _) = calibrated(200_000, 6);
        let sampled = &chunk_stats(&cal, &scores, &[0], false, None).unwrap()[0];
        let k = cal.n_bins();
        let mut by_bin: Vec<Vec<f64>> = vec![Vec::new(); k];
        for &s in &scores {
            by_bin[cal.bin_of(s)].push(s);
        }
        for (b, values) in by_bin.iter_mut().enumerate() {
            values.sort_by(f64::total_cmp);
            let mut all = SpreadSum::default();
            for run in values.chunk_by(|a, b| a == b) {
                all.add(run[0], run.len() as f64);
            }
            // About 1,600 of a bin's 20,000 rows: G within a few percent.
            let ratio = sampled.spread[b] / all.gini();
            assert!((ratio - 1.0).abs() < 0.06, "bin {b}: {ratio}");
            assert_eq!(sampled.counts[b], values.len() as f64);
        }
        // Up to SPREAD_ROWS rows every row counts.
        let short = &chunk_stats(&cal, &scores[..SPREAD_ROWS], &[0], false, None).unwrap()[0];
        let b = cal.bin_of(0.7);
        let mut values: Vec<f64> = scores[..SPREAD_ROWS]
            .iter()
            .copied()
            .filter(|&s| cal.bin_of(s) == b)
            .collect();
        values.sort_by(f64::total_cmp);
        let mut all = SpreadSum::default();
        for run in values.chunk_by(|a, b| a == b) {
            all.add(run[0], run.len() as f64);
        }
        assert_eq!(short.spread[b], all.gini());
    }

    #[test]
    fn a_chunk_ranks_inside_a_bin_as_far_as_its_scores_spread() {
        let (ref_scores, ref_labels) = calibrated(50_000, 4);
        let cal = fit(&ref_scores, &ref_labels, 10, 0.5).unwrap();
        let b = cal.bin_of(0.7);
        let c = cal.concordance[b];
        assert!(c > 0.52, "{c}");
        // The reference's own spread keeps the concordance; none ranks nothing; half as wide
        // ranks half as far; no spread known keeps it whatever the chunk.
        assert!((cal.chunk_concordance(b, c, cal.spread[b]) - c).abs() < 1e-15);
        assert_eq!(cal.chunk_concordance(b, c, 0.0), 0.5);
        let half = cal.chunk_concordance(b, c, cal.spread[b] / 2.0);
        assert!((half - (0.5 + (c - 0.5) / 2.0)).abs() < 1e-12);
        let unknown = Calibration {
            spread: Vec::new(),
            ..cal.clone()
        };
        assert_eq!(unknown.chunk_concordance(b, c, 0.0), c);
        // A chunk whose rows all share one score: its realized ROC AUC is ½ in every draw
        // (every pair is tied), and its population AUC sits at ½.
        let tied = chunk_stats(&cal, &[0.7; 400], &[0], false, None).unwrap();
        assert_eq!(tied[0].tie_factor[b], 0.0);
        assert_eq!(tied[0].spread[b], 0.0);
        for target in [Target::Realized, Target::Population] {
            let settings = Settings {
                target,
                mode: Mode::Reference,
                within_bin: true,
                want_auc: true,
                want_ap: false,
                zero_division: 0.0,
            };
            let out = estimate(&cal, &tied, &[], settings, None, None, 2_000, 3).unwrap();
            let worst = out.iter().map(|v| (v - 0.5).abs()).fold(0.0, f64::max);
            let bound = if target == Target::Realized {
                0.0
            } else {
                0.02
            };
            assert!(worst <= bound, "{target:?}: {worst}");
        }
    }
}
