"""DefragModel: simplify a fitted tree ensemble into a few rules (Hara & Hayashi).

The input x becomes the binary vector s of all split outcomes of the ensemble
(sec. 4.1): ``x_d > t`` for numeric splits, the category test of categorical
ones. A mixture of K components, each a product of Bernoulli distributions over
s (a region, eq. 6) with a Gaussian or categorical output (eq. 8), is fitted
by FAB inference (sec. 5.1, Algorithm 1), which truncates superfluous
components, or by EM with exactly K components (App. A). method="em-kl" fits the
2016 formulation instead, a mixture of experts with a softmax gate over s fitted to
the ensemble's predictions by minimising the KL divergence (defrag/_emkl.py).
"""
import copy
import dataclasses
import functools
import logging
import numbers
import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from .fit import emkl as _emkl
from .fit import _fit
from .fit import _gate
from .utils.dask_collections import is_dask_collection, map_rows
from .utils.exact import mean_and_variance
from .utils.memory import check_memory, fit_estimate
from .fit.restarts import run_restarts, run_screened_restarts
from .evaluation import prediction_error, predictive_score, rule_scores
from .rules.lists import fit_rule_list, refit_rule_list
from .rules import Rule, RuleSet
from .rules.extract import extract_rules_conditions
from .utils.threads import thread_budget, useful_threads
from .utils.validation import (check_missing, check_n_jobs, check_positive_int, check_predict_X, feature_names_of,
                          n_columns, rule_feature_names, tagged)
from .sources import checked_source, unwrap
from .sources.split_array import SplitArraySource

logger = logging.getLogger("defrag")

# subsample="auto": restarts are fitted on this many rows above AUTO_SUBSAMPLE_ABOVE rows.
# On the 1,000,000-row benchmark a restart on all rows takes about 30 s on one core and
# 2-4 s on 30,000 rows, and the kept model was as accurate (README, Performance).
AUTO_SUBSAMPLE = 30_000
AUTO_SUBSAMPLE_ABOVE = 100_000

# max_splits="auto": the ceil(10 sqrt(N)) splits with the largest training gain. With every
# split of a forest the binary features outweigh the output by 900-2400 nats per point
# (the regions follow the density of X, not the prediction); on nine real data sets the
# rule lists fitted to 10 sqrt(N) splits beat a CART of the same size fitted to the
# forest in 7 (README, "Rules that predict").
AUTO_SPLITS_PER_ROOT = 10.0


@dataclass
class _Target:
    """Targets of the mixture's output model, encoded for the kernels."""

    y: np.ndarray  # float64 values (regression) or int32 class codes
    n_classes: int  # 0 for regression
    mean: float = 0.0
    std: float = 1.0
    var: float = 1.0
    var_floor: float = 1e-12


def _fit_problem(splits, s_matrix, target):
    """The fit kernels' Problem: s as ``{"ranks": ...}`` or ``{"bits": ...}``, and the targets."""
    return splits.problem(
        s_matrix,
        y_value=target.y if target.n_classes == 0 else None,
        y_class=target.y if target.n_classes else None,
        n_classes=target.n_classes,
    )


def _check_missing(X, splits, what="X"):
    check_missing(X, splits.supports_missing, what)


def target_values(y, task):
    """y as a checked 1-D array: float64 for regression, the labels for classification."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}")
    if task == "regression":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError("y must be numeric for regression") from exc
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values")
    return y


def regression_target(y, mean, var):
    """The _Target of regression values y (float64) of the given mean and variance (both
    correctly rounded from exact sums, defrag/_exact.py: the same bits however the rows
    are partitioned)."""
    floor = 1e-9 * var if var > 0 else 1e-12
    scale = var if var > 0 else 1.0
    return _Target(np.ascontiguousarray(y), 0, float(mean), float(np.sqrt(scale)), scale, floor)


def target_classes(classes, labels):
    """The classes of the labels (y, or its distinct values): the source model's classes
    when it has them and they hold every label, else the labels' own."""
    if classes is not None and not np.all(np.isin(labels, classes)):
        classes = None  # y has labels the ensemble does not know: use y's own
    return np.unique(labels) if classes is None else classes


def class_target(y, classes):
    """The _Target of labels y: their codes in classes."""
    return _Target(np.ascontiguousarray(np.searchsorted(classes, y).astype(np.int32)), int(classes.size))


class DefragModel(BaseEstimator):
    """Simplify a fitted tree ensemble into a few rules (defrag, FAB inference).

    Parameters
    ----------
    estimator : fitted tree ensemble or array of shape (n_splits, 2)
        A fitted scikit-learn RandomForest, ExtraTrees, GradientBoosting or
        HistGradientBoosting classifier or regressor, an XGBoost or LightGBM model
        (categorical splits included), or (feature index, threshold) pairs of
        splits ``x_feature > threshold`` from any ensemble. With categorical
        features X may be a DataFrame with pandas categorical columns; it is coded
        as the source library codes it (see defrag/_inputs.py), at fit and
        predict time alike.
    max_rules : int, default=10
        K_max for FAB (an upper bound; FAB removes superfluous rules), the exact
        number of rules for EM and EM-KL.
    method : {"fab", "em", "em-kl"}, default="fab"
        "fab" and "em": the mixture of Hara & Hayashi (2018), by FAB inference or EM.
        "em-kl": the mixture of experts of their 2016 paper (defrag/_emkl.py): K =
        max_rules experts, each a Bernoulli region eta_k with a Gaussian (regression)
        or categorical (classification, the natural analogue) output, chosen by a
        softmax gate q(k | x) = exp(w_k^T s) / sum_k' exp(w_k'^T s) as well as by its
        region, fitted by EM to the ensemble's own predictions on X, which minimises
        the KL divergence from the ensemble (its predicted class for classification).
        A ``y`` given to fit replaces the ensemble's predictions: the fit is then a
        likelihood fit to y, no longer the KL objective. ``predict`` is the mixture of
        experts' prediction (the experts' outputs weighted by q(k | x, s), proportional
        to q(s | k) q(k | x)); ``rules_`` are read off eta as for FAB (with
        ``rule_list``, the ordered list fitted on the components), and ``evaluate``
        reports both. Restarts are compared by the training error of ``predict``.
    gate_l2 : float, default=1.0
        EM-KL only: the L2 penalty gate_l2 / 2 ||w||^2 on the gate's weights (that of
        scikit-learn's LogisticRegression with C=1); it keeps the gate's logistic
        regression bounded when components separate perfectly. EM maximises the
        log-likelihood (5) minus this penalty.
    n_restarts : int, default=20
        Random initialisations; the one with the smallest training error is kept.
    max_iter : int, default=100
        Outer iterations per restart.
    tol : float, default=1e-6
        Relative tolerance on the lower bound for convergence.
    kappa : float, default=1e-6
        A split enters a rule when its eta is > 1 - kappa or < kappa.
    delta : float, default=1e-8
        FAB truncation: a rule is removed when its mean responsibility < delta.
    eps : float, default=1e-10
        eta and class probabilities are kept in [eps, 1 - eps].
    eps_schedule : sequence of float, default=(0.3, 0.1, 0.03, 0.01, 0.001)
        Annealed warm-up: before the final iterations (clamp ``eps``, at most
        ``max_iter``), each restart runs up to 3 iterations clamping eta at each
        of these values in turn. With eta clamped at 1e-10 from the start, one
        mismatching split costs log(1e-10) = -23 nats, so region boundaries
        freeze where the random start put them; a softer clamp first lets the
        targets move them (on Synthetic1 this turns 6/10 into 10/10 data seeds
        with the 4 true rules, see tests/test_synthetic.py). ``()`` runs Algorithm 1 exactly as published.
    keep_duplicate_splits : bool, default=False
        Keep repeated splits. By default a split is dropped when another has the same
        feature, the same test (threshold, or category set) and the same missing
        direction, or differs only in a missing direction that no training row takes
        (the feature has no missing value in X at fit time): the FAB penalty grows
        with the number of splits L, and such splits give identical binary features.
    task : {"auto", "regression", "classification"}, default="auto"
        "auto" follows the estimator (classifier or regressor); for a split
        array it follows the type of y.
    feature_names : list of str, optional
        Names used in printed rules; by default the DataFrame columns of X at
        fit time, else the estimator's feature_names_in_, else x0, x1, ...
    subsample : "auto", int, float or None, default="auto"
        Restarts on a subsample, for large inputs: every restart is fitted on the
        same random subsample of this many rows (a float: this share of the rows)
        and the restart with the smallest training error on all rows is kept.
        "auto" uses 30,000 rows when there are more than 100,000; None fits every
        restart on all rows. A single restart is always fitted on all rows.
        On 1,000,000 rows this is about 20x faster and as accurate (README,
        Performance).
    max_splits : "auto", int or None, default="auto"
        Fit the mixture on this many of the ensemble's splits, those with the largest
        training gain (scikit-learn's sample-weighted impurity decrease, XGBoost's
        loss_changes, LightGBM's split_gain, HistGradientBoosting's gain; a repeated
        split counts with its largest gain). "auto": ceil(10 sqrt(n_samples)). None:
        every split (the paper). With thousands of splits the binary features
        outweigh the output, and the regions follow where X lies rather than what the
        ensemble predicts. Split arrays carry no gain: all their splits are kept.
    penalty_splits : {"all", "selected"}, default="all"
        The number of splits L in FAB's penalty (eq. 12): the ensemble's distinct
        splits ("all", the complexity of the model being simplified) or the selected
        ones. "all" keeps FAB's choice of K where the paper's experiments have it
        (Synthetic1: 4 rules); "selected" penalises less and keeps more rules.
    rule_list : bool, default=True
        The printed rules are the predictor: each restart's components become an
        ordered rule list (first match), its outputs refitted on the training points
        each rule is the first match for, its conditions pruned, and the restart with
        the smallest training error of its list is kept (see defrag/_rule_list.py).
        ``predict`` and ``evaluate`` use the list; the mixture's MAP prediction stays
        ``predict_map``. False: the paper's rules and MAP prediction
        (``DefragModel.paper`` sets it with ``max_splits=None``).
    prune_tol : float in [0, 1], default=0.0
        A rule list's condition is dropped when the list's training loss grows by at
        most this share of the loss of one constant prediction (0: not at all).
    random_state : int, RandomState or None
    n_jobs : int or None, default=None
        Restart workers (threads; -1: all cores). None uses every core the OpenMP
        runtime allows (OMP_NUM_THREADS): on up to 100,000 rows, restarts side by
        side on one thread each, which keeps its speed when other processes take
        cores; on more rows, restarts in turn on all threads. OpenMP threads per
        restart are capped so that the total does not exceed the cores, and the
        last restarts take over the threads of finished ones. Results do not depend
        on n_jobs or the thread counts.
    verbose : int, default=0
        Log progress of each restart (logger "defrag") when > 0.

    Attributes
    ----------
    rules_ : RuleSet, the rules as printed and, with rule_list, as predicted
    n_rules_ : int, the rules of the list, its default ("otherwise") included: the
        number of its regions, comparable with a tree's leaves (the components'
        number with rule_list=False)
    n_components_ : int, the mixture's components that FAB kept
    n_all_splits_ : int, the ensemble's distinct splits (before max_splits)
    classes_ : ndarray (classification)
    task_ : str
    splits_ : SplitTable; ``splits_.encoding`` codes inputs as the source model does
        (category codes, categories of the DataFrame given to fit, zero as missing)
    eta_, alpha_ : fitted Bernoulli parameters (n_components_, n_splits) and weights
    mean_, precision_ : Gaussian outputs (regression); gamma_ : class probabilities
    lower_bound_ : ndarray, the bound (eq. 12) per outer iteration of the kept restart
        (EM-KL: the bound (6) of the 2016 paper minus the gate's penalty)
    gate_weights_ : ndarray (n_components_, n_splits), EM-KL's gate weights w_k
    lower_bound_phase_ : ndarray, the eps_schedule phase of each iteration (the
        bound is non-decreasing within a phase)
    restart_errors_ : ndarray, training error rate (regression: mean squared error) of
        every restart on all rows: of its rule list, or with rule_list=False of its MAP
        prediction
    subsample_size_ : int, rows each restart was fitted on (n_samples without subsample)
    fit_seconds_ : dict, wall-clock seconds of the fit's phases, in order: "splits" (reading
        the model, the split table), "targets" (the ensemble's predictions when y is None),
        "inputs" (encoding X, the rank tables), "restarts", "rules" (the printed rules)
    restart_n_rules_ : ndarray, number of rules of every restart
    n_features_in_, feature_names_in_ (when X is a DataFrame)
    """

    def __init__(self, estimator=None, *, max_rules=10, method="fab", n_restarts=20,
                 max_iter=100, tol=1e-6, kappa=1e-6, delta=1e-8, eps=1e-10,
                 eps_schedule=(0.3, 0.1, 0.03, 0.01, 0.001), keep_duplicate_splits=False,
                 task="auto", feature_names=None, subsample="auto", max_splits="auto",
                 penalty_splits="all", rule_list=True, prune_tol=0.0, gate_l2=1.0,
                 random_state=None, n_jobs=None, verbose=0):
        self.estimator = estimator
        self.max_rules = max_rules
        self.method = method
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.kappa = kappa
        self.delta = delta
        self.eps = eps
        self.eps_schedule = eps_schedule
        self.keep_duplicate_splits = keep_duplicate_splits
        self.task = task
        self.feature_names = feature_names
        self.subsample = subsample
        self.max_splits = max_splits
        self.penalty_splits = penalty_splits
        self.rule_list = rule_list
        self.prune_tol = prune_tol
        self.gate_l2 = gate_l2
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ checks
    def _check_params(self):
        check_positive_int("max_rules", self.max_rules)
        check_positive_int("n_restarts", self.n_restarts)
        check_positive_int("max_iter", self.max_iter)
        if self.method not in ("fab", "em", "em-kl"):
            raise ValueError(f"method must be 'fab', 'em' or 'em-kl'; got {self.method!r}")
        if not (isinstance(self.gate_l2, numbers.Real) and not isinstance(self.gate_l2, bool)
                and 0.0 <= self.gate_l2 < np.inf):
            raise ValueError(f"gate_l2 must be a finite number >= 0; got {self.gate_l2!r}")
        if self.task not in ("auto", "regression", "classification"):
            raise ValueError(f"task must be 'auto', 'regression' or 'classification'; got {self.task!r}")
        for name, lo, hi in (("tol", 0.0, np.inf), ("kappa", 0.0, 0.5), ("delta", 0.0, 1.0), ("eps", 0.0, 0.5)):
            v = getattr(self, name)
            if not isinstance(v, numbers.Real) or not (lo <= v < hi) or (name in ("kappa", "eps") and v <= 0):
                raise ValueError(f"{name} must be a number in the range ({lo}, {hi}); got {v!r}")
        if self.kappa <= self.eps:
            raise ValueError("kappa must be larger than eps")
        try:
            sched = self._schedule()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"eps_schedule must be a sequence of numbers; got {self.eps_schedule!r}") from exc
        if np.any(~(sched >= self.eps)) or np.any(sched >= 0.5) or sched.size > 100:
            raise ValueError(f"eps_schedule values must lie in [eps, 0.5) (at most 100); got {self.eps_schedule!r}")
        if self.max_iter > 10**7:
            raise ValueError(f"max_iter must be at most 10**7; got {self.max_iter}")
        sub = self.subsample
        if not (sub is None or (isinstance(sub, str) and sub == "auto")
                or (isinstance(sub, numbers.Integral) and not isinstance(sub, bool) and sub >= 1)
                or (isinstance(sub, numbers.Real) and not isinstance(sub, (bool, numbers.Integral))
                    and 0.0 < sub <= 1.0)):
            raise ValueError(
                f"subsample must be 'auto', None, an integer >= 1 or a float in (0, 1]; got {sub!r}"
            )
        check_n_jobs(self.n_jobs)
        ms = self.max_splits
        if not (ms is None or (isinstance(ms, str) and ms == "auto")
                or (isinstance(ms, numbers.Integral) and not isinstance(ms, bool) and ms >= 1)):
            raise ValueError(f"max_splits must be 'auto', None or an integer >= 1; got {ms!r}")
        if self.penalty_splits not in ("all", "selected"):
            raise ValueError(f"penalty_splits must be 'all' or 'selected'; got {self.penalty_splits!r}")
        if not isinstance(self.rule_list, (bool, np.bool_)):
            raise ValueError(f"rule_list must be True or False; got {self.rule_list!r}")
        if not (isinstance(self.prune_tol, numbers.Real) and 0.0 <= self.prune_tol <= 1.0):
            raise ValueError(f"prune_tol must be a number in [0, 1]; got {self.prune_tol!r}")

    def _subsample_size(self, n_samples):
        """Rows of the screening subsample, or n_samples when restarts are not screened."""
        sub = self.subsample
        if sub is None or self.n_restarts == 1:
            return n_samples
        if isinstance(sub, str):  # "auto"
            size = AUTO_SUBSAMPLE if n_samples > AUTO_SUBSAMPLE_ABOVE else n_samples
        elif isinstance(sub, numbers.Integral):
            size = int(sub)
        else:
            size = int(np.ceil(sub * n_samples))
        return max(1, min(size, n_samples))

    def _max_splits(self, n_samples):
        """Splits kept for the fit: 'auto' keeps ceil(10 sqrt(N)), None all."""
        if self.max_splits is None:
            return None
        if isinstance(self.max_splits, str):  # "auto"
            return int(np.ceil(AUTO_SPLITS_PER_ROOT * np.sqrt(n_samples)))
        return int(self.max_splits)

    @classmethod
    def paper(cls, estimator=None, **params):
        """The published method (Hara & Hayashi, Algorithm 1) as the paper evaluates it: every
        split of the ensemble, the rules read off the mixture's components in weight
        order, prediction by the two-step MAP (eq. 10-11), restarts chosen by its
        training error. ``params`` are DefragModel's other parameters."""
        return cls(estimator, **{"max_splits": None, "rule_list": False, **params})

    def _schedule(self):
        if self.eps_schedule is None:
            return np.zeros(0)
        return np.asarray(self.eps_schedule, dtype=np.float64).reshape(-1)

    def _source(self, n_features):
        """The SourceModel of the estimator, its feature count checked against X's first
        (a malformed model's count must not size anything)."""
        return checked_source(self.estimator, n_features)

    def _task(self, source, y):
        """The task: as set, else the model's own, else from the type of y."""
        split_array = isinstance(source, SplitArraySource)
        if split_array and y is None:
            raise ValueError("y is required when the splits are given as an array")
        if self.task != "auto":
            return self.task
        if source.task is not None:
            return source.task
        if y is None:  # a raw Booster
            raise ValueError("y is required with a raw Booster; or pass the scikit-learn wrapper")
        kind = type_of_target(y)
        if kind in ("binary", "multiclass"):
            return "classification"
        if kind == "continuous" or not split_array:
            return "regression"
        raise ValueError(f"cannot infer the task from y of type {kind!r}; set task=")

    def _encode_target(self, source, y, task, X_input):
        if y is None:
            if not source.has_predict:
                raise ValueError("y is required when the model has no scikit-learn predict")
            y = source.predict(X_input)
        y = target_values(y, task)
        if task == "regression":
            return regression_target(y, *mean_and_variance(y)), None
        classes = target_classes(source.classes, y)
        return class_target(y, classes), classes

    # --------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Fit the rules to (X, y), or to the ensemble's predictions on X when y is None.

        X may be a Dask array or DataFrame (y then None, a Dask array or Series, or a NumPy
        array): see defrag/_dask.py."""
        self._check_params()
        if is_dask_collection(X) or is_dask_collection(y):
            from .fit.dask_rows import fit_dask

            return fit_dask(self, X, y)
        phases = _PhaseClock()
        names_in = feature_names_of(X)
        X_input = X
        source = self._source(n_columns(X))
        task = self._task(source, y)
        splits = source.split_table(self.keep_duplicate_splits)
        # the inputs as the source model reads them (category codes, zero as missing)
        splits.encoding = splits.encoding.bind(X)
        Xf = splits.encoding.transform(X, allow_nan=True)
        if Xf.shape[0] < 1:
            raise ValueError("X has no samples")
        if y is not None:
            n_y = len(y) if hasattr(y, "__len__") else None
            if n_y != Xf.shape[0]:
                raise ValueError(f"y has {n_y} entries but X has {Xf.shape[0]} samples")
        _check_missing(Xf, splits)
        if not self.keep_duplicate_splits:
            splits = splits.without_idle_directions(Xf)
        n_all_splits = len(splits)
        max_splits = self._max_splits(Xf.shape[0])
        if max_splits is not None:
            splits = splits.top(max_splits)
        phases.lap("splits")
        target, classes = self._encode_target(source, y, task, X_input)
        names = self._feature_names(Xf.shape[1], names_in)
        phases.lap("targets")

        # A single class (or a constant target) needs a single rule: more components
        # could only describe where the inputs lie, not the target.
        single_class = np.unique(target.y).size == 1 or (  # a regressor's constant, to rounding
            target.n_classes == 0 and np.ptp(target.y) <= 1e-12 * max(1.0, float(np.max(np.abs(target.y)))))
        n_components = 1 if single_class else self.max_rules
        workers, threads = thread_budget(self.n_jobs, self.n_restarts, Xf.shape[0])
        self._check_memory(splits, Xf.shape, n_components, target.n_classes, workers, threads,
                           tree_bytes=source.tree_bytes())

        X_prep = splits.prepare(Xf)
        threads = useful_threads(workers * threads, Xf.shape[0])  # outside the restarts: all
        emkl = self.method == "em-kl"  # the gate's kernels take the rank path only
        s_matrix = splits.kernel_input(X_prep, threads, bits=False if emkl else None)
        problem = _fit_problem(splits, s_matrix, target)
        options = self._fit_options(splits, n_components, n_all_splits)
        # EM-KL: its own restarts and scoring; the rule list of the kept restart only
        kernels = dict(restart=_emkl.run_restart, score=_emkl.training_error) if emkl else {}
        random_state = check_random_state(self.random_state)
        entropy = random_state.randint(np.iinfo(np.int32).max)
        n_sub = self._subsample_size(Xf.shape[0])
        rows = None
        if n_sub < Xf.shape[0]:
            rows = np.sort(random_state.choice(Xf.shape[0], n_sub, replace=False))
        rule_list = restart_list = None
        if self.rule_list:
            X_fit, y_fit, refit = X_prep, target.y, None
            if rows is not None:  # screened restarts: the list's error on all rows (refitted on them)
                X_fit, y_fit = np.ascontiguousarray(X_prep[rows]), target.y[rows]
                refit = functools.partial(_TrainingRows(X_prep).refit_rule_list, target=target, classes=classes)
            rule_list = self._rule_list_scorer(splits, X_fit, y_fit, target, classes, names, refit)
            restart_list = None if emkl else rule_list
        phases.lap("inputs")
        with _verbose_logging(self.verbose):
            if rows is not None:
                sub_target = dataclasses.replace(target, y=np.ascontiguousarray(target.y[rows]))
                sub_problem = _fit_problem(splits, {  # ranks are feature-major, bits row-major
                    k: np.ascontiguousarray(v[:, rows] if k == "ranks" else v[rows])
                    for k, v in s_matrix.items()}, sub_target)
                logger.info("restarts fitted on %d of %d rows", n_sub, Xf.shape[0])
                results, best = run_screened_restarts(problem, sub_problem, target, sub_target,
                                                      options, self.n_restarts, entropy, self.n_jobs,
                                                      rule_list=restart_list, **kernels)
            else:
                results, best = run_restarts(problem, target, options, self.n_restarts, entropy,
                                             self.n_jobs, rule_list=restart_list, **kernels)
            if emkl and rule_list is not None:
                best = dataclasses.replace(best, rule_list=rule_list(best.params)[0])
        phases.lap("restarts")

        return self._store_fit(_TrainingRows(X_prep, threads), task=task, classes=classes, names_in=names_in,
                               names=names, splits=splits, n_all_splits=n_all_splits, n_sub=n_sub,
                               results=results, best=best, target=target, subsampled=rows is not None,
                               phases=phases)

    def _store_fit(self, training, *, task, classes, names_in, names, splits, n_all_splits, n_sub,
                   results, best, target, subsampled, phases):
        """The fitted attributes from the restarts' results. training: the training rows
        (_TrainingRows in memory, defrag/_dask.py's on a cluster); subsampled: the restarts
        were fitted on a subsample (their rule lists are refitted on all rows)."""
        emkl = self.method == "em-kl"
        # Only now, with the run complete, replace the fitted state: a failed refit
        # must not leave parameters and split table out of step.
        for name in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, name)
        self.task_ = task
        if task == "classification":
            self.classes_ = classes
        self.n_features_in_ = training.shape[1]
        if names_in is not None:
            self.feature_names_in_ = names_in
        self.splits_ = splits
        # error rates (mean squared errors in regression): the restarts' losses on all rows
        self.restart_errors_ = np.array([r.train_error for r in results]) / training.shape[0]
        self.restart_n_rules_ = np.array([r.n_components if r.rule_list is None else len(r.rule_list.rules) + 1
                                          for r in results])
        self.n_all_splits_ = int(n_all_splits)
        self.subsample_size_ = int(n_sub)
        self.lower_bound_ = best.lower_bound
        self.lower_bound_phase_ = best.phases
        self.n_iter_ = int(best.lower_bound.size)

        # Rules ordered by weight (alpha), heaviest first.
        order = np.argsort(-best.params["alpha"], kind="stable")
        p = {name: a[order] for name, a in best.params.items()}
        self.eta_, self.alpha_ = p["eta"], p["alpha"]
        if task == "regression":
            self.mean_, self.precision_ = p["mean"], p["precision"]
        else:
            self.gamma_ = p["gamma"]
        if emkl:
            self.gate_weights_ = p["w"]
        self.n_components_ = int(order.size)
        if best.rule_list is None:
            self.rules_ = self._build_rules(training.X, target, names, training.threads)
        else:
            fitted = best.rule_list
            if subsampled:  # fitted on the subsample: outputs refitted on all rows
                fitted = training.refit_rule_list(fitted.rules, target, classes)
            self.rules_ = RuleSet(fitted.rules, fitted.default_prediction, fitted.default_proba, names,
                                  classes, supports_missing=splits.supports_missing,
                                  encoding=splits.encoding, feature_names_in=names_in)
        # printed for all training rows, once: thresholds, '(or missing)', shares
        self.rules_ = training.on_training_rows(self.rules_)
        # a rule list's default ("otherwise") is one of its rules: n_rules_ counts its
        # regions, comparable with a tree's leaves; the paper's rules are its components
        self.n_rules_ = len(self.rules_) + 1 if self.rule_list else self.n_components_
        phases.lap("rules")
        self.fit_seconds_ = phases.seconds
        with _verbose_logging(self.verbose):
            logger.info("fit in %.3f s: %s", sum(phases.seconds.values()),
                        ", ".join(f"{k} {v:.3f} s" for k, v in phases.seconds.items()))
        return self

    def _fit_options(self, splits, n_components, n_all_splits):
        """The options of the restarts (run_restart's)."""
        return dict(
            n_splits=len(splits), n_components=n_components, method=self.method,
            max_iter=self.max_iter, tol=float(self.tol), delta=float(self.delta), eps=float(self.eps),
            eps_schedule=tuple(float(e) for e in self._schedule()),
            penalty_splits=n_all_splits if self.penalty_splits == "all" else 0,
            gate_l2=float(self.gate_l2),
        )

    def _check_memory(self, splits, shape, n_components, n_classes, workers, threads, n_fit=None,
                      tree_bytes=0):
        """DefragMemoryError before allocating when the fit's working set (defrag/_memory.py)
        exceeds the memory limit (n_fit: the rows of the restarts, by default subsample's;
        tree_bytes: the source model's trees as read, held through the fit)."""
        n, d = shape
        bits = splits.uses_bits(n)
        ptr = splits.feat_ptr if bits else splits.rank_ptr
        parts = fit_estimate(
            n, self._subsample_size(n) if n_fit is None else n_fit, d, len(splits), len(splits.rank_ptr) - 1,
            (len(splits) + 63) // 64 if bits else 0, int(np.max(np.diff(ptr), initial=1)),
            n_components, n_classes, workers, threads, bool(self.rule_list))
        if tree_bytes:
            parts["the model's trees as read"] = int(tree_bytes)
        check_memory(sum(parts.values()), "DefragModel.fit",
                     "subsample= (rows per restart), n_jobs= (restarts in flight), "
                     "max_rules= (K), max_splits= (L)", parts)

    def _component_rules(self, params, splits, X_prep, names):
        """The rules (conditions, no outputs) of a mixture's components in weight order."""
        order = np.argsort(-params["alpha"], kind="stable")
        extracted = extract_rules_conditions(params["eta"][order], splits, self.kappa, X_prep, names)
        return [Rule(conditions, None) for conditions, _ in extracted]

    def _rule_list_scorer(self, splits, X_fit, y_fit, target, classes, names, refit=None):
        """rule_list(params) -> (RuleList of the components' rules fitted on the rows the
        restarts are fitted on (X_fit, y_fit), its training error on all rows) for
        run_restarts. refit(rules) -> RuleList on all rows; None: X_fit holds all rows."""
        labels = classes if target.n_classes else None

        def rule_list(params):
            rules = self._component_rules(params, splits, X_fit, names)
            fitted = fit_rule_list(rules, X_fit, y_fit, target.n_classes, labels, float(self.prune_tol))
            if refit is None:
                return fitted, fitted.loss
            return fitted, refit(fitted.rules).loss

        return rule_list

    def _feature_names(self, n_features, names_in):
        return rule_feature_names(self.feature_names, n_features, names_in, unwrap(self.estimator))

    def _build_rules(self, X_prep, target, names, threads):
        """The paper's rules: one per component in weight order, the mixture's outputs."""
        rules = []
        extracted = extract_rules_conditions(self.eta_, self.splits_, self.kappa, X_prep, names, threads)
        for k, (conditions, support) in enumerate(extracted):
            if self.task_ == "regression":
                rules.append(Rule(conditions, float(self.mean_[k]), None, support, self.alpha_[k]))
            else:
                c = int(np.argmax(self.gamma_[k]))
                rules.append(Rule(conditions, self.classes_[c], self.gamma_[k], support, self.alpha_[k]))
        common = dict(supports_missing=self.splits_.supports_missing, encoding=self.splits_.encoding,
                      feature_names_in=getattr(self, "feature_names_in_", None))
        if self.task_ == "regression":
            return RuleSet(rules, target.mean, None, names, **common)
        counts = np.bincount(target.y, minlength=target.n_classes)
        return RuleSet(rules, self.classes_[int(np.argmax(counts))], counts / counts.sum(), names,
                       self.classes_, **common)

    # ----------------------------------------------------------------- predict
    def __setstate__(self, state):
        # a DefragModel pickled before rule lists existed: it predicts as it did, by MAP
        for name, value in (("max_splits", None), ("penalty_splits", "all"), ("rule_list", False),
                            ("prune_tol", 0.0), ("gate_l2", 1.0)):
            state.setdefault(name, value)
        if "rules_" in state:
            state.setdefault("n_components_", len(state["alpha_"]))
            state.setdefault("n_all_splits_", len(state["splits_"]))
        super().__setstate__(state)

    def _check_X(self, X):
        check_is_fitted(self, "rules_")
        if is_dask_collection(X):
            raise TypeError("a Dask collection is taken by fit, predict and predict_proba (lazily); "
                            "compute X for the other methods")
        check_predict_X(X, self.n_features_in_, getattr(self, "feature_names_in_", None), "DefragModel")
        Xf = self.splits_.encoding.transform(X, allow_nan=True)
        _check_missing(Xf, self.splits_)
        return Xf

    def _map_dask(self, method, X):
        """method (predict or predict_proba) on every partition of a Dask X: a lazy Dask
        array. The partitions' tasks hold a copy of the model without its estimator."""
        check_is_fitted(self, "rules_")
        check_predict_X(X, self.n_features_in_, getattr(self, "feature_names_in_", None), "DefragModel")
        light = copy.copy(self)
        light.estimator = None  # not read by predict; a forest can be large
        if method == "predict_proba":
            return map_rows(light.predict_proba, X, np.float64, len(self.classes_))
        if self.rule_list and not self._emkl_fitted():
            dtype = self.rules_.predictions().dtype
        else:
            dtype = np.float64 if self.task_ == "regression" else self.classes_.dtype
        return map_rows(light.predict, X, dtype)

    def _params(self):
        p = {"eta": self.eta_, "alpha": self.alpha_}
        if self._emkl_fitted():
            p["w"] = self.gate_weights_
        if self.task_ == "regression":
            p.update(mean=self.mean_, precision=self.precision_)
        else:
            p["gamma"] = self.gamma_
        return p

    def _emkl_fitted(self):
        return getattr(self, "gate_weights_", None) is not None

    def _prediction_problem(self, Xf):
        """(Problem over Xf without targets, threads); EM-KL's on the rank path."""
        _, threads = thread_budget(None, 1, Xf.shape[0])
        X_prep = self.splits_.prepare(Xf)
        bits = False if self._emkl_fitted() else None
        problem = self.splits_.problem(self.splits_.kernel_input(X_prep, threads, bits=bits),
                                       n_classes=0 if self.task_ == "regression" else len(self.classes_))
        return problem, threads

    def _experts(self, Xf):
        """EM-KL: each expert's weight q(k | x, s) at each row, and its expected output
        (regression: the mean; classification: class probabilities)."""
        problem, threads = self._prediction_problem(Xf)
        weights = _gate.posterior(problem, self.eta_, self.gate_weights_, threads)
        return weights, _emkl.expected_output(weights, self._params())

    def _map_components(self, Xf):
        if self._emkl_fitted():  # the expert of largest weight q(k | x, s)
            return np.argmax(self._experts(Xf)[0], axis=1).astype(np.int32)
        problem, threads = self._prediction_problem(Xf)
        return _fit.map_assign(problem, self._params(), float(self.eps), threads)

    def apply(self, X):
        """Index of the rule that predicts each point: the first rule of ``rules_`` that
        covers it, -1 for the default (with ``rule_list=False``, the paper's MAP
        component, eq. 10)."""
        Xf = self._check_X(X)
        if not self.rule_list:
            return self._map_components(Xf)
        return self.rules_.first_match(Xf)

    def apply_map(self, X):
        """Index of each point's MAP component of the mixture (eq. 10; components are
        ordered by weight, ``alpha_``)."""
        return self._map_components(self._check_X(X))

    def predict(self, X):
        """The rules as printed: the prediction of the first rule of ``rules_`` that covers
        the point, else the default (with ``rule_list=False``, the paper's two-step MAP
        prediction, ``predict_map``). EM-KL: the mixture of experts' prediction, the
        experts' outputs weighted by q(k | x, s) (regression: their mean; classification:
        the most probable class); the printed rules predict with ``rules_.predict``. A Dask
        array or DataFrame gives a lazy Dask array."""
        if is_dask_collection(X):
            return self._map_dask("predict", X)
        return self._predict_coded(self._check_X(X))

    def predict_map(self, X):
        """The mixture's two-step MAP prediction (eq. 10-11), as the paper evaluates it."""
        return self._predict_map_coded(self._check_X(X))

    def _predict_coded(self, Xf):
        if self._emkl_fitted():
            out = self._experts(Xf)[1]
            return out if self.task_ == "regression" else self.classes_[np.argmax(out, axis=1)]
        if not self.rule_list:
            return self._predict_map_coded(Xf)
        return self.rules_.predictions()[self.rules_.first_match(Xf)]

    def _predict_map_coded(self, Xf):
        k = self._map_components(Xf)
        if self.task_ == "regression":
            return self.mean_[k]
        return self.classes_[np.argmax(self.gamma_, axis=1)[k]]

    def predict_proba(self, X):
        """Class probabilities of the rule that predicts each point: the class frequencies
        of the training points it is the first match for (with ``rule_list=False``, the
        MAP component's gamma). Classification only."""
        check_is_fitted(self, "rules_")
        if self.task_ != "classification":
            raise AttributeError("predict_proba is only available for classification")
        if is_dask_collection(X):
            return self._map_dask("predict_proba", X)
        if self._emkl_fitted():  # the mixture of experts' class probabilities
            return self._experts(self._check_X(X))[1]
        if not self.rule_list:
            return self.gamma_[self.apply_map(X)]
        first = self.apply(X)
        return self.rules_.probabilities()[first]

    def score(self, X, y):
        """Accuracy (classification) or R^2 (regression) of predict."""
        return predictive_score(self.predict(X), y, self.task_)

    def evaluate(self, X, y):
        """Test error, coverage, overlap and fidelity of the rules on (X, y).

        Returns a dict: ``error`` (misclassification rate or mean squared error of
        predict: the rules as printed), ``error_map`` (the same of the mixture's MAP
        prediction, predict_map), ``coverage`` (share of points covered by at least one rule),
        ``overlap`` (mean number of rules covering a point), ``fidelity``
        (agreement with the ensemble's predictions for classification, R^2
        against them for regression; None for a split array), ``n_rules``.
        EM-KL: ``error`` is that of the mixture of experts (predict), ``error_map`` that
        of the expert of largest weight, and ``error_rules`` that of the rules as printed
        (``rules_.predict``), which coverage and overlap describe.
        """
        Xf = self._check_X(X)
        y = np.asarray(y)
        if y.shape[0] != Xf.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {Xf.shape[0]} samples")
        pred = self._predict_coded(Xf)  # X checked and coded once
        scores = rule_scores(pred, y, self.task_, self.rules_.covering(Xf), self.estimator, X,
                             self.n_rules_, getattr(self, "classes_", None))
        emkl = self._emkl_fitted()
        error_map = scores["error"] if not (self.rule_list or emkl) else \
            prediction_error(self._predict_map_coded(Xf), y, self.task_)
        # EM-KL: the rules as printed, which are not its prediction
        rules = ({"error_rules": prediction_error(
            self.rules_.predictions()[self.rules_.first_match(Xf)], y, self.task_)} if emkl else {})
        return {"error": scores.pop("error"), "error_map": error_map, **rules, **scores}

    def _estimator_kind(self):
        """"classifier", "regressor" or None: the task as set, else the wrapped model's."""
        if self.task == "classification":
            return "classifier"
        if self.task == "regression":
            return "regressor"
        from sklearn.base import is_classifier, is_regressor

        try:
            est = unwrap(self.estimator)
        except TypeError:  # a Pipeline that transforms its inputs: fit says so
            return None
        if est is None or isinstance(est, (list, tuple, np.ndarray)):
            return None
        try:
            return "classifier" if is_classifier(est) else ("regressor" if is_regressor(est) else None)
        except (AttributeError, TypeError):  # no scikit-learn estimator (a raw Booster): unknown
            return None

    @property
    def _estimator_type(self):  # scikit-learn < 1.6 reads this
        return self._estimator_kind()

    def __sklearn_tags__(self):
        return tagged(super().__sklearn_tags__(), self._estimator_kind())

    def set_params(self, **params):
        try:
            return super().set_params(**params)
        except ValueError as exc:  # scikit-learn's message prints the estimator: its repr, not the rules
            raise ValueError(str(exc).replace(str(self), repr(self))) from None

    def __str__(self):
        if not hasattr(self, "rules_"):
            return self.__repr__()
        head = f"DefragModel: {self.n_rules_} rule{'s' if self.n_rules_ != 1 else ''} ({self.task_}, {self.method.upper()})"
        return head + "\n" + str(self.rules_)


class _TrainingRows:
    """The training rows in memory (prepared X), as the last steps of fit read them."""

    def __init__(self, X_prep, threads=1):
        self.X = X_prep
        self.shape = X_prep.shape
        self.threads = threads  # the kernels' OpenMP threads on all rows

    def refit_rule_list(self, rules, target, classes):
        return refit_rule_list(rules, self.X, target.y, target.n_classes, classes)

    def on_training_rows(self, rule_set):
        return rule_set.on_training_rows(self.X, self.threads)


class _PhaseClock:
    """Wall-clock seconds of the phases of a fit, in order (fit_seconds_)."""

    def __init__(self):
        self.seconds = {}
        self._last = time.perf_counter()

    def lap(self, name):
        now = time.perf_counter()
        self.seconds[name] = now - self._last
        self._last = now


class _verbose_logging:
    """Shows the 'defrag' logger's INFO records on stderr while verbose > 0."""

    def __init__(self, verbose):
        self.verbose = verbose
        self.handler = None

    def __enter__(self):
        # a handler of our own only where no logger on the way up has one: with the root
        # logger configured (logging.basicConfig) every line would print twice
        if self.verbose and not logger.hasHandlers():
            self.handler = logging.StreamHandler()
            self.handler.setFormatter(logging.Formatter("[defrag] %(message)s"))
            logger.addHandler(self.handler)
        if self.verbose:
            self.level = logger.level
            logger.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc):
        if self.handler is not None:
            logger.removeHandler(self.handler)
        if self.verbose:
            logger.setLevel(self.level)
        return False
