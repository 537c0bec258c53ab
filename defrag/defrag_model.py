"""DefragModel: simplify a fitted tree ensemble into a few rules (Hara & Hayashi, AISTATS 2018).

The scikit-learn estimator: its parameters, the fit's stages (defrag/fit/: prepare, search,
rules, for rows in memory or on a Dask cluster), its fitted attributes, and predictions
by the printed rules (defrag/rules/) or by the mixture (defrag/fit/mixture.py).
"""
import copy

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .evaluation import RuleEstimatorMixin, prediction_error
from .fit.config import FitConfig
from .fit.mixture import FittedMixture
from .fit.pipeline import fit_rules
from .fit.readout import sized_model
from .utils.dask_collections import is_dask_collection, map_rows
from .utils.interrupt import interruptible_fit
from .utils.validation import check_predict_X


class DefragModel(RuleEstimatorMixin, BaseEstimator):
    """Simplify a fitted tree ensemble into a few rules (defrag, FAB inference).

    Parameters
    ----------
    estimator : fitted tree ensemble or array of shape (n_splits, 2)
        A fitted scikit-learn RandomForest, ExtraTrees, GradientBoosting or
        HistGradientBoosting classifier or regressor, an XGBoost, LightGBM or CatBoost model
        (categorical splits included), or (feature index, threshold) pairs of
        splits ``x_feature > threshold`` from any ensemble. With categorical
        features X may be a DataFrame with pandas categorical columns; it is coded
        as the source library codes it (see defrag/splits/inputs.py), at fit and
        predict time alike.
    max_rules : int, default=10
        K_max for FAB (an upper bound; FAB removes superfluous rules), the exact
        number of rules for EM and EM-KL. At most the rows the restarts are fitted on,
        except that FAB on at most 10 rows fits at most as many components as rows.
    method : {"fab", "em", "em-kl"}, default="fab"
        "fab" and "em": the mixture of Hara & Hayashi (2018), by FAB inference or EM.
        "em-kl": the mixture of experts of their 2016 paper (defrag/fit/emkl.py): K =
        max_rules experts, each a Bernoulli region with a Gaussian or categorical output,
        chosen by a softmax gate q(k | x) over s as well as by its region, fitted by EM
        to the ensemble's predictions on X (the KL objective; a ``y`` given to fit makes
        it a likelihood fit to y). ``predict`` is the experts' outputs weighted by
        q(k | x, s); ``rules_`` are read off eta as for FAB; ``evaluate`` reports both.
    gate_l2 : float, default=1.0
        EM-KL only: the L2 penalty gate_l2 / 2 ||w||^2 on the gate's weights (that of
        scikit-learn's LogisticRegression with C=1); it keeps the gate's logistic
        regression bounded when components separate perfectly. EM maximises the
        log-likelihood (5) minus this penalty.
    n_restarts : int or "auto", default="auto"
        Random initialisations ("auto": 5 with rule_list="search", else the paper's 20);
        at most 20,000.
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
        Annealed warm-up: before the final iterations (clamp ``eps``), each restart runs
        up to 3 iterations clamping eta at each of these values in turn, so that region
        boundaries can still move (clamped at 1e-10, one mismatching split costs 23
        nats). ``()`` runs Algorithm 1 exactly as published.
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
        fit time, else the estimator's ``feature_names_in_``, else x0, x1, ...
    subsample : "auto", int, float or None, default="auto"
        Restarts on a subsample, for large inputs: every restart is fitted on the same
        random subsample of this many rows (a float: this share of the rows) and the one
        with the smallest training error on all rows is kept. "auto": 3,000 with the searched
        list, else 30,000 above 100,000 rows; None: all rows (also for a single restart).
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
    rule_list : {"search", True, False}, default="search"
        The printed rules predict, as an ordered list (first match); "search": searched for
        from every restart's components (fit/list_path.py; loss: squared error of y or Gini
        impurity of its classes; y None: of the ensemble's predictions).
        True: the kept restart's components as a list (rules/lists.py). False: the paper's
        rules and MAP prediction (``DefragModel.paper``); ``predict_map`` is the mixture's.
    n_rules : int or None, default=None
        rule_list="search": the list's regions (rules and default; fewer, with a warning, where
        no rule lowers the loss). None: by cross-validation (the one-SE rule on ``path_``).
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
    verbose : "auto" or int, default="auto"
        "auto": once the fit has run 2 s, one progress bar (restarts done, best error so
        far) on stderr where stderr is a terminal or in a notebook (tqdm's, the extra
        ``defrag[progress]``; without tqdm, INFO records of the logger "defrag"). 0: silent.
        > 0: log each restart (logger "defrag", shown on stderr).

    Attributes
    ----------
    rules_ : RuleSet
        The rules as printed and, with ``rule_list``, as predicted.
    n_rules_ : int
        The rules of the list, its default ("otherwise") included: the number of its
        regions, comparable with a tree's leaves (the components' number with
        ``rule_list=False``).
    path_, path_rules_, path_defaults_ : dict, list, list
        rule_list="search": per ``size`` (1 to max(max_rules, n_rules) regions) its
        ``n_conditions``, ``train_error`` and cross-validated ``validation_error`` (NaN with
        n_rules); the printed list of each size (a RuleSet per size: a larger list may split
        a smaller one's region, so the sizes are not prefixes) and each size's default; ``printed``:
        "restarts" where the kept restart's own list cross-validated better and is printed.
    n_components_ : int
        The mixture's components that FAB kept.
    n_all_splits_ : int
        The ensemble's distinct splits (before ``max_splits``).
    classes_ : ndarray
        The class labels (classification).
    task_ : str
        "regression" or "classification".
    splits_ : SplitTable
        The splits the mixture was fitted on; ``splits_.encoding`` codes inputs as the
        source model does (category codes, categories of the DataFrame given to fit,
        zero as missing).
    eta_, alpha_ : ndarray of shape (n_components, n_splits), (n_components,)
        The fitted Bernoulli parameters and mixing weights.
    mean_, precision_, gamma_ : ndarray of shape (n_components,), (n_components, n_classes)
        The Gaussian outputs (regression); the class probabilities (classification).
    lower_bound_ : ndarray
        The bound (eq. 12) per outer iteration of the kept restart (EM-KL: the bound
        (6) of the 2016 paper minus the gate's penalty).
    gate_weights_ : ndarray of shape (n_components, n_splits)
        EM-KL's gate weights w_k.
    lower_bound_phase_ : ndarray
        The ``eps_schedule`` phase of each iteration (the bound is non-decreasing
        within a phase).
    restart_errors_ : ndarray
        Training error rate (regression: mean squared error) of every restart on all
        rows: of its rule list with ``rule_list=True``, else of its MAP prediction.
    subsample_size_ : int
        Rows each restart was fitted on (n_samples without subsample).
    fit_seconds_ : dict
        Wall-clock seconds of the fit's phases, in order: "splits" (reading the model,
        the split table), "targets" (coding X, the ensemble's predictions when y is
        None), "inputs" (the s matrix), "restarts", "search" (rule_list="search"), "rules".
    restart_n_rules_ : ndarray
        Number of rules of every restart.
    n_features_in_ : int
        Number of features of X at fit time.
    feature_names_in_ : ndarray of str
        X a DataFrame: the columns read, in the model's order.
    """

    def __init__(self, estimator=None, *, max_rules=10, method="fab", n_restarts="auto",
                 max_iter=100, tol=1e-6, kappa=1e-6, delta=1e-8, eps=1e-10,
                 eps_schedule=(0.3, 0.1, 0.03, 0.01, 0.001), keep_duplicate_splits=False,
                 task="auto", feature_names=None, subsample="auto", max_splits="auto",
                 penalty_splits="all", rule_list="search", n_rules=None, prune_tol=0.0, gate_l2=1.0,
                 random_state=None, n_jobs=None, verbose="auto"):
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
        self.n_rules = n_rules
        self.prune_tol = prune_tol
        self.gate_l2 = gate_l2
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @classmethod
    def paper(cls, estimator=None, **params):
        """The published method (Hara & Hayashi, Algorithm 1) as the paper evaluates it: every split,
        the rules read off the components in weight order, prediction by the two-step MAP (eq.
        10-11), restarts chosen by its training error. ``params``: DefragModel's other parameters."""
        return cls(estimator, **{"max_splits": None, "rule_list": False, "n_restarts": 20, **params})

    # --------------------------------------------------------------------- fit
    @interruptible_fit()
    def fit(self, X, y=None):
        """Fit the rules to (X, y), or to the ensemble's predictions on X when y is None. A
        DataFrame's columns are matched by name to the model's feature names (others ignored);
        a Dask X (y: None, a Dask array or Series, or NumPy): see defrag/fit/dask_rows.py.
        Regression targets (y, or the predictions) lie within +-1e60 and, unless constant,
        span at least 1e-60: the rules are the same at any scale there, outputs scaled."""
        result = fit_rules(FitConfig.from_params(self.get_params(deep=False)), self.estimator, X, y,
                           self.feature_names)
        # only now, the run complete: a failed refit leaves the fitted state as it was
        for name in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, name)
        for name, value in result.attributes().items():
            setattr(self, name, value)
        return self

    def __setstate__(self, state):
        # a DefragModel pickled before rule lists existed: it predicts as it did, by MAP
        for name, value in (("max_splits", None), ("penalty_splits", "all"), ("rule_list", False),
                            ("prune_tol", 0.0), ("gate_l2", 1.0), ("n_rules", None)):
            state.setdefault(name, value)
        if "rules_" in state:
            state.setdefault("n_components_", len(state["alpha_"]))
            state.setdefault("n_all_splits_", len(state["splits_"]))
        super().__setstate__(state)

    def with_size(self, n_rules):
        """The fitted model with n_rules regions, a size on ``path_``, without a refit."""
        return sized_model(self, n_rules)

    # ----------------------------------------------------------------- predict
    def _reading(self):
        return self.splits_.encoding, self.splits_.supports_missing

    def _task_setting(self):
        return self.task

    def _description(self):
        return f"{self.task_}, {self.method.upper()}"

    def _predicts_by(self):
        return "experts" if self._emkl_fitted() else "first match" if self.rule_list else "map"

    def _map_dask(self, method, X):
        """method (predict or predict_proba) on every partition of a Dask X: a lazy Dask
        array. The partitions' tasks hold a copy of the model without its estimator."""
        check_is_fitted(self, "rules_")
        X = check_predict_X(X, self.n_features_in_, getattr(self, "feature_names_in_", None), "DefragModel")
        light = copy.copy(self)
        light.estimator = None  # not read by predict; a forest can be large
        if method == "predict_proba":
            return map_rows(light.predict_proba, X, np.float64, len(self.classes_))
        dtype = self.rules_.predictions().dtype if self._by_rules() else \
            np.float64 if self.task_ == "regression" else self.classes_.dtype
        return map_rows(light.predict, X, dtype)

    def _emkl_fitted(self):
        return getattr(self, "gate_weights_", None) is not None

    def _mixture(self):
        """The fitted mixture (fit/mixture.py): its MAP or mixture-of-experts predictions."""
        params = {"eta": self.eta_, "alpha": self.alpha_, **({"w": self.gate_weights_} if self._emkl_fitted() else {})}
        params.update(dict(mean=self.mean_, precision=self.precision_) if self.task_ == "regression"
                      else dict(gamma=self.gamma_))
        return FittedMixture(self.splits_, params, getattr(self, "classes_", None), self.eps)

    def _by_rules(self):
        return self.rule_list and not self._emkl_fitted()

    def apply(self, X):
        """Index of the rule that predicts each point: the first rule of ``rules_`` that
        covers it, -1 for the default (with ``rule_list=False``, the paper's MAP
        component, eq. 10)."""
        check_is_fitted(self, "rules_")
        if self.rule_list and not is_dask_collection(X):  # (_check_X refuses a Dask one)
            return self.rules_.apply(self._matched_X(X), matched=True)
        return self._mixture().components(self._check_X(X))

    def apply_map(self, X):
        """Index of each point's MAP component of the mixture (eq. 10; components are
        ordered by weight, ``alpha_``)."""
        return self._mixture().components(self._check_X(X))

    def predict(self, X):
        """The rules as printed: the prediction of the first rule of ``rules_`` that covers
        the point, else the default (with ``rule_list=False``, the paper's two-step MAP
        prediction, ``predict_map``). EM-KL: the mixture of experts' prediction, the
        experts' outputs weighted by q(k | x, s) (regression: their mean; classification:
        the most probable class); the printed rules predict with ``rules_.predict``. A Dask
        array or DataFrame gives a lazy Dask array."""
        check_is_fitted(self, "rules_")
        if is_dask_collection(X):
            return self._map_dask("predict", X)
        if self._by_rules():
            # the rules' own reading: the features they name only (a NaN elsewhere, or an
            # infinite value, is what rules_.predict takes too)
            return self.rules_.predictions()[self.rules_.apply(self._matched_X(X), matched=True)]
        return self._predict_coded(self._check_X(X))

    def _matched_X(self, X):
        """X checked against the fit and its columns matched by name, not coded."""
        check_is_fitted(self, "rules_")
        return check_predict_X(X, self.n_features_in_, getattr(self, "feature_names_in_", None),
                               type(self).__name__)

    def predict_map(self, X):
        """The mixture's two-step MAP prediction (eq. 10-11), as the paper evaluates it."""
        return self._mixture().predict_map(self._check_X(X))

    def _predict_coded(self, Xf):
        if self._by_rules():
            return self.rules_.predictions()[self.rules_.first_match(Xf)]
        return self._mixture().predict(Xf)

    def predict_proba(self, X):
        """Class probabilities of the rule that predicts each point: the class frequencies
        of the training points it is the first match for (with ``rule_list=False``, the
        MAP component's gamma; EM-KL: the mixture of experts'). Classification only."""
        check_is_fitted(self, "rules_")
        if self.task_ != "classification":
            raise AttributeError("predict_proba is only available for classification")
        if is_dask_collection(X):
            return self._map_dask("predict_proba", X)
        if self._by_rules():
            return self.rules_.probabilities()[self.rules_.apply(self._matched_X(X), matched=True)]
        return self._mixture().predict_proba(self._check_X(X))

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
        Xf, y, scores = self._scores(X, y)
        emkl = self._emkl_fitted()
        error_map = scores["error"] if not (self.rule_list or emkl) else \
            prediction_error(self._mixture().predict_map(Xf), y, self.task_)
        # EM-KL: the rules as printed, which are not its prediction
        rules = ({"error_rules": prediction_error(
            self.rules_.predictions()[self.rules_.first_match(Xf)], y, self.task_)} if emkl else {})
        return {"error": scores.pop("error"), "error_map": error_map, **rules, **scores}
