"""The C rule-list search (grow_boxes, src_c/dfg_list_search.c) and the list grown at
every size (grow_list_sizes, src_c/dfg_list_path.c) against their NumPy references
(tests/list_search_reference.py): the same boxes on random problems whose target sums
are exact (class indicators, small integers), their input checks, and their
independence of the thread count."""
import numpy as np
import pytest

from defrag.search import _list_search
import list_search_reference
from defrag.search.list_search import grow_boxes, grow_list_sizes
from list_search_reference import ListSearch


def _problem(seed, n, L, d, kind, n_cand, n_features=None, nested=True):
    """(S, T, literal_feature, literal_group, candidates). nested: splits are thresholds
    of a few features (the literals of a feature's side nest, as in a split table);
    otherwise S is random and the groups are random."""
    rng = np.random.default_rng(seed)
    n_features = n_features or max(1, L // 4)
    X = rng.random((n, n_features))
    if nested:
        feat = rng.integers(0, n_features, L)
        S = X[:, feat] > np.round(rng.random(L), 1)  # rounded: duplicate splits too
        group = np.concatenate([feat * 2, feat * 2 + 1])
    else:
        feat = rng.integers(0, n_features, L)
        S = rng.random((n, L)) < rng.random(L)
        group = rng.integers(0, max(1, L // 2), 2 * L)
    if kind == "class":  # one-hot class indicators, classes from the first features
        y = (X[:, 0] > 0.5).astype(int) + 2 * (X[:, -1] > 0.6) + rng.integers(0, 2, n) * (rng.random(n) < 0.1)
        T = np.eye(d)[y % d]
    else:  # small integers centred by an integer: sums exact in float32 too
        base = np.round(4 * X[:, :1] + 3 * (X[:, -1:] > 0.5)) + rng.integers(-1, 2, (n, 1))
        T = np.hstack([base + k for k in range(d)]) - 3
    literal_feature = np.concatenate([feat, feat]).astype(np.int64)
    candidates = [list(rng.choice(2 * L, rng.integers(0, 6), replace=True)) for _ in range(n_cand)] if L else []
    return S, T, literal_feature, group.astype(np.int64), candidates


def _reference(S, T, feature, group, candidates, max_rules, min_support):
    boxes = ListSearch(S, T, feature, group, min_support).grow(candidates, max_rules)
    return [[int(j) for j in b] for b in boxes]


def _cases():
    out = []
    i = 0
    for kind, d in [("class", 2), ("class", 3), ("class", 5), ("reg", 1), ("reg", 2)]:
        for n_cand in (0, 6):
            for min_support in (1, 5):
                i += 1
                out.append((i, kind, d, n_cand, min_support))
    return out


@pytest.mark.parametrize("seed,kind,d,n_cand,min_support", _cases())
def test_same_boxes_as_the_numpy_search(seed, kind, d, n_cand, min_support):
    rng = np.random.default_rng(1000 + seed)
    for rep in range(2):
        n, L = int(rng.integers(20, 260)), int(rng.integers(1, 40))
        S, T, feature, group, cand = _problem(seed * 7 + rep, n, L, d, kind, n_cand, nested=rep == 0)
        expected = _reference(S, T, feature, group, cand, 6, min_support)
        assert grow_boxes(S, T, feature, group, cand, 6, min_support) == expected


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("L", [0, 1, 3])
def test_tiny_problems(n, L):
    for seed in range(4):
        S, T, feature, group, cand = _problem(seed, n, L, 2, "class", 3)
        got = grow_boxes(S, T, feature, group, cand, 4, 1)
        if n == 0:
            assert got == []  # ListSearch cannot be built without rows
            continue
        assert got == _reference(S, T, feature, group, cand, 4, 1)


def test_larger_problem_and_max_rules():
    S, T, feature, group, cand = _problem(3, 900, 120, 3, "class", 20)
    for max_rules in (0, 1, 9):
        expected = _reference(S, T, feature, group, cand, max_rules, 1)
        assert grow_boxes(S, T, feature, group, cand, max_rules, 1) == expected
    S, T, feature, group, cand = _problem(4, 900, 120, 1, "reg", 20)
    assert grow_boxes(S, T, feature, group, cand, 9, 5) == _reference(S, T, feature, group, cand, 9, 5)


def test_inputs_as_the_reference_takes_them():
    # 1-D targets, integer S, numpy-integer literals in the candidates
    S, T, feature, group, cand = _problem(5, 150, 20, 1, "reg", 5)
    cand = [np.asarray(b, dtype=np.int32) for b in cand]
    expected = _reference(S, T, feature, group, cand, 5, 1)
    assert grow_boxes(S.astype(np.uint8), T[:, 0], feature, group, cand, 5) == expected


def test_thread_count_does_not_change_the_boxes():
    # big enough for the literal sums to run on several threads (LS_PAR_WORK)
    S, T, feature, group, cand = _problem(6, 3000, 300, 1, "reg", 10, nested=False)
    T = T + np.random.default_rng(0).random(T.shape)  # inexact sums: any order change would show
    one = grow_boxes(S, T, feature, group, cand, 6, 1, n_threads=1)
    two = grow_boxes(S, T, feature, group, cand, 6, 1, n_threads=2)
    assert one == two and len(one) > 0
    S, T, feature, group, cand = _problem(7, 2000, 300, 4, "class", 10)
    assert grow_boxes(S, T, feature, group, cand, 6, n_threads=1) == grow_boxes(S, T, feature, group, cand, 6,
                                                                                 n_threads=2)


def _good():
    S, T, feature, group, cand = _problem(8, 30, 4, 2, "class", 2)
    return {"S": S, "T": T, "literal_feature": feature, "literal_group": group, "candidates": cand,
            "max_rules": 3}


BAD = {
    "S 1-D": (ValueError, {"S": np.zeros(30, bool)}),
    "S of strings": (TypeError, {"S": np.full((30, 4), "a")}),
    "T rows": (ValueError, {"T": np.zeros((29, 2))}),
    "T 3-D": (ValueError, {"T": np.zeros((30, 2, 1))}),
    "T NaN": (ValueError, {"T": np.where(np.arange(60).reshape(30, 2) == 7, np.nan, 0.0)}),
    "T inf": (ValueError, {"T": np.where(np.arange(60).reshape(30, 2) == 7, np.inf, 0.0)}),
    "T strings": (TypeError, {"T": np.full((30, 2), "a")}),
    "literal_feature short": (ValueError, {"literal_feature": np.zeros(7, np.int64)}),
    "literal_feature floats": (TypeError, {"literal_feature": np.zeros(8)}),
    "literal_feature negative": (ValueError, {"literal_feature": np.full(8, -1)}),
    "literal_group 2-D": (ValueError, {"literal_group": np.zeros((8, 1), np.int64)}),
    "literal out of range": (ValueError, {"candidates": [[0, 8]]}),
    "literal negative": (ValueError, {"candidates": [[-1]]}),
    "literal float": (TypeError, {"candidates": [[0.5]]}),
    "box 2-D": (ValueError, {"candidates": [[[0, 1]]]}),
    "max_rules negative": (ValueError, {"max_rules": -1}),
    "max_rules float": (TypeError, {"max_rules": 2.0}),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input(case):
    error, change = BAD[case]
    with pytest.raises(error):
        grow_boxes(**{**_good(), **change})


def _kernel_args():
    """Good arguments of list_search_grow and list_path_grow (the same signature)."""
    kw = _good()
    S = np.ascontiguousarray(kw["S"]).view(np.uint8)
    T = np.ascontiguousarray(kw["T"], dtype=np.float64)
    ptr, lits = np.array([0, 2], np.int64), np.array([0, 1], np.int64)
    return (S, T, kw["literal_feature"], kw["literal_group"], ptr, lits, 3, 1, 12, 2, 1e-9)


# hostile arguments of either kernel entry point: each a change of _kernel_args()
KERNEL_BAD = {
    "T rows": lambda a: (a[0], a[1][:-1]) + a[2:],
    "groups short": lambda a: a[:3] + (a[3][:-1],) + a[4:],
    "cand_ptr past the literals": lambda a: a[:4] + (np.array([0, 3], np.int64),) + a[5:],
    "cand_ptr not from 0": lambda a: a[:4] + (np.array([1, 2], np.int64),) + a[5:],
    "literal out of range": lambda a: a[:5] + (np.array([0, 8], np.int64),) + a[6:],
    "negative rules": lambda a: a[:6] + (-1,) + a[7:],
    "negative moves": lambda a: a[:8] + (-1,) + a[9:],
    "NaN tolerance": lambda a: a[:10] + (float("nan"),),
}


def test_kernels_accept_good_arrays():
    args = _kernel_args()
    box_ptr, box_literals = _list_search.list_search_grow(*args)
    assert box_ptr[-1] == box_literals.size
    kind, rule, step_ptr, literals = _list_search.list_path_grow(*args)
    assert kind.size == rule.size == step_ptr.size - 1 and step_ptr[-1] == literals.size


@pytest.mark.parametrize("case", sorted(KERNEL_BAD))
@pytest.mark.parametrize("kernel", ["list_search_grow", "list_path_grow"])
def test_kernels_check_their_arrays(kernel, case):
    with pytest.raises(ValueError):
        getattr(_list_search, kernel)(*KERNEL_BAD[case](_kernel_args()))


# values the kernels take as grow_boxes checked them (once, not on every growth): given
# others, their answer is not meant, but they read no memory outside the arrays
KERNEL_TRUSTED = {
    "S of 2 and 255": lambda a: (np.where(a[0] > 0, 255, 2 * (np.arange(a[0].size).reshape(a[0].shape) % 2))
                                 .astype(np.uint8),) + a[1:],
    "T NaN": lambda a: (a[0], np.where(np.arange(a[1].size).reshape(a[1].shape) % 3 == 0, np.nan, a[1])) + a[2:],
    "T inf": lambda a: (a[0], np.full_like(a[1], np.inf)) + a[2:],
    "feature negative": lambda a: a[:2] + (np.full_like(a[2], -1),) + a[3:],
}


@pytest.mark.parametrize("case", sorted(KERNEL_TRUSTED))
def test_kernels_read_within_their_arrays_whatever_the_values(case):
    args = KERNEL_TRUSTED[case](_kernel_args())
    L2 = 2 * args[0].shape[1]
    box_ptr, box_literals = _list_search.list_search_grow(*args)
    assert box_ptr[0] == 0 and np.all(np.diff(box_ptr) >= 0) and box_ptr[-1] == box_literals.size
    kind, rule, step_ptr, literals = _list_search.list_path_grow(*args)
    assert kind.size == rule.size == step_ptr.size - 1 and step_ptr[-1] == literals.size
    assert np.all((box_literals >= 0) & (box_literals < L2)) and np.all((literals >= 0) & (literals < L2))
    assert np.all((rule >= 0) & (rule <= np.arange(rule.size)))  # a rule goes into the list so far


@pytest.mark.parametrize("kind,d", [("class", 2), ("class", 3), ("class", 5), ("reg", 1), ("reg", 2)])
@pytest.mark.parametrize("n_cand", [0, 6])
def test_list_at_every_size_as_the_numpy_growth(kind, d, n_cand):
    rng = np.random.default_rng(d * 10 + n_cand)
    seen_split = seen_default_split = False
    for rep in range(6):
        n, L = int(rng.integers(20, 300)), int(rng.integers(1, 40))
        S, T, feature, group, cand = _problem(500 + rep * 13 + d, n, L, d, kind, n_cand, nested=rep % 2 == 0)
        expected = list_search_reference.grow_list_sizes(S, T, feature, group, cand, 8)
        got = grow_list_sizes(S, T, feature, group, cand, 8)
        assert got == expected
        for before, after in zip(got, got[1:]):
            seen_split |= after[:len(before)] != before
            seen_default_split |= after[:len(before)] == before and len(after[-1]) == 1
    assert seen_split and seen_default_split  # both kinds of step were checked


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("L", [0, 1, 3])
def test_list_at_every_size_on_tiny_problems(n, L):
    for seed in range(4):
        S, T, feature, group, cand = _problem(seed, n, L, 2, "class", 3)
        got = grow_list_sizes(S, T, feature, group, cand, 4)
        assert got[0] == [] and all(len(b) == k for k, b in enumerate(got))
        if n:
            assert got == list_search_reference.grow_list_sizes(S, T, feature, group, cand, 4)


def test_list_at_every_size_does_not_depend_on_the_thread_count():
    # big enough for the split sums to run on several threads (LP_PAR_WORK)
    S, T, feature, group, cand = _problem(9, 3000, 300, 1, "reg", 10, nested=False)
    T = T + np.random.default_rng(1).random(T.shape)  # inexact sums: any order change would show
    one = grow_list_sizes(S, T, feature, group, cand, 8, n_threads=1)
    assert one == grow_list_sizes(S, T, feature, group, cand, 8, n_threads=2) and len(one) == 9


def test_list_at_every_size_stops_at_max_rules():
    S, T, feature, group, cand = _problem(10, 400, 30, 3, "class", 5)
    full = grow_list_sizes(S, T, feature, group, cand, 6)
    for max_rules in (0, 1, 3):
        assert grow_list_sizes(S, T, feature, group, cand, max_rules) == full[:max_rules + 1]


def test_list_at_every_size_takes_at_most_one_rule_per_row():
    # more rules than rows - 1 cannot be reached (every region keeps a row): the buffers
    # are sized for n - 1, not for max_rules
    S, T, feature, group, cand = _problem(11, 40, 12, 2, "class", 3)
    lists = grow_list_sizes(S, T, feature, group, cand, 10 ** 9)
    assert lists == grow_list_sizes(S, T, feature, group, cand, 39) and len(lists) <= 40
    kind, rule, step_ptr, literals = _list_search.list_path_grow(
        np.ascontiguousarray(S).view(np.uint8), np.ascontiguousarray(T, dtype=np.float64), feature, group,
        np.zeros(1, np.int64), np.zeros(0, np.int64), 10 ** 15, 1, 12, 2, 1e-9)
    assert kind.size <= 39
