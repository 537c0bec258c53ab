"""Node Harvest (Meinshausen 2010; R package nodeHarvest 0.7-3): a convex combination of
shallow nodes of the ensemble's trees.

Candidates are the nodes of every tree down to ``max_depth`` (2, as Hara & Hayashi use
it) and the root; as the package does (``makeRules``), a node with fewer than
``nodesize`` (10) training points or more than n - nodesize is dropped, and of nodes
holding the same training points one is kept. With I the (n, p) matrix of node means
(``I[i, j] = mean_j`` when point i lies in node j, else 0) and A its 0/1 pattern, the
weights solve (``getw``)

    minimise ||y - I w||^2  subject to  A w = 1 (the weights of the nodes holding each
    training point sum to 1),  w >= 0,  w_root >= 0.01.

As the package does, the equality constraints are removed by writing w = w0 + B z
(w0: the root alone, B an orthonormal basis of A's null space, here from an SVD) and a
ridge rho = 1e-5 on z makes the problem strictly convex. The remaining problem,
minimise 1/2 z'Hz + g'z subject to Bz >= lb - w0, is solved exactly by its least
distance form (Lawson & Hanson 1974, ch. 23): a non-negative least squares problem,
solved by scipy's bounded-variable least squares (BVLS, an exact active-set method,
as the package's quadprog is). Nodes whose weight is below
``weight_threshold`` (0.01) times the largest are dropped (the package does so too;
here the root is always kept, so that every point has a prediction). A point's
prediction is the weighted mean of the means of the kept nodes holding it:
``sum_j w_j mean_j 1[x in j] / sum_j w_j 1[x in j]``.

Node Harvest is a regression method; a binary classification is the regression of the
0/1 indicator of the second class (predicted when the prediction exceeds 0.5). More
than two classes: ValueError (Hara & Hayashi note the method cannot handle them).

Deviations from the package: its candidate nodes come from its own random forests fitted
to y on subsamples (``nodes=1000``); here they are the given ensemble's nodes, at most
``max_nodes`` of them (a random subset when there are more).
"""
import numbers
from numbers import Integral, Real

import numpy as np
from scipy.linalg import qr
from scipy.optimize import Bounds, LinearConstraint, lsq_linear, minimize
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.metaestimators import available_if

from ..rules import Rule, RuleSet
from ..utils.memory import check_memory_of, node_harvest_estimate
from ..utils.validation import check_positive_int
from ._base import BaselineModel
from ._paths import ConditionMaker, node_paths

ROOT_WEIGHT = 0.01  # getw: w_root >= 1 - 0.99
# getw's rho is 1e-5; with it the least distance problem below was solved wrongly on a
# 25-node case (weights of -2.5), from 1e-4 up it was right on every case tried (and the
# objective within 1e-8 of trust-constr's)
RIDGE = 1e-4


def null_space(A):
    """Orthonormal basis (columns) of the null space of A, from its SVD."""
    # the right factor only is needed: with at least as many rows as columns the thin
    # SVD has all of it (full_matrices would make an m x m left factor: 20 GB at 50,000
    # distinct membership patterns)
    _, s, vt = np.linalg.svd(A, full_matrices=A.shape[0] < A.shape[1])
    tol = max(A.shape) * np.finfo(np.float64).eps * (s[0] if s.size else 0.0)
    rank = int(np.sum(s > tol))
    return vt[rank:].T


def harvest_weights(member, means, y, root, ridge=RIDGE, root_weight=ROOT_WEIGHT):
    """The node weights w of Node Harvest: minimise ||y - (member * means) w||^2 + ridge
    ||w - w0||^2 subject to member w = 1, w >= 0, w[root] >= root_weight (w0: 1 at
    the root). member: (n, p) 0/1 with a column of ones at root. Returns w (p,)."""

    n, p = member.shape
    w0 = np.zeros(p)
    w0[root] = 1.0
    lb = np.zeros(p)
    lb[root] = root_weight
    A = np.unique(member, axis=0)  # the constraints of distinct membership patterns
    B = null_space(A)
    q = B.shape[1]
    if q == 0:
        return w0
    I = member * means[None, :]
    G = I @ B
    H = G.T @ G + ridge * np.eye(q)
    g = -G.T @ (y - I @ w0)
    # least distance form: u = L'z + L^-1 g, ||u||^2 / 2 = objective + const, K u >= h'
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError:
        # H is singular to working precision where the targets' scale dwarfs the ridge
        # (a regression's y of about 1e8): the slower solver, which needs no factor of H
        return _interior_point(I, y, A, lb, w0)
    Linv_g = np.linalg.solve(L, g)
    K = np.linalg.solve(L, B.T).T  # B L^-T
    h = (lb - w0) + K @ Linv_g
    E = np.vstack([K.T, h[None, :]])
    f = np.zeros(q + 1)
    f[q] = 1.0
    # scipy's nnls (1.17) returned a wrong solution here (a residual of 1.9 reported as
    # 0 on Synthetic1's 408 nodes); BVLS is the same kind of exact active-set method
    lam = lsq_linear(E, f, bounds=(0.0, np.inf), method="bvls", tol=1e-14, max_iter=100 * (p + q + 1)).x
    r = E @ lam - f
    if abs(r[q]) < 1e-12:
        # the least distance problem says "infeasible", which it is not (w0 is feasible):
        # BVLS stopped short (a 120-row HistGradientBoosting regression); the slower solver
        return _interior_point(I, y, A, lb, w0)
    u = -r[:q] / r[q]
    z = np.linalg.solve(L.T, u - Linv_g)
    w = w0 + B @ z
    if w.min() < -1e-9 or w[root] < root_weight - 1e-9 or np.abs(A @ w - 1.0).max() > 1e-9:
        w = _interior_point(I, y, A, lb, w0)
    return w


def _interior_point(I, y, A, lb, w0):
    """The same problem by scipy's trust-constr (slower; a fallback should the least
    distance solution miss the constraints)."""

    rows = np.sort(qr(A.T, pivoting=True)[2][:np.linalg.matrix_rank(A)])
    Q, c = I.T @ I, -(I.T @ y)
    res = minimize(lambda v: 0.5 * v @ Q @ v + c @ v, w0, jac=lambda v: Q @ v + c,
                   hess=lambda v: Q, method="trust-constr", bounds=Bounds(lb, np.inf),
                   constraints=[LinearConstraint(A[rows], 1.0, 1.0)],
                   options={"gtol": 1e-10, "xtol": 1e-12, "maxiter": 5000})
    return res.x


class NodeHarvest(BaselineModel):
    """Node Harvest (Meinshausen 2010): weighted shallow nodes of the ensemble's trees.

    Regression and binary classification (the regression of the second class's 0/1
    indicator); more classes are a ValueError.

    Parameters
    ----------
    estimator : tree ensemble
        Any model DefragModel reads, fitted (explained as it is) or not (cloned and fitted
        on ``fit(X, y)``).
    max_depth : int, default=2
        Candidate nodes: depth 1 .. max_depth of every tree, and the root.
    nodesize : int, default=10
        A candidate needs at least this many training points and at most n - nodesize.
    max_nodes : int, default=1000
        Candidates at most (the package's ``nodes``): a random subset when more.
    weight_threshold : float, default=0.01
        Nodes weighing less than this times the largest weight are dropped.
    feature_names : list of str, optional
        Names printed (default: the DataFrame's columns, the model's, else x0, x1, ...).
    random_state : int, RandomState or None, default=None
        Seed of the subset of candidates (used only when there are more than max_nodes).

    Attributes
    ----------
    rules_ : RuleSet of the kept nodes but the root, heaviest first (a rule's ``weight``
        is the node's weight, its prediction the node's mean, or for classification
        the class of mean > 0.5); its default is the root. ``rules_.predict`` reads
        them as a list (the first covering node, else the root) and is not Node
        Harvest's prediction: ``predict`` is, the weighted mean of the covering nodes.
    n_regions_ : int, the kept nodes but the root (as the paper counts them)
    weights_ : ndarray, the weights of the kept nodes (the root's last)
    coef_ : ndarray, the solution's weights of all candidates (``candidates_``)
    candidates_ : list of atom tuples (the root: ())
    node_means_ : ndarray, the training mean of y in each candidate
    classes_, task_, n_features_in_
    estimator_ : the model explained (``estimator`` when fitted, else its fitted clone)

    See Also
    --------
    DefragModel : The rules of FAB inference over the ensemble's splits.
    InTrees : An ordered rule list of the ensemble's paths.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from defrag.baselines import NodeHarvest
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> forest = RandomForestClassifier(n_estimators=10, random_state=0)
    >>> model = NodeHarvest(forest, random_state=0).fit(X, y)
    >>> model.n_regions_ == len(model.rules_.rules)
    True
    """

    _parameter_constraints = {
        "estimator": "no_validation",
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "nodesize": [Interval(Integral, 1, None, closed="left")],
        "max_nodes": [Interval(Integral, 1, None, closed="left")],
        "weight_threshold": [Interval(Real, 0, 1, closed="left")],
        "feature_names": "no_validation",  # checked_names says what a name list must be
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, max_depth=2, nodesize=10, max_nodes=1000,
                 weight_threshold=0.01, feature_names=None, random_state=None):
        self.estimator = estimator
        self.max_depth = max_depth
        self.nodesize = nodesize
        self.max_nodes = max_nodes
        self.weight_threshold = weight_threshold
        self.feature_names = feature_names
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if tags.classifier_tags is not None:  # two classes at most (see _fit)
            tags.classifier_tags.multi_class = False
        return tags

    def _check_params(self):
        check_positive_int("max_depth", self.max_depth)
        check_positive_int("nodesize", self.nodesize)
        check_positive_int("max_nodes", self.max_nodes)
        v = self.weight_threshold
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0.0 <= v < 1.0:
            raise ValueError(f"weight_threshold must be a number in [0, 1); got {v!r}")

    def _candidates(self, source):
        nodes = {}
        for tree in source.trees():
            for _, _, atoms in node_paths(tree, self.max_depth):
                if atoms:
                    nodes.setdefault(atoms, None)
        return list(nodes)

    def _fit(self, fitting):
        if fitting.task == "classification":
            if fitting.n_classes > 2:
                raise ValueError(f"Only binary classification is supported. NodeHarvest handles regression and "
                                 f"binary classification; y has "
                                 f"{fitting.n_classes} classes")
            y = (fitting.y == 1).astype(np.float64)
        else:
            y = fitting.y
        Xf, n = fitting.Xf, fitting.Xf.shape[0]
        maker = ConditionMaker(fitting.names, fitting.encoding, fitting.source.supports_missing)
        cands = self._candidates(fitting.source)
        check_memory_of(node_harvest_estimate(n, len(cands), min(len(cands), self.max_nodes - 1) + 1),
                        f"NodeHarvest.fit on {n} rows with {len(cands)} candidate nodes",
                        "max_nodes= and max_depth= (fewer nodes), or fewer rows")
        member = maker.cover(cands, Xf) if cands else np.zeros((n, 0), dtype=bool)
        size = member.sum(axis=0)
        keep = (size >= self.nodesize) & (size <= n - self.nodesize)
        # nodes holding the same training points: the first is kept (by each pattern's
        # bytes: np.unique(..., axis=0) sorted the n-bit rows in one C call of seconds on
        # 200,000 rows, which Ctrl-C could not interrupt)
        patterns = np.ascontiguousarray(np.packbits(member, axis=0).T)
        seen = set()
        distinct = np.zeros(len(cands), dtype=bool)
        for j in range(patterns.shape[0]):
            key = patterns[j].tobytes()
            distinct[j] = key not in seen
            seen.add(key)
        idx = np.flatnonzero(keep & distinct)
        if idx.size > self.max_nodes - 1:
            rng = check_random_state(self.random_state)
            idx = np.sort(rng.choice(idx, self.max_nodes - 1, replace=False))
        cands = [cands[j] for j in idx] + [()]
        member = np.hstack([member[:, idx], np.ones((n, 1), dtype=bool)]).astype(np.float64)
        means = (member.T @ y) / member.sum(axis=0)
        root = len(cands) - 1
        w = harvest_weights(member, means, y, root)
        self.candidates_, self.node_means_, self.coef_ = cands, means, w
        kept = np.flatnonzero(w >= self.weight_threshold * w.max())
        kept = np.union1d(kept[kept != root], [root])  # the root last, always
        order = np.argsort(-w[kept[:-1]], kind="stable")
        kept = np.concatenate([kept[:-1][order], [root]])
        self._kept = kept
        self.weights_ = w[kept]
        self.n_regions_ = kept.size - 1
        support = member.sum(axis=0)
        rules = [Rule(maker.conditions(cands[j]), *self._output(means[j]), support=int(support[j]),
                      weight=w[j]) for j in kept[:-1]]
        self.rules_ = RuleSet(rules, *self._output(means[root]), fitting.names,
                              **self._rule_set_options())

    def _output(self, mean):
        if self.task_ == "regression":
            return float(mean), None
        p = float(np.clip(mean, 0.0, 1.0))
        return self.classes_[int(p > 0.5)], np.array([1.0 - p, p])

    @available_if(BaselineModel._classifies)
    def decision_function(self, X):
        """The second class's probability minus 0.5: positive for ``classes_[1]``.

        The probability is Node Harvest's prediction, the weighted mean of the kept nodes'
        class shares over the nodes holding each point. Classification only.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points.

        Returns
        -------
        ndarray of shape (n_samples,)
            The scores.
        """
        return self._harvest(self._check_X(X)) - 0.5

    def _harvest(self, Xf):
        # the kept nodes are the rules as printed (their printed thresholds), the root last
        member = np.column_stack([self.rules_.covering(Xf), np.ones(Xf.shape[0], dtype=bool)]).astype(np.float64)
        means = self.node_means_[self._kept]
        return (member @ (self.weights_ * means)) / (member @ self.weights_)

    def _predicts_by(self):
        return "harvest"

    def _predict_coded(self, Xf):
        value = self._harvest(Xf)
        if self.task_ == "regression":
            return value
        return self.classes_[(value > 0.5).astype(np.int64)]

    def _proba_coded(self, Xf):
        p = np.clip(self._harvest(Xf), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])
