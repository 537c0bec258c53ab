"""TEMPORARY NumPy stand-in for the additive path kernel (replaced by the C kernel)."""
import numpy as np


def _best_split(S, R, rows, min_leaf):
    Sr = S[rows].astype(np.float64)
    Rr = R[rows]
    n = rows.size
    c = Sr.sum(0)
    s_all = Rr.sum(0)
    sR = Sr.T @ Rr
    sL = s_all[None, :] - sR
    cL = n - c
    with np.errstate(divide="ignore", invalid="ignore"):
        g = (sR ** 2).sum(1) / c + (sL ** 2).sum(1) / cL - (s_all ** 2).sum() / n
    g = np.where((c >= min_leaf) & (cL >= min_leaf), g, -np.inf)
    l = int(np.argmax(g)) if g.size else 0
    return (float(g[l]) if g.size else -np.inf), l


def route_terms(S, terms_nodes, n_rows):
    """leaf node per row per term; terms_nodes: per term dict node -> split (inner nodes)."""
    out = []
    for inner in terms_nodes:
        node = np.zeros(n_rows, dtype=np.int64)
        for _ in range(len(inner) + 1):
            moved = False
            for nd, l in inner.items():
                m = node == nd
                if m.any():
                    k = _child_index(inner, nd)
                    node[m] = np.where(S[m, l], 2 * k + 1, 2 * k + 2)
                    moved = True
            if not moved:
                break
        out.append(node)
    return out


def _child_index(inner, nd):
    return inner.__dict__[nd] if hasattr(inner, "__dict__") else _ORDER[id(inner)][nd]


_ORDER = {}


class _Term(dict):
    """inner node -> split, and node -> its split's index k within the term."""

    def __init__(self):
        super().__init__()
        self.k = {}


def _route(S, term, n):
    node = np.zeros(n, dtype=np.int64)
    for _ in range(len(term) + 1):
        moved = False
        for nd, l in term.items():
            m = node == nd
            if m.any():
                k = term.k[nd]
                node[m] = np.where(S[m, l], 2 * k + 1, 2 * k + 2)
                moved = True
        if not moved:
            break
    return node


def _backfit(S, T, terms, base, rounds):
    n = S.shape[0]
    leaves = [_route(S, t, n) for t in terms]
    values = [dict() for _ in terms]
    f = [np.zeros_like(T) for _ in terms]
    for _ in range(rounds):
        for i, t in enumerate(terms):
            R = T - base - (sum(f) - f[i])
            vals = {}
            for nd in np.unique(leaves[i]):
                m = leaves[i] == nd
                vals[int(nd)] = R[m].mean(0)
            values[i] = vals
            f[i] = np.array([vals[int(nd)] for nd in leaves[i]]) if n else np.zeros_like(T)
    return values, f, leaves


def grow_additive_path(S, T, max_splits, min_leaf=1, backfit_rounds=3, n_threads=None):
    S = np.asarray(S, dtype=bool)
    T = np.asarray(T, dtype=np.float64).reshape(S.shape[0], -1)
    n = S.shape[0]
    base = T.mean(0)
    scale = max(float(((T - base) ** 2).sum()), 1e-300)
    terms, steps = [], []
    f = []
    leaves = []
    while len(steps) < max_splits:
        F = sum(f) if f else np.zeros_like(T)
        best = (-np.inf, None)
        for i, t in enumerate(terms):
            R = T - base - (F - f[i])
            for nd in sorted(set(leaves[i].tolist())):
                rows = np.flatnonzero(leaves[i] == nd)
                if rows.size < 2 * min_leaf:
                    continue
                g, l = _best_split(S, R, rows, min_leaf)
                if g > best[0]:
                    best = (g, (i, nd, l))
        R = T - base - F
        g, l = _best_split(S, R, np.arange(n), min_leaf)
        g += float((R.sum(0) ** 2).sum() / max(n, 1))
        if g > best[0]:
            best = (g, (len(terms), 0, l))
        if best[1] is None or not best[0] > 1e-9 * scale:
            break
        i, nd, l = best[1]
        if i == len(terms):
            terms.append(_Term())
        term = terms[i]
        term.k[nd] = len(term)
        term[nd] = l
        steps.append((i, nd, l))
        _, f, leaves = _backfit(S, T, terms, base, backfit_rounds)
    return steps


def additive_values(S, T, steps, n_splits, backfit_rounds=3):
    S = np.asarray(S, dtype=bool)
    T = np.asarray(T, dtype=np.float64).reshape(S.shape[0], -1)
    base = T.mean(0)
    terms = []
    for i, nd, l in steps[:n_splits]:
        if i == len(terms):
            terms.append(_Term())
        terms[i].k[nd] = len(terms[i])
        terms[i][nd] = l
    values, _, _ = _backfit(S, T, terms, base, backfit_rounds)
    return base, values
