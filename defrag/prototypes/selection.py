"""Greedy prototype selection (Tan et al., section "Method"): SM-U, SM-A (Algorithm 1),
SM-WA with lazy (priority-queue) greedy, and SG, greedy on the training balanced accuracy
of the nearest-prototype classifier."""
import heapq

import numpy as np


class _Coverage:
    """Gains of the (q-classwise) k-medoids objective with phantom exemplars.

    cur[x] = distance of point x to its nearest selected prototype of its class,
    1 (the phantom exemplar) while there is none. The gain of candidate j of class c
    is scale[c] * sum_{x in class c} max(cur[x] - D[j, x], 0) = g(M + j) - g(M) for
    g of eq. (4). Every gain is computed by the same code (float64, one row at a
    time in the same summation order), so lazy and plain greedy see equal values."""

    def __init__(self, D, cand_class, point_class, scale):
        self.D = D
        self.cand_class = cand_class
        self.cols = [np.flatnonzero(point_class == c) for c in range(len(scale))]
        self.scale = scale
        self.cur = np.ones(D.shape[1], dtype=np.float64)

    def gains(self, rows):
        rows = np.asarray(rows, dtype=np.intp)
        out = np.empty(rows.shape[0], dtype=np.float64)
        for c in np.unique(self.cand_class[rows]):
            sel = rows[self.cand_class[rows] == c]
            cols = self.cols[c]
            pos = np.flatnonzero(self.cand_class[rows] == c)
            for s in range(0, sel.shape[0], 256):
                block = self.D[np.ix_(sel[s:s + 256], cols)].astype(np.float64)
                g = np.maximum(self.cur[cols][None, :] - block, 0.0).sum(axis=1)
                out[pos[s:s + 256]] = g * self.scale[c]
        return out

    def add(self, j):
        cols = self.cols[self.cand_class[j]]
        self.cur[cols] = np.minimum(self.cur[cols], self.D[j, cols])


def _lazy_greedy(cov, rows, k):
    """Lazy greedy (Minoux): a heap of upper bounds (earlier gains, valid by
    submodularity), ordered by (-gain, row). A popped entry whose gain is fresh for
    this step beats every other entry's bound, or ties it with a larger row, so it
    is plain greedy's choice (largest gain, lowest row on ties)."""
    rows = np.asarray(rows, dtype=np.intp)
    g = cov.gains(rows)
    heap = [(-float(v), int(r)) for v, r in zip(g, rows)]
    heapq.heapify(heap)
    fresh = {int(r): 0 for r in rows}
    chosen = []
    for step in range(min(k, rows.shape[0])):
        while True:
            neg, r = heapq.heappop(heap)
            if fresh[r] == step:
                break
            v = float(cov.gains([r])[0])
            fresh[r] = step
            heapq.heappush(heap, (-v, r))
        chosen.append(r)
        cov.add(r)
    return chosen


def _plain_greedy(cov, rows, k):
    """Plain greedy: every remaining gain recomputed at every step (reference)."""
    remaining = list(np.asarray(rows, dtype=np.intp))
    chosen = []
    for _ in range(min(k, len(remaining))):
        g = cov.gains(remaining)
        i = int(np.argmax(g))  # first maximum: lowest row among ties
        r = remaining.pop(i)
        chosen.append(int(r))
        cov.add(r)
    return chosen


def _uniform_budget(k, sizes):
    """SM-U's per-class budgets: k // q each, the remainder to the largest classes
    (ties: lower class code), never more than a class has candidates; what a small
    class cannot take goes to the others in the same order."""
    q = len(sizes)
    budget = np.zeros(q, dtype=int)
    order = sorted(range(q), key=lambda c: (-sizes[c], c))
    left = k
    while left > 0:
        open_ = [c for c in order if budget[c] < sizes[c]]
        if not open_:
            break
        share, extra = divmod(left, len(open_))
        for i, c in enumerate(open_):
            take = min(share + (1 if i < extra else 0), sizes[c] - budget[c])
            budget[c] += take
            left -= take
    return budget


def select_submodular(D, cand_class, point_class, n_classes, k, method, lazy=True):
    """SM-A / SM-WA / SM-U on a candidates x points distance matrix D (values in
    [0, 1]). Returns the chosen candidate rows in selection order."""
    greedy = _lazy_greedy if lazy else _plain_greedy
    sizes_pts = np.bincount(point_class, minlength=n_classes)
    if method == "sm-wa":
        scale = 1.0 / np.maximum(sizes_pts, 1)
    else:
        scale = np.ones(n_classes)
    cov = _Coverage(D, cand_class, point_class, scale)
    if method in ("sm-a", "sm-wa"):
        return greedy(cov, np.arange(D.shape[0]), k)
    if method == "sm-u":
        sizes = np.bincount(cand_class, minlength=n_classes)
        budget = _uniform_budget(k, sizes)
        chosen = []
        for c in range(n_classes):
            if budget[c]:
                chosen += greedy(cov, np.flatnonzero(cand_class == c), int(budget[c]))
        return chosen
    raise ValueError(f"unknown submodular method {method!r}")


def select_supervised(D, cand_class, cand_index, point_class, n_classes, k):
    """SG: add the candidate that most increases the training balanced accuracy of
    the nearest-prototype classifier (ties between prototypes at equal distance go
    to the lower training index, as in ``predict``); stop at k or when no candidate
    strictly improves it. The empty set scores 0. Returns (rows, accuracy trace)."""
    n_pts = D.shape[1]
    sizes = np.bincount(point_class, minlength=n_classes).astype(np.float64)
    present = sizes > 0
    onehot = np.zeros((n_pts, n_classes), dtype=np.float64)
    onehot[np.arange(n_pts), point_class] = 1.0
    cur_d = np.full(n_pts, np.inf)
    cur_idx = np.full(n_pts, np.iinfo(np.int64).max)
    correct = np.zeros(n_pts, dtype=bool)
    per_class = np.zeros(n_classes)
    best = 0.0
    chosen, trace = [], []
    available = np.ones(D.shape[0], dtype=bool)
    while len(chosen) < k and available.any():
        rows = np.flatnonzero(available)
        scores = np.full(rows.shape[0], -np.inf)
        for s in range(0, rows.shape[0], 512):
            r = rows[s:s + 512]
            block = D[r].astype(np.float64)
            wins = (block < cur_d) | ((block == cur_d) & (cand_index[r][:, None] < cur_idx))
            G = wins.astype(np.float64) @ onehot                    # points won, per class
            H = wins.astype(np.float64) @ (onehot * correct[:, None])  # ... that were right
            new = per_class[None, :] - H
            new[np.arange(r.shape[0]), cand_class[r]] += G[np.arange(r.shape[0]), cand_class[r]]
            scores[s:s + 512] = (new[:, present] / sizes[present]).mean(axis=1)
        i = int(np.argmax(scores))
        if not scores[i] > best:
            break
        j = int(rows[i])
        dj = D[j].astype(np.float64)
        wins = (dj < cur_d) | ((dj == cur_d) & (cand_index[j] < cur_idx))
        cur_d[wins] = dj[wins]
        cur_idx[wins] = cand_index[j]
        correct[wins] = point_class[wins] == cand_class[j]
        per_class = np.bincount(point_class[correct], minlength=n_classes).astype(np.float64)
        best = float((per_class[present] / sizes[present]).mean())
        available[j] = False
        chosen.append(j)
        trace.append(best)
    return chosen, trace
