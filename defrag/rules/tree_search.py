"""TEMPORARY NumPy stand-in for the box-tree path kernel (replaced by the C kernel)."""
import numpy as np

from .list_search import CandidateBoxes, box_cover


def _drop(Sf, T, s_all, n, min_leaf):
    c = Sf.sum(0)
    sR = Sf.T @ T
    sL = s_all[None, :] - sR
    cL = n - c
    with np.errstate(divide="ignore", invalid="ignore"):
        g = (sR ** 2).sum(1) / c + (sL ** 2).sum(1) / cL - (s_all ** 2).sum() / n
    return np.where((c >= min_leaf) & (cL >= min_leaf), g, -np.inf)


def _best_box(S2, T, rows, price, min_leaf, cands, max_lits=6):
    Sr = S2[rows]
    Tr = T[rows]
    n = rows.size
    s_all = Tr.sum(0)
    sse = float((Tr ** 2).sum() - (s_all ** 2).sum() / n)
    best = (-np.inf, -np.inf, [])
    starts = [[]]
    if cands:
        scored = []
        for b in cands:
            inside = Sr[:, b].all(1)
            g = _drop(inside[:, None].astype(np.float64), Tr, s_all, n, min_leaf)[0]
            scored.append((g - price * sse * (len(b) - 1), b))
        scored.sort(key=lambda x: -x[0])
        starts += [list(b) for s, b in scored[:2] if np.isfinite(s)]
    for box in starts:
        box = list(box)
        inside = Sr[:, box].all(1) if box else np.ones(n, bool)
        score = -np.inf
        gain = -np.inf
        if box:
            gain = _drop(inside[:, None].astype(np.float64), Tr, s_all, n, min_leaf)[0]
            score = gain - price * sse * (len(box) - 1)
        for _ in range(12):
            cand = (Sr & inside[:, None]).astype(np.float64)
            g = _drop(cand, Tr, s_all, n, min_leaf)
            g[box] = -np.inf
            sc = g - price * sse * len(box)
            j = int(np.argmax(sc))
            moved = False
            if np.isfinite(sc[j]) and sc[j] > score + 1e-9 * max(sse, 1e-300):
                box.append(j); score, gain = sc[j], g[j]; inside &= Sr[:, j]; moved = True
            elif len(box) > 1:
                for i in range(len(box)):
                    rest = box[:i] + box[i + 1:]
                    ins = Sr[:, rest].all(1)
                    gg = _drop(ins[:, None].astype(np.float64), Tr, s_all, n, min_leaf)[0]
                    ss = gg - price * sse * (len(rest) - 1)
                    if ss > score + 1e-9 * max(sse, 1e-300):
                        box, score, gain, inside, moved = rest, ss, gg, ins, True
                        break
            if not moved or len(box) >= max_lits:
                break
        if box and (score > best[0] or (score == best[0] and len(box) < len(best[2]))):
            best = (score, gain, sorted(box))
    return best[1], best[2]


def grow_tree_path(S, T, literal_feature, literal_group, candidates, max_leaves, literal_price=0.0,
                   min_leaf=1, n_threads=None):
    S = np.asarray(S, dtype=bool)
    T = np.asarray(T, dtype=np.float64).reshape(S.shape[0], -1)
    L = S.shape[1]
    S2 = np.hstack([S, ~S])
    if isinstance(candidates, CandidateBoxes):
        cands = [candidates.literals[candidates.ptr[i]:candidates.ptr[i + 1]].tolist()
                 for i in range(candidates.ptr.size - 1)]
    else:
        cands = [list(b) for b in candidates if len(b)]
    n = S.shape[0]
    tot = T.sum(0)
    scale = max(float((T ** 2).sum() - (tot ** 2).sum() / max(n, 1)), 1e-300)
    rows_of = {0: np.arange(n)}
    best = {0: _best_box(S2, T, rows_of[0], literal_price, min_leaf, cands) if n >= 2 else (-np.inf, [])}
    steps = []
    while len(steps) + 1 < max_leaves and best:
        leaf = max(best, key=lambda k: (best[k][0], -k))
        g, box = best[leaf]
        if not np.isfinite(g) or g <= 1e-9 * scale:
            break
        del best[leaf]
        rows = rows_of.pop(leaf)
        inside = S2[np.ix_(rows, box)].all(1)
        t = len(steps)
        steps.append((leaf, list(box)))
        for node, part in ((2 * t + 1, rows[inside]), (2 * t + 2, rows[~inside])):
            rows_of[node] = part
            best[node] = _best_box(S2, T, part, literal_price, min_leaf, cands) if part.size >= 2 else (-np.inf, [])
    return steps
