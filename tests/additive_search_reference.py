"""The NumPy reference of the additive path (src_c/dfg_additive_path.c, called through
defrag.search.additive_search.grow_additive_path): FIGS over single splits as that module's
docstring describes it, every residual formed on the rows and summed there, slow on
purpose. The kernel sums the residuals from counts shared between leaves instead: the
two agree to rounding, and take the same steps wherever no two different candidates tie
to rounding. tests/test_additive_search_kernel.py compares them."""
import numpy as np

from defrag.search.list_search import REL_TOL


def _sumsq(x):
    """sum_k x_k^2 over the last axis, k in order."""
    out = x[..., 0] * x[..., 0]
    for k in range(1, x.shape[-1]):  # over the targets
        out = out + x[..., k] * x[..., k]
    return out


def best_split(S, R, rows, min_leaf, tie_tol):
    """(drop, l, s_A, s_P): CART's best split of `rows` (indices) on the residual R (n, d):
    its drop (-inf where none has min_leaf rows each side), the split (-1: none; the lowest
    l within tie_tol of the largest drop), the residual's sums on its then side and over
    the rows."""
    c = rows.size
    if c < 2 * min_leaf:
        return -np.inf, -1, None, None
    Sr, Rr = S[rows], R[rows]
    c_then = Sr.sum(axis=0).astype(np.float64)
    s_then = (Sr[:, :, None] * Rr[:, None, :]).sum(axis=0)  # (L, d): each split's sums alike
    s_all = Rr.sum(axis=0)
    c_else = c - c_then
    ok = (c_then >= min_leaf) & (c_else >= min_leaf)
    if not ok.any():
        return -np.inf, -1, None, None
    with np.errstate(divide="ignore", invalid="ignore"):
        drop = (_sumsq(s_then) / c_then + _sumsq(s_all - s_then) / c_else) - _sumsq(s_all) / c
    drop = np.where(ok, drop, -np.inf)
    l = int(np.argmax(drop >= drop.max() - tie_tol))  # the first of the near-equals
    return float(drop[l]), l, s_then[l], s_all


class AdditivePath:
    """The model along the path: base, and per term its rows' leaves and leaf values."""

    def __init__(self, S, T):
        self.S = np.ascontiguousarray(S, dtype=bool)
        T = np.asarray(T, dtype=np.float64)
        self.n, self.L = self.S.shape
        self.T = T.reshape(self.n, -1)
        self.base = self.T.mean(axis=0)
        self.T0 = self.T - self.base
        self.leaf, self.values, self.splits, self.fitted = [], [], [], []

    def residual(self, skip=None):
        """T - base - the terms' values on each row, term `skip` left out."""
        R = self.T0.copy()
        for u, f in enumerate(self.fitted):  # over the terms
            if u != skip:
                R = R - f
        return R

    def _refit(self, t):
        f = np.zeros_like(self.T0)
        for node, v in self.values[t].items():  # over the term's leaves
            f[self.leaf[t] == node] = v
        self.fitted[t] = f

    def split(self, t, node, l, v_then, v_else):
        if t == len(self.leaf):
            self.leaf.append(np.zeros(self.n, dtype=np.int64))
            self.values.append({0: np.zeros(self.T.shape[1])})
            self.splits.append(0)
            self.fitted.append(np.zeros_like(self.T0))
        k = self.splits[t]
        at = self.leaf[t] == node
        self.leaf[t][at & self.S[:, l]] = 2 * k + 1
        self.leaf[t][at & ~self.S[:, l]] = 2 * k + 2
        del self.values[t][node]
        self.values[t][2 * k + 1], self.values[t][2 * k + 2] = v_then, v_else
        self.splits[t] = k + 1
        self._refit(t)

    def backfit(self, rounds):
        for _ in range(rounds):
            for t in range(len(self.leaf)):  # over the terms, in order
                R = self.residual(skip=t)
                for node in sorted(self.values[t]):
                    self.values[t][node] = R[self.leaf[t] == node].mean(axis=0)
                self._refit(t)


def grow_additive_path(S, T, max_splits, min_leaf=1, backfit_rounds=3, rel_tol=REL_TOL):
    """(steps [(term, node, split), ...], base, values: per term {node: value}) of the
    path grown to at most max_splits splits."""
    model = AdditivePath(S, T)
    n = model.n
    tol = rel_tol * max(float(_sumsq(model.T0).sum()), 1e-300)
    steps = []
    while len(steps) < max_splits:
        candidates = []  # (drop, (term, node, l, s_then, s_all)) in order
        for t in range(len(model.leaf)):  # the terms in order, their leaves by node id
            R = model.residual(skip=t)
            for node in sorted(model.values[t]):
                drop, l, s_then, s_all = best_split(model.S, R, np.flatnonzero(model.leaf[t] == node), min_leaf,
                                                    tol)
                candidates.append((drop, (t, node, l, s_then, s_all)))
        R = model.residual()
        drop, l, s_then, s_all = best_split(model.S, R, np.arange(n), min_leaf, tol)
        if l >= 0:
            candidates.append((drop + _sumsq(s_all) / n, (len(model.leaf), 0, l, s_then, s_all)))
        best = max((c[0] for c in candidates), default=-np.inf)
        if not best > tol:
            break
        # the first candidate within tol of the best (drops closer than that tie: rounding)
        t, node, l, s_then, s_all = next(c[1] for c in candidates if c[0] >= best - tol)
        rows = model.leaf[t] == node if t < len(model.leaf) else np.ones(n, dtype=bool)
        c_then = float((rows & model.S[:, l]).sum())
        c_else = float(rows.sum()) - c_then
        model.split(t, node, l, s_then / c_then, (s_all - s_then) / c_else)
        model.backfit(backfit_rounds)
        steps.append((t, node, l))
    return steps, model.base, [dict(sorted(v.items())) for v in model.values]
