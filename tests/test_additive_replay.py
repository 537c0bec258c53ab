"""additive_value_path replays a sum-of-trees path in C (dfg_additive_replay): checked
against a plain NumPy replay of the same equations (a new split's two leaves set to the
mean of their term's residual, then backfit rounds over every term's leaves)."""
import numpy as np
import pytest
from additive_search_reference import AdditivePath

from defrag.search.additive_search import additive_value_path


def numpy_value_path(S, T, steps, backfit_rounds):
    """The same replay with the kernel's NumPy reference (tests/additive_search_reference.py):
    a step's two new leaves get the means of their term's residual, then the backfit."""
    model = AdditivePath(S, T)
    path = []
    for term, node, split in steps:
        R = model.residual(skip=term)
        rows = model.leaf[term] == node if term < len(model.leaf) else np.ones(model.n, dtype=bool)
        model.split(term, node, split, R[rows & model.S[:, split]].mean(axis=0),
                    R[rows & ~model.S[:, split]].mean(axis=0))
        model.backfit(backfit_rounds)
        path.append((model.base, [dict(sorted(v.items())) for v in model.values]))
    return path


def random_path(rng, S, n_steps):
    """A path of n_steps valid steps: each splits a leaf of a term (or the root of a new
    term) by a split that leaves rows on both sides."""
    n, L = S.shape
    leaves = []  # per term: node -> its rows
    steps = []
    while len(steps) < n_steps:
        term = int(rng.integers(0, len(leaves) + 1))
        if term == len(leaves):
            node, rows = 0, np.arange(n)
        else:
            node = int(rng.choice(sorted(leaves[term])))
            rows = leaves[term][node]
        ok = [l for l in range(L) if 0 < S[rows, l].sum() < rows.size]
        if not ok:
            continue
        split = int(rng.choice(ok))
        if term == len(leaves):
            leaves.append({0: rows})
        k = len(leaves[term]) - 1
        del leaves[term][node]
        leaves[term][2 * k + 1] = rows[S[rows, split]]
        leaves[term][2 * k + 2] = rows[~S[rows, split]]
        steps.append((term, node, split))
    return steps


@pytest.mark.parametrize("seed", range(12))
def test_the_c_replay_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    n, L, d = int(rng.integers(20, 200)), int(rng.integers(2, 12)), int(rng.integers(1, 4))
    S = rng.random((n, L)) < rng.uniform(0.2, 0.8, L)
    T = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-3, 4) + rng.normal() * 100
    steps = random_path(rng, S, int(rng.integers(1, 10)))
    rounds = int(rng.integers(0, 4))
    ours, theirs = additive_value_path(S, T, steps, rounds), numpy_value_path(S, T, steps, rounds)
    assert len(ours) == len(theirs) == len(steps)
    for (b1, v1), (b2, v2) in zip(ours, theirs):
        assert np.array_equal(b1, b2)
        assert [sorted(t) for t in v1] == [sorted(t) for t in v2]
        for t1, t2 in zip(v1, v2):
            for node in t1:
                np.testing.assert_allclose(t1[node], t2[node], rtol=1e-12, atol=1e-12 * np.abs(T).max())


def test_a_step_that_empties_a_side_is_refused():
    S = np.zeros((10, 2), dtype=bool)
    S[:5, 0] = True  # split 1 holds on no row
    T = np.arange(10.0)[:, None]
    with pytest.raises(ValueError, match="step 1 leaves a side"):
        additive_value_path(S, T, [(0, 0, 0), (0, 1, 1)], 1)
