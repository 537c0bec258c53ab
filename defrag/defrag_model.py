"""DefragModel (Hara & Hayashi, AISTATS 2018): the scikit-learn estimator over the fit's
stages (defrag/fit/: prepare, search, rules; rows in memory or on a Dask cluster; the printed
forms searched for in defrag/search/), predicting by the printed rules (defrag/rules/) or by
the mixture (defrag/fit/mixture.py)."""

from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .evaluation import RuleEstimatorMixin
from .fit.config import PARAMETER_CONSTRAINTS, FitConfig
from .fit.pipeline import fit_rules
from .fit.readout import MixtureReadoutMixin
from .search.path_readout import sized_model
from .sources import transformed_rows
from .sources.fitting import EnsembleExplainerMixin
from .utils.dask_collections import is_dask_collection
from .utils.interrupt import interruptible_fit
from .utils.validation import check_predict_X


class DefragModel(MixtureReadoutMixin, EnsembleExplainerMixin, RuleEstimatorMixin, BaseEstimator):
    """Explain a fitted tree ensemble by a few rules (defrag: FAB inference over its splits).

    The printed explanation is a tree of rules (``if ... elif ... else``, a box of
    conditions at each node) or, under a budget of conditions, a tree or a sum of small
    trees, whichever cross-validates best. Counts (docs: "Regions and conditions"): a
    *region* is a set of rows with one prediction (a leaf, a rule of a list, its
    "otherwise"); a *condition* is one comparison a reader makes (``a < x <= b`` is two).

    Parameters
    ----------
    estimator : tree ensemble or array of shape (n_splits, 2)
        A scikit-learn RandomForest, ExtraTrees, GradientBoosting or HistGradientBoosting
        classifier or regressor, an XGBoost, LightGBM or CatBoost model (categorical splits
        included), fitted (explained as it is) or not (cloned and fitted on ``fit(X, y)``),
        or (feature, threshold) pairs of splits ``x_feature > threshold`` of any ensemble.
    max_conditions : int, optional
        The budget: the explanation of smallest cross-validated error among those that
        print at most this many comparisons (``n_conditions_``). A tree, or in regression
        and with two classes a sum of trees.
    n_regions : int, optional
        The explanation's regions, exactly (fewer, with a warning, where no more lower the
        training loss). Neither set: chosen by cross-validation among trees a reader
        checks in at most 1.3 times the comparisons per row of a plain tree of as many
        regions, or of the closest plain tree where none comes within one standard error
        of it (``path_``).
    form : {"auto", "tree", "sum", "list", "restarts", "paper"}, default="auto"
        What is printed: "auto", a tree (or under a budget a tree or a sum); "tree";
        "sum" (regression and two classes); "list", an ordered rule list searched for;
        "restarts", the kept restart's components as a list; "paper", the paper's rules,
        one per component, predicted by MAP (``DefragModel.paper``).
    random_state : int, RandomState or None
        Same value, same explanation, whatever the thread count.
    n_jobs : int or None, default=None
        Restart workers (threads; -1: all cores; None: every core OpenMP allows).
    verbose : "auto" or int, default="auto"
        "auto": a progress bar once the fit has run 2 s (stderr or a notebook); 0: silent;
        > 0: log each restart (logger "defrag").

    Attributes
    ----------
    estimator_ : estimator or ndarray
        The model explained: ``estimator`` when fitted, else its fitted clone.
    rules_ : RuleTree
        The explanation as printed; ``predict`` is exactly its text.
    n_regions_, n_conditions_ : int
        Its regions and the comparisons it prints.
    fitted_to_ : {"y", "predictions"}
        What the printed values are: the y given to ``fit``, or the ensemble's predictions
        (``fit(X)``); the header says it.
    path_ : dict
        Searched forms: per candidate its ``form``, ``literal_price`` (the price of a box's
        extra conditions; inf: a plain tree), ``size``, ``n_regions``, ``n_conditions``,
        cross-validated ``validation_error`` and ``mean_checks`` (comparisons read per
        row), and ``chosen`` (form "list": per size as before).
    reference_kept_, reference_diff_ : bool, ExplanationDiff
        With ``reference_rules``: whether its regions were kept, and what changed from it
        (``RuleTree.diff``: regions kept, changed, added, removed).
    path_rules_ : sequence
        The printed explanation of each candidate of ``path_`` (``with_size`` reads it);
        for a searched tree each is built when first read.
    classes_, task_, n_features_in_, feature_names_in_ :
        As in scikit-learn.
    splits_ : SplitTable
        The splits the mixture was fitted on (``splits_.encoding`` codes inputs as the
        source model does).
    eta_, alpha_, mean_, precision_, gamma_, gate_weights_ : ndarray
        The mixture's parameters, components by weight.
    n_components_, n_all_splits_, n_iter_, lower_bound_, lower_bound_phase_ :
        Components kept, the ensemble's distinct splits, the kept restart's iterations and
        bound (eq. 12) per iteration and its warm-up phase.
    restart_errors_, restart_n_regions_, subsample_size_, fit_seconds_ :
        Every restart's training error and rules, the rows of each, seconds per phase.

    Other Parameters
    ----------------
    method : {"fab", "em", "em-kl"}, default="fab"
        FAB inference, EM, or the 2016 mixture of experts (EM-KL: a softmax gate over the
        splits; predict is the experts' mixture, its rules the kept restart's list).
    n_components : int, default=10
        The mixture's components: FAB's upper bound K_max, EM's K.
    n_restarts : int or "auto", default="auto"
        Random initialisations ("auto": 5 for the searched forms, else the paper's 20).
    max_iter, tol : int, float, default=100, 1e-6
        Outer iterations per restart; relative tolerance on the lower bound.
    kappa, delta, eps : float, default=1e-6, 1e-8, 1e-10
        A split is a region's condition when its eta is within kappa of 0 or 1; FAB drops a
        component of mean responsibility below delta; eta is kept in [eps, 1 - eps].
    eps_schedule : sequence of float, default=(0.3, 0.1, 0.03, 0.01, 0.001)
        Warm-up clamps of eta before the final iterations (``()``: Algorithm 1 as published).
    keep_duplicate_splits : bool, default=False
        Keep splits that repeat another (same feature, test and missing direction).
    task : {"auto", "regression", "classification"}, default="auto"
        Set the task where the model cannot say it ("auto": the model's).
    feature_names : list of str, optional
        Names printed (default: the DataFrame's columns, the model's, else x0, x1, ...).
    subsample : "auto", int, float or None, default="auto"
        Rows each restart is fitted on ("auto": 3,000 for the searched forms, else 30,000
        above 100,000 rows; None: all).
    max_splits : "auto", int or None, default="auto"
        The splits of largest gain the mixture is fitted on ("auto": ceil(10 sqrt(n)); None:
        every split, as the paper).
    penalty_splits : {"all", "selected"}, default="all"
        The number of splits L in FAB's penalty (eq. 12).
    max_regions : int, optional
        Regions of the largest explanation searched (default 10, or n_regions, or
        max_conditions + 1).
    prune_tol : float in [0, 1], default=0.0
        Form "list" and "restarts": a condition is dropped where the loss grows by at most
        this share of one constant's.
    gate_l2 : float, default=1.0
        EM-KL: the L2 penalty on the gate's weights.
    reference_rules : RuleTree, RuleSet or path, optional
        A warm start: an earlier explanation (or its JSON file) over the same features,
        edited on today's rows: its boxes kept where they still hold, thresholds moved to
        today's split points, regions removed or added, outputs re-estimated where they
        moved beyond their noise, each edit only where it pays ``reference_edit_price``.
        The reference as it is and edited are cross-validated as every candidate (the
        edits made on each fold's training part); the first of the two whose validation
        error is within 1% of the candidate chosen otherwise is printed
        (``reference_kept_``, ``reference_diff_``).
    reference_edit_price : float in [0, 1], default=0.02
        A warm start's price of an edit (a moved threshold, a region removed or added): the
        share of the squared error of the rows (about their mean) an edit must gain.

    See Also
    --------
    defrag.baselines.BornAgainTree : One tree that mimics the ensemble.
    ProxyTreeClassifier : A small tree fitted to the ensemble's class probabilities.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> model = DefragModel(forest, max_conditions=3, random_state=0).fit(X)
    >>> model.n_conditions_ <= 3
    True
    """

    _parameter_constraints = PARAMETER_CONSTRAINTS

    def __init__(self, estimator=None, *, max_conditions=None, n_regions=None, form="auto", random_state=None,
                 n_jobs=None, verbose="auto", method="fab", n_components=10, n_restarts="auto", max_iter=100,
                 tol=1e-6, kappa=1e-6, delta=1e-8, eps=1e-10, eps_schedule=(0.3, 0.1, 0.03, 0.01, 0.001),
                 keep_duplicate_splits=False, task="auto", feature_names=None, subsample="auto",
                 max_splits="auto", penalty_splits="all", max_regions=None, prune_tol=0.0, gate_l2=1.0,
                 reference_rules=None, reference_edit_price=0.02):
        self.estimator = estimator
        self.max_conditions = max_conditions
        self.n_regions = n_regions
        self.form = form
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.method = method
        self.n_components = n_components
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
        self.max_regions = max_regions
        self.prune_tol = prune_tol
        self.gate_l2 = gate_l2
        self.reference_rules = reference_rules
        self.reference_edit_price = reference_edit_price

    @classmethod
    def paper(cls, estimator=None, **params):
        """The published method (Hara & Hayashi, Algorithm 1) as the paper evaluates it.

        Every split, the rules read off the components in weight order, prediction by the
        two-step MAP (eq. 10-11), restarts chosen by their training error.

        Parameters
        ----------
        estimator : tree ensemble or array of shape (n_splits, 2)
            As DefragModel's.
        **params : dict
            DefragModel's other parameters.

        Returns
        -------
        DefragModel
            The unfitted model.
        """
        return cls(estimator, **{"max_splits": None, "form": "paper", "n_restarts": 20, **params})

    # --------------------------------------------------------------------- fit
    @interruptible_fit()
    def fit(self, X, y=None):
        """Fit the explanation to (X, y), or to the ensemble's predictions on X when y is None.

        y means the same for every form: given, the printed values are y's (each region's
        mean of y, or its most frequent class and the class shares) and the size is chosen
        by the cross-validated error on y; the ensemble gives the splits and the candidate
        regions (its predictions guide a tree's growth). Without y the ensemble's
        predictions take y's place. The header says which (``fitted_to_``).

        An unfitted ensemble is cloned and fitted on (X, y) first. Regression targets (y, or
        the predictions) lie within +-1e60 and, unless constant, span at least 1e-60: the
        rules are the same at any scale there, outputs scaled.

        Parameters
        ----------
        X : array-like, DataFrame or Dask collection of shape (n_samples, n_features)
            The rows; a DataFrame's columns are matched by name to the model's feature
            names (others ignored); a Dask X: see defrag/fit/dask_rows.py.
        y : array-like of shape (n_samples,), optional
            The targets (None: the ensemble's predictions on X).

        Returns
        -------
        DefragModel
            The fitted model.
        """
        self._validate_params()
        config = FitConfig.from_params(self.get_params(deep=False))
        estimator = self._ensemble(X, y)
        result = fit_rules(config, estimator, X, y, self.feature_names)
        # only now, the run complete: a failed refit leaves the fitted state as it was
        for name in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, name)
        self.estimator_ = estimator
        for name, value in result.attributes().items():
            setattr(self, name, value)
        return self

    def with_size(self, n_regions=None, max_conditions=None):
        """The model as a fit with ``n_regions`` (or ``max_conditions``) prints it, without a refit.

        Read off ``path_`` (a searched form).

        Parameters
        ----------
        n_regions : int, optional
            The regions.
        max_conditions : int, optional
            The budget of conditions (give one of the two).

        Returns
        -------
        DefragModel
            A copy of the fitted model.
        """
        return sized_model(self, n_regions, max_conditions)

    # ----------------------------------------------------------------- predict
    def _reading(self):
        return self.splits_.encoding, self.splits_.supports_missing

    def _task_setting(self):
        return self.task

    def _description(self):
        form = self.rules_.form if self.rules_.form != "list" or self._by_rules() else "rules"
        fitted_to = "fitted to y" if getattr(self, "fitted_to_", None) == "y" else "fitted to the model's predictions"
        return f"{self.task_}, {form}, {self.method.upper()}, {fitted_to}"

    def _predicts_by(self):
        if self._emkl_fitted():
            return "experts"
        if not self._by_rules():
            return "map"
        return "first match" if self.rules_.form == "list" else self.rules_.form

    def apply(self, X):
        """The region of each point: its leaf of ``rules_``.

        A list: its first rule that covers it (from 0), ``len(rules_.rules)`` for its
        default; form "paper": the MAP component (eq. 10).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples,)
            The indices.
        """
        check_is_fitted(self, "rules_")
        if self._by_rules() and not is_dask_collection(X):  # (_check_X refuses a Dask one)
            return self.rules_.apply(self._matched_X(X), matched=True)
        return self._mixture().components(self._check_X(X))

    def predict(self, X):
        """Predict by the rules as printed.

        The prediction of the region of ``rules_`` each point falls in (form "paper": the
        two-step MAP prediction, ``predict_map``; EM-KL: the mixture of experts', the
        experts' outputs weighted by q(k | x, s), and ``rules_.predict`` the printed rules').

        Parameters
        ----------
        X : array-like, DataFrame or Dask collection of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray or Dask array of shape (n_samples,)
            The predictions (lazy for a Dask X).
        """
        check_is_fitted(self, "rules_")
        if is_dask_collection(X):
            return self._map_dask("predict", X)
        if self._by_rules():
            # the rules' own reading: a NaN or an infinite value where rules_.predict takes it
            return self.rules_.predict(self._matched_X(X), matched=True)
        return self._predict_coded(self._check_X(X))

    def _matched_X(self, X):
        """X checked against the fit and its columns matched by name, not coded."""
        check_is_fitted(self, "rules_")
        X = transformed_rows(self.estimator_, X)  # a Pipeline read over its transformed columns
        return check_predict_X(X, self.n_features_in_, getattr(self, "feature_names_in_", None),
                               type(self).__name__)

    def _check_X(self, X, matched=False):
        # a Pipeline read over its transformed columns: the rules read them, the model X
        rows = transformed_rows(self.estimator_, X) if hasattr(self, "estimator_") else X
        if rows is X:
            return super()._check_X(X, matched)
        coded = super()._check_X(rows, matched=True)[1]
        return (X, coded) if matched else coded

    @available_if(RuleEstimatorMixin._classifies)
    def predict_proba(self, X):
        """Class probabilities of the region of each point (classification only).

        The class shares of the training points of the region (form "paper": the MAP
        component's gamma; EM-KL: the mixture of experts').

        Parameters
        ----------
        X : array-like, DataFrame or Dask collection of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray or Dask array of shape (n_samples, n_classes)
            The probabilities, columns in ``classes_`` order.
        """
        check_is_fitted(self, "rules_")
        if is_dask_collection(X):
            return self._map_dask("predict_proba", X)
        if self._by_rules():
            return self.rules_.predict_proba(self._matched_X(X), matched=True)
        return self._mixture().predict_proba(self._check_X(X))
