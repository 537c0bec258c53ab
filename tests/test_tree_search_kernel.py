"""The C box tree at every size (grow_tree_path, src_c/dfg_tree_path.c) against its NumPy
reference (tests/tree_search_reference.py): the same steps on random problems whose target
sums are exact (class indicators, small integers), planted trees recovered, the tree's
invariants on inexact problems, the validation scores at every size
(grow_tree_path_scored) against the reference's tree_path_scores, input checks, the stop
flag, and independence of the thread count."""
import contextvars
import threading
import time

import numpy as np
import pytest

import tree_search_reference
from defrag.search import _tree_search
from defrag.search.list_search import box_cover, candidate_boxes
from defrag.search.tree_search import grow_tree_path, grow_tree_path_scored
from defrag.utils.interrupt import KernelInterrupted
from test_interrupt import stop_flag
from test_list_search_kernel import BAD as LIST_BAD
from test_list_search_kernel import _good as list_good
from test_list_search_kernel import _problem


def _reference(S, T, feature, group, candidates, max_leaves, literal_price=0.0, min_leaf=1):
    steps = tree_search_reference.grow_tree_path(S, T, feature, group, candidates, max_leaves, literal_price,
                                                 min_leaf)
    return [(int(leaf), [int(j) for j in box]) for leaf, box in steps]


def _leaves(S, steps):
    """Each row's leaf after the steps (node ids as grow_tree_path numbers them)."""
    node = np.zeros(S.shape[0], dtype=np.int64)
    for t, (leaf, box) in enumerate(steps):  # over the steps
        here = node == leaf
        then = box_cover(S, box)
        node[here & then] = 2 * t + 1
        node[here & ~then] = 2 * t + 2
    return node


def _loss(T, node):
    """The squared error of T about each leaf's mean."""
    T = np.asarray(T, dtype=np.float64).reshape(node.size, -1)
    return sum(float(((T[node == g] - T[node == g].mean(axis=0)) ** 2).sum()) for g in np.unique(node))


@pytest.mark.parametrize("kind,d", [("class", 2), ("class", 3), ("class", 5), ("reg", 1), ("reg", 2)])
@pytest.mark.parametrize("n_cand", [0, 6])
@pytest.mark.parametrize("literal_price", [0.0, 0.05, 0.5])
def test_same_steps_as_the_numpy_growth(kind, d, n_cand, literal_price):
    rng = np.random.default_rng(d * 100 + n_cand * 10 + int(literal_price * 100))
    for rep in range(2):
        n, L = int(rng.integers(20, 260)), int(rng.integers(1, 40))
        min_leaf = (1, 4)[rep]
        S, T, feature, group, cand = _problem(700 + rep * 31 + d, n, L, d, kind, n_cand, nested=rep == 0)
        expected = _reference(S, T, feature, group, cand, 8, literal_price, min_leaf)
        assert grow_tree_path(S, T, feature, group, cand, 8, literal_price, min_leaf) == expected


def test_the_random_problems_exercise_the_search():
    # the comparisons above see long boxes, splits below the root's "else" side, and a
    # price that changes the steps
    long_box = else_split = price_matters = False
    for seed in range(12):
        S, T, feature, group, cand = _problem(900 + seed, 200, 30, 3, "class", 6, nested=seed % 2 == 0)
        free = grow_tree_path(S, T, feature, group, cand, 8)
        priced = grow_tree_path(S, T, feature, group, cand, 8, literal_price=0.05)
        long_box |= any(len(box) >= 3 for _, box in free)
        else_split |= any(leaf % 2 == 0 and leaf > 0 for leaf, _ in free)
        price_matters |= free != priced
    assert long_box and else_split and price_matters


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("L", [0, 1, 3])
def test_tiny_problems(n, L):
    for seed in range(4):
        S, T, feature, group, cand = _problem(seed, n, L, 2, "class", 3)
        for min_leaf in (1, 2):
            got = grow_tree_path(S, T, feature, group, cand, 5, min_leaf=min_leaf)
            assert got == _reference(S, T, feature, group, cand, 5, min_leaf=min_leaf)
            assert len(got) <= max(n // min_leaf - 1, 0)


def test_larger_problem_with_candidate_boxes():
    S, T, feature, group, cand = _problem(3, 900, 120, 3, "class", 20)
    expected = _reference(S, T, feature, group, cand, 12, 0.02, 3)
    assert grow_tree_path(S, T, feature, group, cand, 12, 0.02, 3) == expected
    # a CandidateBoxes is the same candidates
    packed = candidate_boxes(cand, 2 * S.shape[1])
    assert grow_tree_path(S, T, feature, group, packed, 12, 0.02, 3) == expected


@pytest.mark.parametrize("kind", ["class", "reg"])
def test_smaller_trees_are_prefixes(kind):
    S, T, feature, group, cand = _problem(10, 400, 30, 3, kind, 5)
    if kind == "reg":  # inexact sums: a child's sums taken anew or by difference alike at every size
        T = T + np.random.default_rng(5).normal(size=T.shape)
    full = grow_tree_path(S, T, feature, group, cand, 10)
    assert len(full) == 9
    for max_leaves in (1, 2, 5):
        assert grow_tree_path(S, T, feature, group, cand, max_leaves) == full[:max_leaves - 1]


@pytest.mark.parametrize("min_leaf", [1, 7])
def test_each_step_lowers_the_loss_and_keeps_min_leaf_rows(min_leaf):
    # inexact sums (float targets): the tree's own invariants
    S, T, feature, group, cand = _problem(12, 600, 40, 2, "reg", 6, nested=True)
    T = T + np.random.default_rng(3).normal(size=T.shape)
    steps = grow_tree_path(S, T, feature, group, cand, 20, 0.01, min_leaf)
    assert len(steps) == 19
    live, before = {0}, _loss(T, _leaves(S, []))
    for k in range(1, len(steps) + 1):  # over the tree's sizes
        leaf, box = steps[k - 1]
        assert leaf in live and box == sorted(box) and len(box) >= 1
        live = (live - {leaf}) | {2 * k - 1, 2 * k}
        node = _leaves(S, steps[:k])
        assert set(np.unique(node)) == live
        assert np.bincount(node)[sorted(live)].min() >= min_leaf
        after = _loss(T, node)
        assert after < before
        before = after


def test_thread_count_does_not_change_the_steps():
    # big enough for the literal sums to run on several threads (LS_PAR_WORK)
    S, T, feature, group, cand = _problem(6, 3000, 300, 1, "reg", 10, nested=False)
    T = T + np.random.default_rng(0).random(T.shape)  # inexact sums: any order change would show
    one = grow_tree_path(S, T, feature, group, cand, 12, 0.01, 1, n_threads=1)
    assert len(one) == 11
    for n_threads in (2, 3):
        assert grow_tree_path(S, T, feature, group, cand, 12, 0.01, 1, n_threads=n_threads) == one


# ------------------------------------------------------------------ planted trees
def _planted(y, n_features=4, seed=0):
    """(S, T, feature, group, literal) over thresholds 0.1 .. 0.9 of n_features uniform
    features; literal(f, t): the literal x_f > t (L + that: x_f <= t). y: a function of X."""
    rng = np.random.default_rng(seed)
    X = rng.random((2000, n_features))
    thresholds = np.round(np.arange(1, 10) / 10, 1)
    feat = np.repeat(np.arange(n_features), thresholds.size)
    thr = np.tile(thresholds, n_features)
    S = X[:, feat] > thr
    L = feat.size
    feature = np.concatenate([feat, feat]).astype(np.int64)
    group = np.concatenate([2 * feat, 2 * feat + 1]).astype(np.int64)

    def literal(f, t, above=True):
        j = int(np.flatnonzero((feat == f) & np.isclose(thr, t))[0])
        return j if above else L + j

    return S, y(X).astype(np.float64), feature, group, literal


def test_a_planted_box_is_one_step():
    S, y, feature, group, literal = _planted(lambda X: (X[:, 0] > 0.5) & (X[:, 1] > 0.3))
    T = np.eye(2)[y.astype(int)]
    steps = grow_tree_path(S, T, feature, group, [], 8)
    assert steps == [(0, sorted([literal(0, 0.5), literal(1, 0.3)]))]  # then both leaves are pure


def test_a_planted_split_is_one_literal():
    S, y, feature, group, literal = _planted(lambda X: 2.0 * (X[:, 2] > 0.6))
    # the split's two literals drop the loss alike: the lower one (x_2 > 0.6) is taken
    assert grow_tree_path(S, y, feature, group, [], 8) == [(0, [literal(2, 0.6)])]


def test_a_planted_tree_is_recovered():
    # x_2 > 0.6: 3; otherwise the box x_0 > 0.5 and x_1 > 0.3: 1; otherwise 0
    S, y, feature, group, literal = _planted(
        lambda X: 3.0 * (X[:, 2] > 0.6) + ((X[:, 2] <= 0.6) & (X[:, 0] > 0.5) & (X[:, 1] > 0.3)))
    steps = grow_tree_path(S, y, feature, group, [], 8)
    assert steps == [(0, [literal(2, 0.6)]), (2, sorted([literal(0, 0.5), literal(1, 0.3)]))]
    # a candidate box (FAB's) that is the planted box starts the search there: the same tree
    box = [literal(0, 0.5), literal(1, 0.3), literal(2, 0.6, above=False)]
    assert grow_tree_path(S, y, feature, group, [box], 8) == steps


def test_a_price_of_one_sse_per_literal_leaves_single_literals():
    # a drop is at most the leaf's SSE: a second literal that costs as much never pays
    S, T, feature, group, cand = _problem(14, 500, 40, 3, "class", 6)
    free = grow_tree_path(S, T, feature, group, cand, 10)
    assert max(len(box) for _, box in free) >= 2
    priced = grow_tree_path(S, T, feature, group, cand, 10, literal_price=1.0)
    assert len(priced) == 9 and all(len(box) == 1 for _, box in priced)


# ------------------------------------------------------------------ bad input
def _good():
    good = list_good()
    del good["max_rules"]
    return {**good, "max_leaves": 3}


# the list search's bad problems (test_list_search_kernel.BAD, but for its own arguments),
# then the tree's
BAD = {case: bad for case, bad in LIST_BAD.items() if not case.startswith("max_rules")}
BAD.update({
    "candidates of another split table": (ValueError, {"candidates": candidate_boxes([[0]], 10)}),
    "max_leaves 0": (ValueError, {"max_leaves": 0}),
    "max_leaves negative": (ValueError, {"max_leaves": -2}),
    "max_leaves float": (TypeError, {"max_leaves": 3.0}),
    "max_leaves bool": (TypeError, {"max_leaves": True}),
    "min_leaf 0": (ValueError, {"min_leaf": 0}),
    "min_leaf float": (TypeError, {"min_leaf": 1.5}),
    "literal_price NaN": (ValueError, {"literal_price": float("nan")}),
    "literal_price inf": (ValueError, {"literal_price": float("inf")}),
    "literal_price negative": (ValueError, {"literal_price": -0.1}),
    "literal_price text": (TypeError, {"literal_price": "0.1"}),
    "n_threads 0": (ValueError, {"n_threads": 0}),
    "n_threads float": (TypeError, {"n_threads": 2.5}),
})


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input(case):
    error, change = BAD[case]
    with pytest.raises(error):
        grow_tree_path(**{**_good(), **change})


def _kernel_args():
    """Good arguments of tree_path_grow."""
    kw = _good()
    S = np.ascontiguousarray(kw["S"]).view(np.uint8)
    T = np.ascontiguousarray(kw["T"], dtype=np.float64)
    ptr, lits = np.array([0, 2], np.int64), np.array([0, 1], np.int64)
    # S, T, feature, group, cand_ptr, cand_literals, max_leaves, literal_price, min_leaf, max_moves,
    # n_starts, rel_tol
    return (S, T, kw["literal_feature"], kw["literal_group"], ptr, lits, 4, 0.1, 1, 12, 2, 1e-9)


def _change(i, value):
    return lambda a: a[:i] + (value,) + a[i + 1:]


# hostile arguments of the kernel's entry point: each a change of _kernel_args()
KERNEL_BAD = {
    "T rows": lambda a: (a[0], a[1][:-1]) + a[2:],
    "groups short": lambda a: a[:3] + (a[3][:-1],) + a[4:],
    "cand_ptr past the literals": _change(4, np.array([0, 3], np.int64)),
    "cand_ptr not from 0": _change(4, np.array([1, 2], np.int64)),
    "cand_ptr decreasing": _change(4, np.array([0, 2, 1, 2], np.int64)),
    "literal out of range": _change(5, np.array([0, 8], np.int64)),
    "no leaves": _change(6, 0),
    "negative price": _change(7, -1.0),
    "infinite price": _change(7, float("inf")),
    "min_leaf 0": _change(8, 0),
    "negative moves": _change(9, -1),
    "negative starts": _change(10, -1),
    "NaN tolerance": _change(11, float("nan")),
    "negative tolerance": _change(11, -1e-9),
}


def test_kernel_accepts_good_arrays():
    leaf, step_ptr, literals = _tree_search.tree_path_grow(*_kernel_args())
    assert leaf.size == step_ptr.size - 1 and step_ptr[-1] == literals.size and leaf.size >= 1


@pytest.mark.parametrize("case", sorted(KERNEL_BAD))
def test_kernel_checks_its_arrays(case):
    with pytest.raises(ValueError):
        _tree_search.tree_path_grow(*KERNEL_BAD[case](_kernel_args()))


def test_kernel_takes_at_most_one_leaf_per_row():
    # more leaves than rows cannot be reached: the buffers are sized for n, not max_leaves
    S, T, feature, group, cand = _problem(11, 40, 12, 2, "class", 3)
    leaf, step_ptr, literals = _tree_search.tree_path_grow(
        np.ascontiguousarray(S).view(np.uint8), np.ascontiguousarray(T, dtype=np.float64), feature, group,
        np.zeros(1, np.int64), np.zeros(0, np.int64), 10 ** 15, 0.0, 1, 12, 2, 1e-9)
    assert 1 <= leaf.size <= 39
    assert grow_tree_path(S, T, feature, group, [], 10 ** 9) == grow_tree_path(S, T, feature, group, [], 40)


# ------------------------------------------------------------------ the stop flag
def test_the_kernel_returns_at_its_first_check_when_the_flag_is_set():
    args = _good()
    with stop_flag(1):
        with pytest.raises(KernelInterrupted, match="kernel tree_path_grow: stopped"):
            grow_tree_path(**args)
    plain = grow_tree_path(**args)
    with stop_flag(0):  # a flag that stays unset changes nothing
        assert grow_tree_path(**args) == plain


def test_the_flag_stops_a_running_growth():
    # a growth that runs for many seconds returns soon after the flag is set from another thread
    S, T, feature, group, cand = _problem(15, 20000, 800, 3, "reg", 10, nested=False)
    T = T + np.random.default_rng(4).random(T.shape)
    outcome = {}

    def run():
        try:
            outcome["value"] = grow_tree_path(S, T, feature, group, cand, 2000, n_threads=1)
        except KernelInterrupted as exc:
            outcome["error"] = exc

    with stop_flag(0) as flag:
        worker = threading.Thread(target=contextvars.copy_context().run, args=(run,))
        worker.start()
        time.sleep(0.3)
        flag[0] = 1
        set_at = time.perf_counter()
        worker.join()
        took = time.perf_counter() - set_at
    assert "kernel tree_path_grow: stopped" in str(outcome.get("error")), outcome
    assert took < 1.0, took


# ------------------------------------------------------------------ validation scores
def _scored_problem(seed, n, m, L, d, kind, n_cand, exact=True):
    """(S, T, feature, group, cand, S_val, y_val, n_classes): a training part of n rows and
    a validation part of m. exact: targets whose sums are exact (probabilities in 1/16ths,
    small integers), so that leaf outputs tie as the reference's; else float noise."""
    S, T, feature, group, cand = _problem(seed, n + m, L, d, kind, n_cand, nested=seed % 2 == 0)
    rng = np.random.default_rng(seed)
    T = np.asarray(T, dtype=np.float64).reshape(n + m, -1)
    if kind == "class":
        T = (np.round(16 * T) + rng.integers(0, 4, T.shape)) / 16  # soft, ties among the classes
        if not exact:
            T = T + 0.01 * rng.random(T.shape)
        y_val, n_classes = rng.integers(0, T.shape[1], m), T.shape[1]
    else:
        if not exact:
            T = T + rng.normal(size=T.shape)
        y_val, n_classes = T[n:, 0] + rng.integers(-2, 3, m), 0
    return S[:n], T[:n], feature, group, cand, S[n:], y_val, n_classes


def _reference_scores(steps, S, T, S_val, y_val, n_classes, n_sizes):
    return tree_search_reference.tree_path_scores(steps, S, T, S_val, y_val, n_classes, n_sizes)


@pytest.mark.parametrize("kind,d", [("class", 2), ("class", 3), ("class", 5), ("reg", 1), ("reg", 2)])
@pytest.mark.parametrize("n_cand", [0, 6])
@pytest.mark.parametrize("literal_price", [0.0, 0.05, 0.5])
def test_scores_are_the_numpy_scores(kind, d, n_cand, literal_price):
    rng = np.random.default_rng(d * 100 + n_cand * 10 + int(literal_price * 100))
    for rep in range(3):
        n, m, L = int(rng.integers(20, 400)), int(rng.integers(0, 120)), int(rng.integers(1, 40))
        min_leaf, exact = (1, 4, 2)[rep], rep < 2
        S, T, feature, group, cand, S_val, y_val, n_classes = _scored_problem(
            300 + rep * 17 + d, n, m, L, d, kind, n_cand, exact)
        n_sizes = (10, 4, 30)[rep]
        steps, losses, checks = grow_tree_path_scored(S, T, feature, group, cand, n_sizes, S_val, y_val, n_classes,
                                                      literal_price, min_leaf)
        assert steps == grow_tree_path(S, T, feature, group, cand, n_sizes, literal_price, min_leaf)
        assert losses.shape == checks.shape == (n_sizes, m)
        ref_losses, ref_checks = _reference_scores(steps, S, T, S_val, y_val, n_classes, n_sizes)
        np.testing.assert_array_equal(checks, ref_checks)
        if exact or kind == "class":  # (classes: outputs 0.01 apart, no tie to round)
            np.testing.assert_array_equal(losses, ref_losses)
        else:  # sums in another order could round otherwise
            np.testing.assert_allclose(losses, ref_losses, rtol=1e-12, atol=0)


def test_the_scored_problems_exercise_the_scores():
    # the comparisons above see boxes whose literals a reader takes out of the box's order,
    # validation rows that stop at a later literal, leaves whose outputs tie among classes,
    # and paths shorter than the sizes asked for
    out_of_order = late_stop = tie = short = False
    for seed in range(10):
        S, T, feature, group, cand, S_val, y_val, n_classes = _scored_problem(seed, 300, 100, 30, 3, "class", 6)
        steps, losses, checks = grow_tree_path_scored(S, T, feature, group, cand, 60, S_val, y_val, n_classes,
                                                      min_leaf=8)
        node = _leaves(S, [])
        for t, (leaf, box) in enumerate(steps):  # over the steps
            counts = [int(box_cover(S[node == leaf], [j]).sum()) for j in box]
            out_of_order |= counts != sorted(counts)
            here = _leaves(S_val, steps[:t]) == leaf
            read = checks[t + 1] - checks[t]
            late_stop |= bool(np.any(here & (read > 1) & (read < len(box))))
            node = _leaves(S, steps[:t + 1])
        for g in np.unique(node):
            out = T[node == g].mean(axis=0)
            tie |= int(np.sum(out == out.max())) > 1
        short |= len(steps) < 59 and np.array_equal(losses[-1], losses[len(steps)])
    assert out_of_order and late_stop and tie and short


@pytest.mark.parametrize("n", [0, 1, 2, 5])
@pytest.mark.parametrize("L", [0, 1, 3])
@pytest.mark.parametrize("kind", ["class", "reg"])
def test_tiny_problems_are_scored(n, L, kind):
    for seed in range(3):
        S, T, feature, group, cand, S_val, y_val, n_classes = _scored_problem(seed, n, 7, L, 2, kind, 3)
        for max_leaves, min_leaf in ((1, 1), (5, 1), (5, 2)):
            steps, losses, checks = grow_tree_path_scored(S, T, feature, group, cand, max_leaves, S_val, y_val,
                                                          n_classes, min_leaf=min_leaf)
            assert steps == grow_tree_path(S, T, feature, group, cand, max_leaves, min_leaf=min_leaf)
            ref_losses, ref_checks = _reference_scores(steps, S, T, S_val, y_val, n_classes, max_leaves)
            np.testing.assert_array_equal(losses, ref_losses)
            np.testing.assert_array_equal(checks, ref_checks)


def test_scores_do_not_depend_on_the_thread_count():
    S, T, feature, group, cand = _problem(6, 3000, 300, 1, "reg", 10, nested=False)
    T = T + np.random.default_rng(0).random(T.shape)
    S_val, y_val = S[2500:], T[2500:, 0] + 0.5
    one = grow_tree_path_scored(S[:2500], T[:2500], feature, group, cand, 12, S_val, y_val, 0, 0.01, n_threads=1)
    for n_threads in (2, 3):
        other = grow_tree_path_scored(S[:2500], T[:2500], feature, group, cand, 12, S_val, y_val, 0, 0.01,
                                      n_threads=n_threads)
        assert other[0] == one[0]
        np.testing.assert_array_equal(other[1], one[1])
        np.testing.assert_array_equal(other[2], one[2])


def _good_scored():
    kw = _good()
    S, T = kw["S"], kw["T"]
    return {**kw, "S": S[:20], "T": T[:20], "S_val": S[20:], "y_val": np.argmax(T[20:], axis=1),
            "n_classes": T.shape[1]}


def test_good_scored_arguments_are_scored():
    steps, losses, checks = grow_tree_path_scored(**_good_scored())
    assert len(steps) >= 1 and losses.shape == checks.shape == (3, 10)


BAD_SCORED = {
    "S_val 1-D": (ValueError, {"S_val": np.zeros(10, bool)}),
    "S_val of strings": (TypeError, {"S_val": np.full((10, 4), "a")}),
    "S_val columns": (ValueError, {"S_val": np.zeros((10, 5), bool)}),
    "y_val short": (ValueError, {"y_val": np.zeros(9, np.int64)}),
    "y_val 2-D": (ValueError, {"y_val": np.zeros((10, 1), np.int64)}),
    "class code negative": (ValueError, {"y_val": np.full(10, -1)}),
    "class code too large": (ValueError, {"y_val": np.full(10, 2)}),
    "class codes floats": (TypeError, {"y_val": np.zeros(10)}),
    "n_classes not T's columns": (ValueError, {"n_classes": 3, "y_val": np.zeros(10, np.int64)}),
    "n_classes negative": (ValueError, {"n_classes": -1}),
    "n_classes float": (ValueError, {"n_classes": 2.0}),
    "n_classes bool": (ValueError, {"n_classes": True}),
    "y NaN": (ValueError, {"n_classes": 0, "y_val": np.where(np.arange(10) == 3, np.nan, 0.0)}),
    "y inf": (ValueError, {"n_classes": 0, "y_val": np.full(10, np.inf)}),
    "y strings": (TypeError, {"n_classes": 0, "y_val": np.full(10, "a")}),
}


@pytest.mark.parametrize("case", sorted(BAD_SCORED))
def test_bad_scored_input(case):
    error, change = BAD_SCORED[case]
    with pytest.raises(error):
        grow_tree_path_scored(**{**_good_scored(), **change})


def _kernel_scored(**change):
    """Good keyword arguments of tree_path_grow's validation rows, changed."""
    kw = _good()
    S_val = np.ascontiguousarray(kw["S"][:10]).view(np.uint8)
    good = {"S_val": S_val, "codes_val": np.zeros(10, np.int64), "n_classes": 2, "n_sizes": 4}
    return {**good, **change}


KERNEL_BAD_SCORED = {
    "S_val columns": {"S_val": np.zeros((10, 3), np.uint8)},
    "codes short": {"codes_val": np.zeros(9, np.int64)},
    "codes missing": {"codes_val": None},
    "n_classes not T's columns": {"n_classes": 3},
    "n_classes negative": {"n_classes": -1},
    "y missing": {"n_classes": 0},
    "y short": {"n_classes": 0, "y_val": np.zeros(9)},
    "no sizes": {"n_sizes": 0},
}


@pytest.mark.parametrize("case", sorted(KERNEL_BAD_SCORED))
def test_kernel_checks_its_validation_arrays(case):
    with pytest.raises(ValueError):
        _tree_search.tree_path_grow(*_kernel_args(), **_kernel_scored(**KERNEL_BAD_SCORED[case]))


# values the kernel takes as grow_tree_path(_scored) checked them (once, not on each of a
# fit's growths): given others, its answer is not meant, but it reads no memory outside
# the arrays (a class code is compared, never an index)
KERNEL_TRUSTED = {
    "S of 2 and 255": (lambda a: (np.where(a[0] > 0, 255, 2 * (np.arange(a[0].size).reshape(a[0].shape) % 2))
                                  .astype(np.uint8),) + a[1:], {}),
    "T NaN": (lambda a: (a[0], np.where(np.arange(a[1].size).reshape(a[1].shape) % 3 == 0, np.nan, a[1]))
              + a[2:], {}),
    "feature negative": (lambda a: a[:2] + (np.full_like(a[2], -1),) + a[3:], {}),
    "S_val of 2": (lambda a: a, {"S_val": np.full((10, 4), 2, np.uint8)}),
    "codes out of range": (lambda a: a, {"codes_val": np.arange(-5, 5, dtype=np.int64) * 10 ** 12}),
    "y NaN": (lambda a: a, {"n_classes": 0, "y_val": np.full(10, np.nan)}),
}


@pytest.mark.parametrize("case", sorted(KERNEL_TRUSTED))
def test_kernel_reads_within_its_arrays_whatever_the_values(case):
    change, scored = KERNEL_TRUSTED[case]
    args = change(_kernel_args())
    if "y_val" in scored:  # regression: T's first column
        args = (args[0], np.ascontiguousarray(args[1][:, :1])) + args[2:]
    leaf, step_ptr, literals, losses, checks = _tree_search.tree_path_grow(*args, **_kernel_scored(**scored))
    assert leaf.size == step_ptr.size - 1 and step_ptr[-1] == literals.size and losses.shape == checks.shape == (4, 10)
    assert np.all((literals >= 0) & (literals < 2 * args[0].shape[1]))
    assert np.all((leaf >= 0) & (leaf <= 2 * np.arange(leaf.size)))  # a leaf made by an earlier step


def test_kernel_scores_good_validation_arrays():
    leaf, step_ptr, literals, losses, checks = _tree_search.tree_path_grow(*_kernel_args(), **_kernel_scored())
    assert leaf.size >= 1 and losses.shape == checks.shape == (4, 10)
    assert np.all((losses == 0) | (losses == 1)) and np.all(checks[0] == 0) and np.all(checks[1] >= 1)


def test_the_scored_growth_stops_at_the_flag():
    with stop_flag(1):
        with pytest.raises(KernelInterrupted, match="kernel tree_path_grow: stopped"):
            grow_tree_path_scored(**_good_scored())


@pytest.mark.parametrize("kind,d", [("class", 3), ("reg", 1)])
def test_scores_read_leaf_outputs_from_outputs_where_given(kind, d):
    """A tree grown on T whose leaves print other values (y's, where y is given): its
    validation losses are the reference's with those values, its steps T's."""
    rng = np.random.default_rng(7 + d)
    S, T, feature, group, cand, S_val, y_val, n_classes = _scored_problem(41 + d, 300, 80, 20, d, kind, 6, True)
    outputs = np.eye(d)[rng.integers(0, d, S.shape[0])] if kind == "class" else rng.integers(-3, 4, (S.shape[0], 1))
    outputs = outputs.astype(np.float64)
    steps, losses, checks = grow_tree_path_scored(S, T, feature, group, cand, 12, S_val, y_val, n_classes,
                                                  0.05, 2, outputs=outputs)
    assert steps == grow_tree_path(S, T, feature, group, cand, 12, 0.05, 2)
    ref_losses, ref_checks = _reference_scores(steps, S, outputs, S_val, y_val, n_classes, 12)
    np.testing.assert_array_equal(checks, ref_checks)
    np.testing.assert_array_equal(losses, ref_losses)
    plain = grow_tree_path_scored(S, T, feature, group, cand, 12, S_val, y_val, n_classes, 0.05, 2)[1]
    assert not np.array_equal(plain, losses)  # the outputs are read
    with pytest.raises(ValueError, match="outputs must be finite"):
        grow_tree_path_scored(S, T, feature, group, cand, 12, S_val, y_val, n_classes, outputs=outputs[:5])


def _node_means(steps, S, U):
    """Every node's mean of U over its rows, as NumPy sums them (np.add.reduce over the
    node's rows, then / count; node 0 U.mean): the values a fit prints at its leaves."""
    node = np.zeros(S.shape[0], dtype=np.int64)
    means = {0: U.mean(axis=0)}
    for t, (leaf, box) in enumerate(steps):  # over the steps
        here = node == leaf
        then = box_cover(S, box)
        for child, rows in ((2 * t + 1, here & then), (2 * t + 2, here & ~then)):
            node[rows] = child
            means[child] = np.add.reduce(U[rows], axis=0) / np.count_nonzero(rows)
    return means


@pytest.mark.parametrize("kind,d", [("class", 3), ("reg", 1), ("reg", 2)])
@pytest.mark.parametrize("with_outputs", [False, True])
def test_node_outputs_are_numpys_means_bit_for_bit(kind, d, with_outputs):
    """Arbitrary float targets and outputs (sums that round): the kernel's node outputs are
    the numbers NumPy's means give, so a fit prints them without a replay in Python."""
    rng = np.random.default_rng(d + 10 * with_outputs)
    for rep in range(3):
        n, L = int(rng.integers(30, 400)), int(rng.integers(2, 40))
        S, T, feature, group, cand = _problem(900 + rep, n, L, d, kind, 6)
        T = T + rng.normal(scale=1e-3, size=T.shape) * (kind == "reg")  # (class targets stay indicators)
        U = rng.random(T.shape) * 1e3 + np.pi if with_outputs else None
        steps, nodes = grow_tree_path(S, T, feature, group, cand, 9, 0.05, 2, outputs=U, node_outputs=True)
        assert steps == grow_tree_path(S, T, feature, group, cand, 9, 0.05, 2)
        expected = _node_means(steps, S, T if U is None else U)
        assert sorted(nodes) == sorted(expected) == list(range(2 * len(steps) + 1))
        for g, mean in expected.items():
            assert np.array_equal(nodes[g], mean), (rep, g)
