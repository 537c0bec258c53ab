"""Tree-space distances (Tan et al., "Tree Space Prototypes"): RF proximity (Definition 1)
and GBT proximity (Definition 3) as 1 - the (weighted) share of trees in which two points
reach the same leaf, computed blockwise in C (src_c/dfg_proximity.c), and the Euclidean
distance of the comparison."""
import numpy as np

from . import _proximity
from ..sources import adapt
from ..utils.threads import checked_threads


def leaf_matrix(estimator, X):
    """Leaf (node) id of each point in each tree, int32, shape (n_samples, n_trees), as
    the estimator's source model gives them (defrag/sources): ``apply`` for
    scikit-learn forests and gradient boosting (stage-major, a multiclass model's
    per-class trees as separate trees) and XGBoost's scikit-learn models,
    ``predict(X, pred_leaf=True)`` for LightGBM's, HistGradientBoosting's trees walked
    level by level."""
    return int32_leaves(adapt(estimator).checked().leaves(X))


def int32_leaves(leaves):
    if leaves.size and (leaves.min() < 0 or leaves.max() > np.iinfo(np.int32).max):
        raise ValueError("leaf ids do not fit in int32")
    return np.ascontiguousarray(leaves, dtype=np.int32)


def tree_weights(estimator, leaves, kind):
    """Per-tree weights: all 1 for "rf"; for "gbt" (Definition 3)
    ``w_i = Var{gamma_i c_i(s) : s in S}``, ``gamma_i c_i(s)`` the output of the leaf of
    tree i that s reaches, learning rate included (``Tree.value``: scikit-learn's
    stored values times the learning rate; XGBoost's, LightGBM's and
    HistGradientBoosting's leaf outputs are already shrunk). S = the rows of ``leaves``."""
    return source_tree_weights(adapt(estimator), leaves, kind)


def source_tree_weights(source, leaves, kind):
    n_trees = leaves.shape[1]
    if kind == "rf":
        return np.ones(n_trees, dtype=np.float32)
    node_values = source.leaf_values()
    if len(node_values) != n_trees:
        raise ValueError("leaf matrix and boosting model disagree on the number of trees")
    w = np.empty(n_trees, dtype=np.float64)
    for i, values in enumerate(node_values):
        v = values[leaves[:, i]]
        w[i] = np.var(v) if np.ptp(v) > 0 else 0.0  # exactly 0 for a tree constant on S
    if not np.any(w > 0):
        raise ValueError("every tree of the boosting model is constant on the training points; "
                         "the GBT distance is undefined")
    return (w / w.sum()).astype(np.float32)


def tree_distance(leaves_a, leaves_b, weights, n_threads=1):
    """Compute 1 - the (weighted) share of trees in which two points share a leaf.

    Computed in C for every pair of a point of A and a point of B.

    Parameters
    ----------
    leaves_a : array-like of int of shape (n_a, n_trees)
        The leaf ids of the points of A in each tree.
    leaves_b : array-like of int of shape (n_b, n_trees)
        The leaf ids of the points of B.
    weights : array-like of shape (n_trees,)
        The trees' weights, >= 0 with a positive sum.
    n_threads : int, default=1
        The threads to use: an integer >= 1, at most the cores used.

    Returns
    -------
    ndarray of shape (n_a, n_b)
        The distances (float32).

    See Also
    --------
    PrototypeExplainer : Picks prototypes under this distance.

    Examples
    --------
    >>> from defrag import tree_distance
    >>> tree_distance([[0, 1], [1, 1]], [[0, 1]], [1.0, 1.0])
    array([[0. ],
           [0.5]], dtype=float32)
    """
    n_threads = checked_threads(n_threads)
    la = np.ascontiguousarray(leaves_a, dtype=np.int32)
    lbt = np.ascontiguousarray(np.asarray(leaves_b, dtype=np.int32).T)
    w = np.ascontiguousarray(weights, dtype=np.float32)
    if la.ndim != 2 or lbt.ndim != 2 or la.shape[1] != lbt.shape[0] or w.shape != (la.shape[1],):
        raise ValueError("leaves_a, leaves_b and weights disagree on the number of trees")
    return _proximity.tree_distance(la, lbt, w, n_threads)


def euclidean_distances(A, B):
    aa = np.einsum("ij,ij->i", A, A)[:, None]
    bb = np.einsum("ij,ij->i", B, B)[None, :]
    d2 = np.maximum(aa + bb - 2.0 * (A @ B.T), 0.0)
    return np.sqrt(d2)
