"""The NumPy reference of the box tree at every size (src_c/dfg_tree_path.c, called through
defrag.rules.tree_search.grow_tree_path): the list search's refinement
(tests/list_search_reference.py's ListSearch) with a leaf's rows as `left`, CART's
two-sided drop for the gain and a price per literal, grown best-first, slow on purpose.
tests/test_tree_search_kernel.py compares the two; the algorithm is described in
defrag/rules/tree_search.py's docstring."""
import numpy as np
from threadpoolctl import threadpool_limits

from list_search_reference import ListSearch, _score


class TreeSearch(ListSearch):
    """A leaf's best box: ListSearch's moves and starts, scored by CART's drop when the
    leaf (left) splits into the box's rows and the others, less lam = literal_price *
    SSE(leaf) per literal beyond the first."""

    def __init__(self, S, T, literal_feature, literal_group, min_leaf=1, literal_price=0.0):
        super().__init__(S, T, literal_feature, literal_group, min_support=min_leaf, cost_power=0.0)
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

    def cost(self, box):
        return len(box)

    def _add_costs(self, box):
        return len(box) + 1

    def _score_of(self, gain, cost):
        return gain - self.lam * (np.asarray(cost) - 1)

    def _price(self, resid, cL):
        return self.literal_price * resid


def grow_tree_path(S, T, literal_feature, literal_group, candidates, max_leaves, literal_price=0.0, min_leaf=1):
    """defrag.rules.tree_search.grow_tree_path (see its docstring) in NumPy: [(leaf, box), ...]."""
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
