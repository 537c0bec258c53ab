"""Growing a proxy tree depth-first with the C split search (src_c/dfg_proxy_split.c)."""
import numpy as np


class _Grown:
    """A grown tree in flat arrays (node 0 the root; -1 children for leaves)."""

    def __init__(self):
        self.left, self.right, self.feature, self.threshold = [], [], [], []
        self.value, self.n, self.sse, self.depth, self.missing_right = [], [], [], [], []

    def add(self, value, n, sse, depth):
        for lst, v in ((self.left, -1), (self.right, -1), (self.feature, -1), (self.threshold, 0.0),
                       (self.value, value), (self.n, n), (self.sse, sse), (self.depth, depth),
                       (self.missing_right, False)):
            lst.append(v)
        return len(self.value) - 1

    def freeze(self):
        self.left = np.asarray(self.left, dtype=np.int64)
        self.right = np.asarray(self.right, dtype=np.int64)
        self.feature = np.asarray(self.feature, dtype=np.int64)
        self.threshold = np.asarray(self.threshold, dtype=np.float64)
        self.value = np.asarray(self.value, dtype=np.float64)
        self.n = np.asarray(self.n, dtype=np.int64)
        self.sse = np.asarray(self.sse, dtype=np.float64)
        self.depth = np.asarray(self.depth, dtype=np.int64)
        self.missing_right = np.asarray(self.missing_right, dtype=bool)
        return self


def goes_right(x, threshold, missing_right):
    """Which values x of a split's feature go right: x > threshold, NaN by missing_right."""
    return np.where(np.isnan(x), missing_right, x > threshold)


def node_stats(mean, var, rows):
    m = mean[rows]
    mu = float(m.mean())
    sse = float(var[rows].sum() + ((m - mu) ** 2).sum())
    return mu, sse


def node_stats_proba(P, rows):
    """Mean class probabilities and the node's additive cost 2 n H(p) (= -2 log-lik)."""
    p = P[rows].mean(axis=0)
    nz = p[p > 0]
    return p, float(-2.0 * rows.size * np.sum(nz * np.log(nz)))


def grow(X, split, stats, min_samples_leaf, max_depth):
    """Depth-first growth: split(rows) -> (feature, threshold, gain, n_left, missing_right)
    from the C split search, stats(rows) -> (value, cost), until no split is allowed."""
    tree = _Grown()
    rows0 = np.arange(X.shape[0], dtype=np.int64)
    value, cost = stats(rows0)
    stack = [(tree.add(value, rows0.size, cost, 0), rows0)]
    while stack:
        node, rows = stack.pop()
        if max_depth is not None and tree.depth[node] >= max_depth:
            continue
        f, t, gain, n_left, missing_right = split(rows)
        if f < 0 or not gain > 0.0:
            continue
        go_right = goes_right(X[rows, f], t, missing_right)
        lrows, rrows = rows[~go_right], rows[go_right]
        tree.feature[node], tree.threshold[node] = f, t
        tree.missing_right[node] = missing_right
        d = tree.depth[node] + 1
        children = []
        for part in (lrows, rrows):
            value, cost = stats(part)
            children.append((tree.add(value, part.size, cost, d), part))
        tree.left[node], tree.right[node] = children[0][0], children[1][0]
        stack.append(children[1])
        stack.append(children[0])
    return tree.freeze()
