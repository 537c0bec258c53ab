"""The NumPy reference of the box tree at every size (src_c/dfg_tree_path.c, called through
defrag.search.tree_search.grow_tree_path): the list search's refinement
(tests/list_search_reference.py's ListSearch) with a leaf's rows as `left`, CART's
two-sided drop for the gain and a price per literal, grown best-first, slow on purpose;
and the validation rows' scores at every size of a grown tree (tree_path_scores, what
grow_tree_path_scored returns besides the steps). tests/test_tree_search_kernel.py
compares them; the algorithm is described in defrag/search/tree_search.py's docstring."""
import numpy as np
from threadpoolctl import threadpool_limits

from list_search_reference import ListSearch, _score


class TreeSearch(ListSearch):
    """A leaf's best box: ListSearch's moves and starts, scored by CART's drop when the
    leaf (left) splits into the box's rows and the others, less lam = literal_price *
    SSE(leaf) per literal beyond the first."""

    def __init__(self, S, T, literal_feature, literal_group, min_leaf=1, literal_price=0.0):
        super().__init__(S, T, literal_feature, literal_group, min_support=min_leaf)
        self.literal_price = float(literal_price)

    def _gain(self, sR, cR, sL, cL):
        """CART's drop as the sum of both sides' one-sided gains c |m - m_L|^2 (the same
        number as |s_R|^2 / c_R + |s_B|^2 / c_B - |s_L|^2 / c_L, without its cancellation);
        -inf where a side has fewer than min_leaf rows."""
        cR = np.asarray(cR, dtype=np.float64)
        cB = cL - cR
        mL = sL / max(cL, 1.0)
        g = _score(sR - cR[..., None] * mL, cR) + _score((sL - sR) - cB[..., None] * mL, cB)
        ok = (cR >= self.min_support) & (cB >= self.min_support)
        return np.where(ok, g, -np.inf)

    def _score_of(self, gain, cost):
        return gain - self.lam * (np.asarray(cost) - 1)

    def _price(self, resid, cL):
        return self.literal_price * resid


def grow_tree_path(S, T, literal_feature, literal_group, candidates, max_leaves, literal_price=0.0, min_leaf=1):
    """defrag.search.tree_search.grow_tree_path (see its docstring) in NumPy: [(leaf, box), ...]."""
    S = np.ascontiguousarray(S, dtype=bool)
    n, L = S.shape
    if n == 0 or L == 0:
        return []
    T = np.asarray(T, dtype=np.float64).reshape(n, -1)
    search = TreeSearch(S, T, literal_feature, literal_group, min_leaf, literal_price)
    starts = search.candidate_starts(candidates)
    node = np.zeros(n, dtype=np.intp)  # each row's leaf
    steps = []

    def leaf_box(g):
        """(drop, sorted box) of leaf g's best box, or None."""
        best = search.best_box(node == g, starts)
        return None if best is None else (best[1], sorted(best[0]))

    with threadpool_limits(limits=1, user_api="blas"):  # same sums whatever the threads
        boxes = {0: leaf_box(0)}  # the live leaves' boxes, searched once
        while len(steps) < max_leaves - 1:
            pick = None
            for g in sorted(boxes):  # the first of equals: the lower node id
                if boxes[g] is not None and (pick is None or boxes[g][0] > boxes[pick][0]):
                    pick = g
            if pick is None:
                break
            t, box = len(steps), boxes.pop(pick)[1]
            steps.append((pick, box))
            rows = node == pick
            then = rows & search.cover(box)
            node[rows & ~then] = 2 * t + 2
            node[then] = 2 * t + 1
            if len(steps) < max_leaves - 1:
                boxes[2 * t + 1] = leaf_box(2 * t + 1)
                boxes[2 * t + 2] = leaf_box(2 * t + 2)
    return steps


def leaf_outputs(T, leaf, n_leaves):
    """Mean target vector of each leaf (rows by leaf id 0 .. n_leaves - 1); a leaf without
    rows takes the mean of all."""
    counts = np.bincount(leaf, minlength=n_leaves).astype(np.float64)
    sums = np.zeros((n_leaves, T.shape[1]))
    np.add.at(sums, leaf, T)
    mean = T.mean(axis=0) if T.shape[0] else np.zeros(T.shape[1])
    return np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], mean[None, :])


def _literals(S, rows, box):
    """The truth of each literal of box (columns, in order) on the rows of S (indices)."""
    L = S.shape[1]
    cols = np.array([j if j < L else j - L for j in box], dtype=np.int64)
    negated = np.array([j >= L for j in box])
    return S[np.ix_(rows, cols)] ^ negated[None, :]


def _box_reading(H):
    """(holds, comparisons read) of a box per row, H its literals' truth (rows x literals)
    in the order a reader checks them: until the first that fails."""
    if not H.shape[1]:
        return np.ones(H.shape[0], dtype=bool), np.zeros(H.shape[0])
    holds = H.all(axis=1)
    first_fail = np.argmin(H, axis=1) + 1
    return holds, np.where(holds, float(H.shape[1]), first_fail.astype(np.float64))


def tree_path_scores(steps, S_tr, T_tr, S_va, y_va, n_classes, max_size):
    """Per size k = 1 .. max_size of the tree of steps (grown on the training part): the
    validation rows' losses (squared errors, or 0/1 errors of the leaf's most probable
    class) with leaf outputs from T_tr, and the comparisons read per validation row.
    Returns (losses (max_size, n_va), checks (max_size, n_va)); sizes beyond the path
    repeat its largest tree."""
    T_tr = np.asarray(T_tr, dtype=np.float64)
    T_tr = T_tr.reshape(-1, 1) if T_tr.ndim == 1 else T_tr
    n_tr, n_va = S_tr.shape[0], S_va.shape[0]
    node_tr = np.zeros(n_tr, dtype=np.int64)
    node_va = np.zeros(n_va, dtype=np.int64)
    checks = np.zeros(n_va)
    losses = np.empty((max_size, n_va))
    checks_out = np.empty((max_size, n_va))
    out = leaf_outputs(T_tr, np.zeros(n_tr, dtype=np.int64), 1)[0]
    pred = np.tile(out, (n_va, 1))

    def loss_of(p):
        if n_classes:
            return (np.argmax(p, axis=1) != y_va).astype(np.float64)
        return (p[:, 0] - y_va) ** 2

    losses[0], checks_out[0] = loss_of(pred), checks
    for t, (leaf, box) in enumerate(steps[:max_size - 1]):  # over steps, not rows
        tr = np.flatnonzero(node_tr == leaf)
        va = np.flatnonzero(node_va == leaf)
        H_tr = _literals(S_tr, tr, box)
        h_tr = H_tr.all(axis=1)
        # as printed: the literal the leaf's rows hold least often first
        order = np.argsort(H_tr.mean(axis=0), kind="stable") if tr.size else np.arange(len(box))
        h_va, read = _box_reading(_literals(S_va, va, [box[i] for i in order]))
        node_tr[tr] = np.where(h_tr, 2 * t + 1, 2 * t + 2)
        node_va[va] = np.where(h_va, 2 * t + 1, 2 * t + 2)
        checks = checks.copy()
        checks[va] += read
        for child, rows_tr, rows_va in ((2 * t + 1, tr[h_tr], va[h_va]), (2 * t + 2, tr[~h_tr], va[~h_va])):
            if rows_va.size:
                pred[rows_va] = T_tr[rows_tr].mean(axis=0) if rows_tr.size else T_tr.mean(axis=0)
        losses[t + 1], checks_out[t + 1] = loss_of(pred), checks
    last = min(len(steps), max_size - 1)
    losses[last + 1:], checks_out[last + 1:] = losses[last], checks_out[last]
    return losses, checks_out
