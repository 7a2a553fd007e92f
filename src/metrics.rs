//! The binary metric catalogue, evaluated on confusion-matrix cells.
//!
//! Cells may be counts or cell probabilities (a Dirichlet draw, normalised or not): every metric
//! here is a ratio of homogeneous functions of the same degree, so it does not depend on the
//! scale of the cells. That lets the fused kernels skip normalising their gamma draws.
//!
//! Undefined values (a zero denominator) follow scikit-learn's `zero_division` convention: the
//! metric takes the caller's `zero_division` value (scikit-learn's default behaves as 0.0).
//! Likelihood ratios and the diagnostic odds ratio are `+inf` when only their denominator is
//! zero (a positive number over zero), and `zero_division` when the ratio is 0 / 0.

use crate::{Error, Result};

/// One binary confusion matrix: true positives, false positives, true negatives, false negatives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cells {
    pub tp: f64,
    pub fp: f64,
    pub tn: f64,
    pub fn_: f64,
}

impl Cells {
    pub fn new(tp: f64, fp: f64, tn: f64, fn_: f64) -> Self {
        Self { tp, fp, tn, fn_ }
    }
}

/// A binary classification metric. `FBeta` carries its beta (> 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    Accuracy,
    Precision,
    Recall,
    Specificity,
    Npv,
    Fpr,
    Fnr,
    Fdr,
    FalseOmissionRate,
    F1,
    FBeta(f64),
    Mcc,
    BalancedAccuracy,
    Informedness,
    Markedness,
    Kappa,
    Jaccard,
    Prevalence,
    SelectionRate,
    PositiveLikelihoodRatio,
    NegativeLikelihoodRatio,
    DiagnosticOddsRatio,
    GMean,
}

/// Canonical names of the binary metrics, in catalogue order.
pub const BINARY_METRIC_NAMES: [&str; 23] = [
    "accuracy",
    "precision",
    "recall",
    "specificity",
    "npv",
    "fpr",
    "fnr",
    "fdr",
    "false_omission_rate",
    "f1",
    "fbeta",
    "mcc",
    "balanced_accuracy",
    "informedness",
    "markedness",
    "kappa",
    "jaccard",
    "prevalence",
    "selection_rate",
    "positive_likelihood_ratio",
    "negative_likelihood_ratio",
    "diagnostic_odds_ratio",
    "gmean",
];

/// `num / den`, or `zero_division` when the denominator is zero.
#[inline(always)]
fn ratio(num: f64, den: f64, zero_division: f64) -> f64 {
    if den > 0.0 { num / den } else { zero_division }
}

/// `num / den` for quantities that may be unbounded: +inf when only the denominator is zero.
#[inline(always)]
fn unbounded_ratio(num: f64, den: f64, zero_division: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else if num > 0.0 {
        f64::INFINITY
    } else {
        zero_division
    }
}

/// Expand `$apply!(formula)` for the formula of metric `$metric` (the one place that maps
/// metrics to formulas, shared by the scalar and the block evaluators).
macro_rules! dispatch {
    ($metric:expr, $apply:ident) => {
        match *$metric {
            Metric::Accuracy => $apply!(formula::accuracy),
            Metric::Precision => $apply!(formula::precision),
            Metric::Recall => $apply!(formula::recall),
            Metric::Specificity => $apply!(formula::specificity),
            Metric::Npv => $apply!(formula::npv),
            Metric::Fpr => $apply!(formula::fpr),
            Metric::Fnr => $apply!(formula::fnr),
            Metric::Fdr => $apply!(formula::fdr),
            Metric::FalseOmissionRate => $apply!(formula::false_omission_rate),
            Metric::F1 => $apply!(formula::f1),
            Metric::FBeta(beta) => {
                let b2 = beta * beta;
                $apply!(|tp, fp, tn, fn_, zd| formula::fbeta(tp, fp, tn, fn_, zd, b2))
            }
            Metric::Mcc => $apply!(formula::mcc),
            Metric::BalancedAccuracy => $apply!(formula::balanced_accuracy),
            Metric::Informedness => $apply!(formula::informedness),
            Metric::Markedness => $apply!(formula::markedness),
            Metric::Kappa => $apply!(formula::kappa),
            Metric::Jaccard => $apply!(formula::jaccard),
            Metric::Prevalence => $apply!(formula::prevalence),
            Metric::SelectionRate => $apply!(formula::selection_rate),
            Metric::PositiveLikelihoodRatio => $apply!(formula::positive_likelihood_ratio),
            Metric::NegativeLikelihoodRatio => $apply!(formula::negative_likelihood_ratio),
            Metric::DiagnosticOddsRatio => $apply!(formula::diagnostic_odds_ratio),
            Metric::GMean => $apply!(formula::gmean),
        }
    };
}

/// The formulas, each a pure function of (TP, FP, TN, FN, zero_division).
mod formula {
    use super::{ratio, unbounded_ratio};

    #[inline(always)]
    pub fn accuracy(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        ratio(tp + tn, tp + fp + tn + fn_, zd)
    }
    #[inline(always)]
    pub fn precision(tp: f64, fp: f64, _tn: f64, _fn: f64, zd: f64) -> f64 {
        ratio(tp, tp + fp, zd)
    }
    #[inline(always)]
    pub fn recall(tp: f64, _fp: f64, _tn: f64, fn_: f64, zd: f64) -> f64 {
        ratio(tp, tp + fn_, zd)
    }
    #[inline(always)]
    pub fn specificity(_tp: f64, fp: f64, tn: f64, _fn: f64, zd: f64) -> f64 {
        ratio(tn, fp + tn, zd)
    }
    #[inline(always)]
    pub fn npv(_tp: f64, _fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        ratio(tn, tn + fn_, zd)
    }
    #[inline(always)]
    pub fn fpr(_tp: f64, fp: f64, tn: f64, _fn: f64, zd: f64) -> f64 {
        ratio(fp, fp + tn, zd)
    }
    #[inline(always)]
    pub fn fnr(tp: f64, _fp: f64, _tn: f64, fn_: f64, zd: f64) -> f64 {
        ratio(fn_, tp + fn_, zd)
    }
    #[inline(always)]
    pub fn fdr(tp: f64, fp: f64, _tn: f64, _fn: f64, zd: f64) -> f64 {
        ratio(fp, tp + fp, zd)
    }
    #[inline(always)]
    pub fn false_omission_rate(_tp: f64, _fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        ratio(fn_, tn + fn_, zd)
    }
    #[inline(always)]
    pub fn f1(tp: f64, fp: f64, _tn: f64, fn_: f64, zd: f64) -> f64 {
        ratio(2.0 * tp, 2.0 * tp + fp + fn_, zd)
    }
    #[inline(always)]
    pub fn fbeta(tp: f64, fp: f64, _tn: f64, fn_: f64, zd: f64, b2: f64) -> f64 {
        ratio((1.0 + b2) * tp, (1.0 + b2) * tp + b2 * fn_ + fp, zd)
    }
    #[inline(always)]
    pub fn mcc(tp: f64, fp: f64, tn: f64, fn_: f64, _zd: f64) -> f64 {
        // Two square roots of pair products: no overflow below 1e150 per cell. scikit-learn
        // returns 0 when a marginal is empty. The exact value lies in [-1, 1] (Cauchy–Schwarz);
        // the clamp only bounds rounding error, which grows when cells are subnormal (Dirichlet
        // draws under a tiny prior).
        let den = ((tp + fp) * (tp + fn_)).sqrt() * ((tn + fp) * (tn + fn_)).sqrt();
        let value = ((tp * tn - fp * fn_) / den).clamp(-1.0, 1.0);
        if den > 0.0 { value } else { 0.0 }
    }
    #[inline(always)]
    pub fn balanced_accuracy(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        let (pos, neg) = (tp + fn_, fp + tn);
        // scikit-learn averages the recall of the classes that are present.
        match (pos > 0.0, neg > 0.0) {
            (true, true) => 0.5 * (tp / pos + tn / neg),
            (true, false) => tp / pos,
            (false, true) => tn / neg,
            (false, false) => zd,
        }
    }
    #[inline(always)]
    pub fn informedness(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        let (pos, neg) = (tp + fn_, fp + tn);
        if pos > 0.0 && neg > 0.0 {
            tp / pos + tn / neg - 1.0
        } else {
            zd
        }
    }
    #[inline(always)]
    pub fn markedness(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        let (pred_pos, pred_neg) = (tp + fp, tn + fn_);
        if pred_pos > 0.0 && pred_neg > 0.0 {
            tp / pred_pos + tn / pred_neg - 1.0
        } else {
            zd
        }
    }
    #[inline(always)]
    pub fn kappa(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        // Cohen's kappa for two raters in the closed form that avoids 1 - p_e; exactly within
        // [-1, 1], clamped against rounding as for MCC.
        let den = (tp + fp) * (fp + tn) + (tp + fn_) * (fn_ + tn);
        let value = (2.0 * (tp * tn - fn_ * fp) / den).clamp(-1.0, 1.0);
        if den > 0.0 { value } else { zd }
    }
    #[inline(always)]
    pub fn jaccard(tp: f64, fp: f64, _tn: f64, fn_: f64, zd: f64) -> f64 {
        ratio(tp, tp + fp + fn_, zd)
    }
    #[inline(always)]
    pub fn prevalence(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        ratio(tp + fn_, tp + fp + tn + fn_, zd)
    }
    #[inline(always)]
    pub fn selection_rate(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        ratio(tp + fp, tp + fp + tn + fn_, zd)
    }
    #[inline(always)]
    pub fn positive_likelihood_ratio(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        let (pos, neg) = (tp + fn_, fp + tn);
        if pos > 0.0 && neg > 0.0 {
            unbounded_ratio(tp / pos, fp / neg, zd)
        } else {
            zd
        }
    }
    #[inline(always)]
    pub fn negative_likelihood_ratio(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        let (pos, neg) = (tp + fn_, fp + tn);
        if pos > 0.0 && neg > 0.0 {
            unbounded_ratio(fn_ / pos, tn / neg, zd)
        } else {
            zd
        }
    }
    #[inline(always)]
    pub fn diagnostic_odds_ratio(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        unbounded_ratio(tp * tn, fp * fn_, zd)
    }
    #[inline(always)]
    pub fn gmean(tp: f64, fp: f64, tn: f64, fn_: f64, zd: f64) -> f64 {
        let (pos, neg) = (tp + fn_, fp + tn);
        if pos > 0.0 && neg > 0.0 {
            ((tp / pos) * (tn / neg)).sqrt()
        } else {
            zd
        }
    }
}

impl Metric {
    /// Parse a canonical metric name. `beta` is used by "fbeta" only.
    pub fn from_name(name: &str, beta: f64) -> Result<Self> {
        use Metric::*;
        Ok(match name {
            "accuracy" => Accuracy,
            "precision" => Precision,
            "recall" => Recall,
            "specificity" => Specificity,
            "npv" => Npv,
            "fpr" => Fpr,
            "fnr" => Fnr,
            "fdr" => Fdr,
            "false_omission_rate" => FalseOmissionRate,
            "f1" => F1,
            "fbeta" => {
                if !(beta.is_finite() && beta > 0.0) {
                    return Err(Error::invalid(format!(
                        "beta must be a finite number > 0, got {beta}"
                    )));
                }
                FBeta(beta)
            }
            "mcc" => Mcc,
            "balanced_accuracy" => BalancedAccuracy,
            "informedness" => Informedness,
            "markedness" => Markedness,
            "kappa" => Kappa,
            "jaccard" => Jaccard,
            "prevalence" => Prevalence,
            "selection_rate" => SelectionRate,
            "positive_likelihood_ratio" => PositiveLikelihoodRatio,
            "negative_likelihood_ratio" => NegativeLikelihoodRatio,
            "diagnostic_odds_ratio" => DiagnosticOddsRatio,
            "gmean" => GMean,
            other => {
                return Err(Error::invalid(format!(
                    "unknown metric {other:?}; valid binary metrics: {}",
                    BINARY_METRIC_NAMES.join(", ")
                )));
            }
        })
    }

    /// Evaluate the metric on one confusion matrix.
    #[inline]
    pub fn eval(&self, c: &Cells, zero_division: f64) -> f64 {
        let Cells { tp, fp, tn, fn_ } = *c;
        macro_rules! apply {
            ($formula:expr) => {
                $formula(tp, fp, tn, fn_, zero_division)
            };
        }
        dispatch!(self, apply)
    }

    /// Evaluate the metric on a block of confusion matrices given as four cell columns, into
    /// `out` (all slices of one length). One tight loop per metric, which LLVM vectorises.
    pub fn eval_into(
        &self,
        tp: &[f64],
        fp: &[f64],
        tn: &[f64],
        fn_: &[f64],
        zero_division: f64,
        out: &mut [f64],
    ) {
        let n = out.len();
        let (tp, fp, tn, fn_) = (&tp[..n], &fp[..n], &tn[..n], &fn_[..n]);
        macro_rules! apply {
            ($formula:expr) => {
                for i in 0..n {
                    out[i] = $formula(tp[i], fp[i], tn[i], fn_[i], zero_division);
                }
            };
        }
        dispatch!(self, apply)
    }
}

// ---------------------------------------------------------------------------------------------
// Multiclass
// ---------------------------------------------------------------------------------------------

/// The aggregates of one K × K confusion matrix (counts or a Dirichlet draw) that every
/// multiclass metric is a function of: per class, the true total (row sum), the predicted
/// total (column sum) and the correct count (diagonal); and the grand total.
pub struct ClassTotals<'a> {
    pub actual: &'a [f64],
    pub predicted: &'a [f64],
    pub correct: &'a [f64],
    pub total: f64,
}

impl ClassTotals<'_> {
    /// One-vs-rest cells (TP, FP, TN, FN) of class k.
    #[inline(always)]
    fn cells(&self, k: usize) -> (f64, f64, f64, f64) {
        let tp = self.correct[k];
        let fp = self.predicted[k] - tp;
        let fn_ = self.actual[k] - tp;
        // Clamped: rounding could leave -1e-17 when class k has (almost) all the mass.
        let tn = (self.total - self.actual[k] - self.predicted[k] + tp).max(0.0);
        (tp, fp, tn, fn_)
    }
}

/// A per-class (one-vs-rest) metric.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClassMetric {
    Precision,
    Recall,
    F1,
    /// Carries beta squared.
    FBeta(f64),
    Specificity,
    Npv,
    Jaccard,
    Fpr,
    Fnr,
    Fdr,
    FalseOmissionRate,
}

/// Names of the per-class metrics.
pub const CLASS_METRIC_NAMES: [&str; 11] = [
    "precision",
    "recall",
    "f1",
    "fbeta",
    "specificity",
    "npv",
    "jaccard",
    "fpr",
    "fnr",
    "fdr",
    "false_omission_rate",
];

impl ClassMetric {
    pub fn from_name(name: &str, beta: f64) -> Result<Self> {
        use ClassMetric::*;
        Ok(match name {
            "precision" => Precision,
            "recall" => Recall,
            "f1" => F1,
            "fbeta" => match Metric::from_name("fbeta", beta)? {
                Metric::FBeta(b) => FBeta(b * b),
                _ => unreachable!("fbeta parses to FBeta"),
            },
            "specificity" => Specificity,
            "npv" => Npv,
            "jaccard" => Jaccard,
            "fpr" => Fpr,
            "fnr" => Fnr,
            "fdr" => Fdr,
            "false_omission_rate" => FalseOmissionRate,
            other => {
                return Err(Error::invalid(format!(
                    "unknown per-class metric {other:?}; valid: {}",
                    CLASS_METRIC_NAMES.join(", ")
                )));
            }
        })
    }

    /// The metric on one set of one-vs-rest cells (the binary formulas).
    #[inline(always)]
    fn of(&self, (tp, fp, tn, fn_): (f64, f64, f64, f64), zd: f64) -> f64 {
        use ClassMetric::*;
        match *self {
            Precision => formula::precision(tp, fp, tn, fn_, zd),
            Recall => formula::recall(tp, fp, tn, fn_, zd),
            F1 => formula::f1(tp, fp, tn, fn_, zd),
            FBeta(b2) => formula::fbeta(tp, fp, tn, fn_, zd, b2),
            Specificity => formula::specificity(tp, fp, tn, fn_, zd),
            Npv => formula::npv(tp, fp, tn, fn_, zd),
            Jaccard => formula::jaccard(tp, fp, tn, fn_, zd),
            Fpr => formula::fpr(tp, fp, tn, fn_, zd),
            Fnr => formula::fnr(tp, fp, tn, fn_, zd),
            Fdr => formula::fdr(tp, fp, tn, fn_, zd),
            FalseOmissionRate => formula::false_omission_rate(tp, fp, tn, fn_, zd),
        }
    }
}

/// How per-class values become one number (scikit-learn's `average`), or one class's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Average {
    /// Unweighted mean over all classes (undefined classes count as `zero_division`).
    Macro,
    /// Mean weighted by each class's true total (its prevalence in the matrix).
    Weighted,
    /// The metric of the pooled one-vs-rest cells (micro precision = recall = F1 = accuracy).
    Micro,
    /// One class, by index.
    Class(usize),
}

/// A metric of a K × K confusion matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MulticlassMetric {
    Accuracy,
    /// Mean recall over the classes that occur (scikit-learn's balanced_accuracy_score).
    BalancedAccuracy,
    /// Gorodkin's K-category correlation coefficient (scikit-learn's matthews_corrcoef).
    Mcc,
    /// Cohen's kappa.
    Kappa,
    PerClass(ClassMetric, Average),
}

impl MulticlassMetric {
    /// Build from parts: a whole-matrix name ("accuracy", "balanced_accuracy", "mcc", "kappa")
    /// with `average` "", or a per-class name with `average` "macro", "weighted", "micro" or
    /// "class" (then `class` is the class index below `n_classes`).
    pub fn from_parts(
        name: &str,
        average: &str,
        class: usize,
        beta: f64,
        n_classes: usize,
    ) -> Result<Self> {
        let whole = match name {
            "accuracy" => Some(MulticlassMetric::Accuracy),
            "balanced_accuracy" => Some(MulticlassMetric::BalancedAccuracy),
            "mcc" => Some(MulticlassMetric::Mcc),
            "kappa" => Some(MulticlassMetric::Kappa),
            _ => None,
        };
        if let Some(metric) = whole {
            if !average.is_empty() {
                return Err(Error::invalid(format!(
                    "{name} is a whole-matrix metric and takes no average, got {average:?}"
                )));
            }
            return Ok(metric);
        }
        let base = ClassMetric::from_name(name, beta)?;
        let average = match average {
            "macro" => Average::Macro,
            "weighted" => Average::Weighted,
            "micro" => Average::Micro,
            "class" => {
                if class >= n_classes {
                    return Err(Error::invalid(format!(
                        "class index {class} out of range for {n_classes} classes"
                    )));
                }
                Average::Class(class)
            }
            other => {
                return Err(Error::invalid(format!(
                    "average must be macro, weighted, micro or class, got {other:?}"
                )));
            }
        };
        Ok(MulticlassMetric::PerClass(base, average))
    }

    /// The classes this metric counts, decided on the data (counts, not a posterior draw): for
    /// `balanced_accuracy` the classes that occur; for macro and weighted averages the classes
    /// whose per-class value is defined (a nonzero denominator). The other classes count as
    /// `zero_division` in averages — in the observed value, as scikit-learn does, and in every
    /// posterior draw alike, so that the posterior describes the same quantity as the observed
    /// value (in a draw every class has some mass, so the draw alone cannot tell).
    pub fn counted_classes(&self, data: &ClassTotals) -> Vec<bool> {
        let k = data.actual.len();
        match *self {
            MulticlassMetric::BalancedAccuracy => data.actual.iter().map(|a| *a > 0.0).collect(),
            MulticlassMetric::PerClass(base, Average::Macro | Average::Weighted) => (0..k)
                .map(|i| !base.of(data.cells(i), f64::NAN).is_nan())
                .collect(),
            _ => vec![true; k],
        }
    }

    /// Evaluate on one matrix's totals, the classes counted decided on these same totals (the
    /// point value of counts, equal to scikit-learn's).
    #[inline]
    pub fn eval(&self, t: &ClassTotals, zd: f64) -> f64 {
        self.eval_counted(t, zd, &self.counted_classes(t))
    }

    /// Evaluate on one matrix's totals, counting the classes `counted` (see
    /// [`Self::counted_classes`]; K entries).
    #[inline]
    pub fn eval_counted(&self, t: &ClassTotals, zd: f64, counted: &[bool]) -> f64 {
        let k = t.actual.len();
        match *self {
            MulticlassMetric::Accuracy => {
                let correct: f64 = t.correct.iter().sum();
                ratio(correct, t.total, zd)
            }
            MulticlassMetric::BalancedAccuracy => {
                let (mut sum, mut present) = (0.0, 0usize);
                for ((c, a), counts) in t.correct.iter().zip(t.actual).zip(counted) {
                    if *counts {
                        sum += ratio(*c, *a, zd);
                        present += 1;
                    }
                }
                if present > 0 {
                    sum / present as f64
                } else {
                    zd
                }
            }
            MulticlassMetric::Mcc => {
                let s = t.total;
                let c: f64 = t.correct.iter().sum();
                let (mut pt, mut pp, mut tt) = (0.0, 0.0, 0.0);
                for (p, a) in t.predicted.iter().zip(t.actual) {
                    pt += p * a;
                    pp += p * p;
                    tt += a * a;
                }
                let den = ((s * s - pp).max(0.0)).sqrt() * ((s * s - tt).max(0.0)).sqrt();
                // scikit-learn returns 0 when either variance vanishes.
                if den > 0.0 {
                    ((c * s - pt) / den).clamp(-1.0, 1.0)
                } else {
                    0.0
                }
            }
            MulticlassMetric::Kappa => {
                let s = t.total;
                let c: f64 = t.correct.iter().sum();
                let pt: f64 = t.predicted.iter().zip(t.actual).map(|(p, a)| p * a).sum();
                let den = s * s - pt;
                if den > 0.0 {
                    ((c * s - pt) / den).clamp(-1.0, 1.0)
                } else {
                    zd
                }
            }
            MulticlassMetric::PerClass(base, average) => {
                let value = |i: usize| {
                    if counted[i] {
                        base.of(t.cells(i), zd)
                    } else {
                        zd
                    }
                };
                match average {
                    Average::Class(i) => base.of(t.cells(i), zd),
                    Average::Macro => (0..k).map(value).sum::<f64>() / k as f64,
                    Average::Weighted => {
                        let support: f64 = t.actual.iter().sum();
                        if support > 0.0 {
                            (0..k).map(|i| t.actual[i] * value(i)).sum::<f64>() / support
                        } else {
                            zd
                        }
                    }
                    Average::Micro => {
                        let mut pooled = (0.0, 0.0, 0.0, 0.0);
                        for i in 0..k {
                            let (tp, fp, tn, fn_) = t.cells(i);
                            pooled = (pooled.0 + tp, pooled.1 + fp, pooled.2 + tn, pooled.3 + fn_);
                        }
                        base.of(pooled, zd)
                    }
                }
            }
        }
    }
}

/// The class totals of a row-major K × K matrix (owned buffers; for counts, not hot loops).
pub struct OwnedTotals {
    actual: Vec<f64>,
    predicted: Vec<f64>,
    correct: Vec<f64>,
    total: f64,
}

impl OwnedTotals {
    pub fn of(matrix: &[f64], k: usize) -> Self {
        let (mut actual, mut predicted, mut correct) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        let total = class_totals_into(matrix, &mut actual, &mut predicted, &mut correct);
        OwnedTotals {
            actual,
            predicted,
            correct,
            total,
        }
    }

    pub fn view(&self) -> ClassTotals<'_> {
        ClassTotals {
            actual: &self.actual,
            predicted: &self.predicted,
            correct: &self.correct,
            total: self.total,
        }
    }
}

/// Row sums, column sums, diagonal and total of a row-major K × K matrix, into the buffers.
pub fn class_totals_into(
    matrix: &[f64],
    actual: &mut [f64],
    predicted: &mut [f64],
    correct: &mut [f64],
) -> f64 {
    let k = actual.len();
    predicted.fill(0.0);
    let mut total = 0.0;
    for (r, row) in matrix.chunks_exact(k).enumerate() {
        let mut row_sum = 0.0;
        for (c, &v) in row.iter().enumerate() {
            row_sum += v;
            predicted[c] += v;
        }
        actual[r] = row_sum;
        correct[r] = row[r];
        total += row_sum;
    }
    total
}

/// Point values of multiclass metrics on a row-major K × K count matrix.
pub fn evaluate_multiclass(
    counts: &[f64],
    k: usize,
    metrics: &[MulticlassMetric],
    zero_division: f64,
) -> Vec<f64> {
    let totals = OwnedTotals::of(counts, k);
    let t = totals.view();
    metrics.iter().map(|m| m.eval(&t, zero_division)).collect()
}

/// Parse a list of names (all with the same `beta` for "fbeta").
pub fn parse_metrics(names: &[String], beta: f64) -> Result<Vec<Metric>> {
    names.iter().map(|n| Metric::from_name(n, beta)).collect()
}

/// Point values of `metrics` on the counts `cells`.
pub fn evaluate(cells: &Cells, metrics: &[Metric], zero_division: f64) -> Vec<f64> {
    metrics
        .iter()
        .map(|m| m.eval(cells, zero_division))
        .collect()
}

/// Metric values of many matrices at once: `cells` holds rows of (tp, fp, tn, fn); the result is
/// metric-major (`metrics.len()` rows of `cells.len() / 4` values). Used for draws made outside
/// the Dirichlet kernels (stratified samples), so each cell must be finite and >= 0.
pub fn evaluate_rows(cells: &[f64], metrics: &[Metric], zero_division: f64) -> Result<Vec<f64>> {
    if cells.len() % 4 != 0 {
        return Err(Error::invalid(format!(
            "cells must hold rows of 4 values (tp, fp, tn, fn), got {} values",
            cells.len()
        )));
    }
    if let Some(bad) = cells.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
        return Err(Error::invalid(format!(
            "cells must be finite and >= 0, got {bad}"
        )));
    }
    let n = cells.len() / 4;
    let mut out = vec![0.0; metrics.len() * n];
    for (j, row) in cells.chunks_exact(4).enumerate() {
        let c = Cells::new(row[0], row[1], row[2], row[3]);
        for (i, m) in metrics.iter().enumerate() {
            out[i * n + j] = m.eval(&c, zero_division);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Just;

    fn all() -> Vec<Metric> {
        BINARY_METRIC_NAMES
            .iter()
            .map(|n| Metric::from_name(n, 2.0).unwrap())
            .collect()
    }

    #[test]
    fn every_catalogue_name_parses() {
        assert_eq!(all().len(), BINARY_METRIC_NAMES.len());
        let err = Metric::from_name("f2", 1.0).unwrap_err().to_string();
        assert!(err.contains("unknown metric") && err.contains("balanced_accuracy"));
        assert!(Metric::from_name("fbeta", 0.0).is_err());
        assert!(Metric::from_name("fbeta", f64::NAN).is_err());
    }

    #[test]
    fn hand_computed_values() {
        // TP=5285, FP=3184, TN=8000, FN=1000 (the counts of the benchmark in the issue).
        let c = Cells::new(5285.0, 3184.0, 8000.0, 1000.0);
        let n = 17469.0;
        let close = |m: Metric, v: f64| {
            let got = m.eval(&c, 0.0);
            assert!(
                (got - v).abs() < 1e-12 * v.abs().max(1.0),
                "{m:?}: {got} vs {v}"
            );
        };
        close(Metric::Accuracy, 13285.0 / n);
        close(Metric::Precision, 5285.0 / 8469.0);
        close(Metric::Recall, 5285.0 / 6285.0);
        close(Metric::Specificity, 8000.0 / 11184.0);
        close(Metric::Npv, 8000.0 / 9000.0);
        close(Metric::Fpr, 3184.0 / 11184.0);
        close(Metric::Fnr, 1000.0 / 6285.0);
        close(Metric::Fdr, 3184.0 / 8469.0);
        close(Metric::FalseOmissionRate, 1000.0 / 9000.0);
        close(Metric::F1, 2.0 * 5285.0 / (2.0 * 5285.0 + 3184.0 + 1000.0));
        close(
            Metric::FBeta(2.0),
            5.0 * 5285.0 / (5.0 * 5285.0 + 4.0 * 1000.0 + 3184.0),
        );
        let mcc =
            (5285.0 * 8000.0 - 3184.0 * 1000.0) / (8469.0f64 * 6285.0 * 11184.0 * 9000.0).sqrt();
        close(Metric::Mcc, mcc);
        close(
            Metric::BalancedAccuracy,
            0.5 * (5285.0 / 6285.0 + 8000.0 / 11184.0),
        );
        close(
            Metric::Informedness,
            5285.0 / 6285.0 + 8000.0 / 11184.0 - 1.0,
        );
        close(Metric::Markedness, 5285.0 / 8469.0 + 8000.0 / 9000.0 - 1.0);
        let po = 13285.0 / n;
        let pe = (8469.0 * 6285.0 + 9000.0 * 11184.0) / (n * n);
        close(Metric::Kappa, (po - pe) / (1.0 - pe));
        close(Metric::Jaccard, 5285.0 / (5285.0 + 3184.0 + 1000.0));
        close(Metric::Prevalence, 6285.0 / n);
        close(Metric::SelectionRate, 8469.0 / n);
        close(
            Metric::PositiveLikelihoodRatio,
            (5285.0 / 6285.0) / (3184.0 / 11184.0),
        );
        close(
            Metric::NegativeLikelihoodRatio,
            (1000.0 / 6285.0) / (8000.0 / 11184.0),
        );
        close(
            Metric::DiagnosticOddsRatio,
            5285.0 * 8000.0 / (3184.0 * 1000.0),
        );
        close(
            Metric::GMean,
            (5285.0 / 6285.0 * 8000.0 / 11184.0f64).sqrt(),
        );
    }

    #[test]
    fn scale_invariance() {
        let c = Cells::new(3.0, 5.0, 7.0, 11.0);
        let s = Cells::new(3e-3, 5e-3, 7e-3, 11e-3);
        for m in all() {
            let (a, b) = (m.eval(&c, 0.0), m.eval(&s, 0.0));
            assert!((a - b).abs() < 1e-12 * a.abs().max(1.0), "{m:?}");
        }
    }

    #[test]
    fn zero_division_convention() {
        let empty = Cells::new(0.0, 0.0, 0.0, 0.0);
        for m in all() {
            let v = m.eval(&empty, 0.25);
            // MCC is 0 with an empty marginal (scikit-learn); everything else takes zero_division.
            let expected = if m == Metric::Mcc { 0.0 } else { 0.25 };
            assert_eq!(v, expected, "{m:?}");
        }
        let no_fp = Cells::new(5.0, 0.0, 5.0, 1.0);
        assert_eq!(
            Metric::PositiveLikelihoodRatio.eval(&no_fp, 0.0),
            f64::INFINITY
        );
        assert_eq!(Metric::DiagnosticOddsRatio.eval(&no_fp, 0.0), f64::INFINITY);
        assert_eq!(Metric::Precision.eval(&no_fp, 0.0), 1.0);
    }

    /// The range every metric's exact value lies in.
    fn range(m: Metric) -> (f64, f64) {
        match m {
            Metric::Mcc | Metric::Informedness | Metric::Markedness | Metric::Kappa => (-1.0, 1.0),
            Metric::PositiveLikelihoodRatio
            | Metric::NegativeLikelihoodRatio
            | Metric::DiagnosticOddsRatio => (0.0, f64::INFINITY),
            _ => (0.0, 1.0),
        }
    }

    proptest::proptest! {
        #[test]
        fn metrics_stay_in_range_for_any_cells(
            cells in proptest::array::uniform4(proptest::prop_oneof![
                Just(0.0),
                0.0f64..1e-300,
                1e-320f64..1e-300,
                0.0f64..1.0,
                0.0f64..1e15,
            ]),
            zd in proptest::prop_oneof![Just(0.0), Just(1.0)],
        ) {
            let c = Cells::new(cells[0], cells[1], cells[2], cells[3]);
            for m in all() {
                let v = m.eval(&c, zd);
                let (lo, hi) = range(m);
                proptest::prop_assert!(!v.is_nan(), "{m:?} gave NaN for {cells:?}");
                proptest::prop_assert!(v >= lo && v <= hi, "{m:?} = {v} for {cells:?}");
            }
        }
    }

    fn multi(name: &str, average: &str, class: usize, k: usize) -> MulticlassMetric {
        MulticlassMetric::from_parts(name, average, class, 2.0, k).unwrap()
    }

    #[test]
    fn multiclass_hand_computed() {
        // Rows = true class, columns = predicted.
        let m = [5.0, 1.0, 0.0, 2.0, 3.0, 1.0, 0.0, 0.0, 4.0];
        let v = |metric: MulticlassMetric| evaluate_multiclass(&m, 3, &[metric], 0.0)[0];
        assert!((v(multi("accuracy", "", 0, 3)) - 12.0 / 16.0).abs() < 1e-15);
        // Class 0: TP 5, FP 2, FN 1; class 1: TP 3, FP 1, FN 3; class 2: TP 4, FP 1, FN 0.
        let precisions = [5.0 / 7.0, 3.0 / 4.0, 4.0 / 5.0];
        let recalls = [5.0 / 6.0, 3.0 / 6.0, 1.0];
        let macro_p = precisions.iter().sum::<f64>() / 3.0;
        assert!((v(multi("precision", "macro", 0, 3)) - macro_p).abs() < 1e-15);
        let weighted_r = (6.0 * recalls[0] + 6.0 * recalls[1] + 4.0 * recalls[2]) / 16.0;
        assert!((v(multi("recall", "weighted", 0, 3)) - weighted_r).abs() < 1e-15);
        assert!((v(multi("f1", "micro", 0, 3)) - 0.75).abs() < 1e-15);
        assert!((v(multi("recall", "class", 1, 3)) - 0.5).abs() < 1e-15);
        let bal = recalls.iter().sum::<f64>() / 3.0;
        assert!((v(multi("balanced_accuracy", "", 0, 3)) - bal).abs() < 1e-15);
        // Whole-matrix names refuse an average; per-class ones need one.
        assert!(MulticlassMetric::from_parts("accuracy", "macro", 0, 1.0, 3).is_err());
        assert!(MulticlassMetric::from_parts("f1", "", 0, 1.0, 3).is_err());
        assert!(MulticlassMetric::from_parts("f1", "class", 3, 1.0, 3).is_err());
    }

    #[test]
    fn binary_matrix_through_the_multiclass_path() {
        // [[TN, FP], [FN, TP]] = [[8000, 3184], [1000, 5285]]
        let m = [8000.0, 3184.0, 1000.0, 5285.0];
        let cells = Cells::new(5285.0, 3184.0, 8000.0, 1000.0);
        let pairs = [
            (multi("precision", "class", 1, 2), Metric::Precision),
            (multi("recall", "class", 1, 2), Metric::Recall),
            (multi("f1", "class", 1, 2), Metric::F1),
            (multi("specificity", "class", 1, 2), Metric::Specificity),
            (multi("mcc", "", 0, 2), Metric::Mcc),
            (multi("kappa", "", 0, 2), Metric::Kappa),
            (multi("accuracy", "", 0, 2), Metric::Accuracy),
            (
                multi("balanced_accuracy", "", 0, 2),
                Metric::BalancedAccuracy,
            ),
        ];
        for (multiclass, binary) in pairs {
            let a = evaluate_multiclass(&m, 2, &[multiclass], 0.0)[0];
            let b = binary.eval(&cells, 0.0);
            assert!((a - b).abs() < 1e-14, "{multiclass:?}: {a} vs {b}");
        }
    }

    #[test]
    fn huge_counts_do_not_overflow() {
        let c = Cells::new(4e12, 1e12, 3e12, 2e12);
        for m in all() {
            assert!(m.eval(&c, 0.0).is_finite(), "{m:?}");
        }
        // The largest counts a float64 holds exactly.
        let max_exact = 2f64.powi(53);
        let big = Cells::new(max_exact, max_exact - 1.0, max_exact, 1.0);
        for m in all() {
            assert!(m.eval(&big, 0.0).is_finite(), "{m:?}");
        }
    }

    #[test]
    fn evaluate_rows_matches_evaluate_and_refuses_bad_cells() {
        let all = all();
        let rows = [3.0, 1.0, 5.0, 2.0, 0.0, 0.0, 4.0, 1.0];
        let out = evaluate_rows(&rows, &all, 0.0).unwrap();
        for (j, row) in rows.chunks_exact(4).enumerate() {
            let one = evaluate(&Cells::new(row[0], row[1], row[2], row[3]), &all, 0.0);
            for (i, v) in one.iter().enumerate() {
                assert_eq!(out[i * 2 + j].to_bits(), v.to_bits());
            }
        }
        assert!(evaluate_rows(&[1.0, 2.0, 3.0], &all, 0.0).is_err());
        assert!(evaluate_rows(&[1.0, -2.0, 3.0, 0.0], &all, 0.0).is_err());
        assert!(evaluate_rows(&[1.0, f64::NAN, 3.0, 0.0], &all, 0.0).is_err());
    }
}
