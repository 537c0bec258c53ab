"""The C additive path (grow_additive_path, src_c/dfg_additive_path.c) against its NumPy
reference (tests/additive_search_reference.py): the same steps on random problems, exact
sums (class indicators, small integers) and inexact ones; the same values to rounding, and
the replay (additive_values) giving them too; a planted additive model found as two terms;
independence of the thread count; hostile arguments; the stop flag; the memory bound."""
import os
import subprocess
import sys

import numpy as np
import pytest

import additive_search_reference as reference
from defrag.search import _additive_search
from defrag.search.additive_search import (MAX_SPLITS, REL_TOL, _kernel_path, additive_leaves, additive_values,
                                          grow_additive_path)
from defrag.utils import _common
from defrag.utils.interrupt import KernelInterrupted


def _problem(seed, n, L, d, kind, nested=True):
    """(S, T). nested: splits are thresholds of a few features (nested, duplicates too, as
    in a split table); otherwise S is random. kind: "class" (class indicators: d = 1 the
    second class's, else one-hot), "int" (small integers), "noisy" (continuous)."""
    rng = np.random.default_rng(seed)
    n_features = max(1, L // 4)
    X = rng.random((n, n_features))
    feat = rng.integers(0, n_features, L)
    if nested:
        S = X[:, feat] > np.round(rng.random(L), 1)  # rounded: duplicate splits too
    else:
        S = rng.random((n, L)) < rng.random(L)
    if kind == "class":
        y = (X[:, 0] > 0.5).astype(int) + 2 * (X[:, -1] > 0.6) + rng.integers(0, 2, n) * (rng.random(n) < 0.1)
        T = (y % 2)[:, None].astype(float) if d == 1 else np.eye(d)[y % d]
    elif kind == "int":
        base = np.round(4 * X[:, :1] + 3 * (X[:, -1:] > 0.5)) + rng.integers(-1, 2, (n, 1))
        T = np.hstack([base + k for k in range(d)]) - 3
    else:
        T = np.sin(3 * X[:, :1]) + (X[:, -1:] > 0.5) + 0.3 * rng.standard_normal((n, d))
    return S, T


def _kernel_values(S, T, max_splits, min_leaf=1, backfit_rounds=3, n_threads=1):
    """(steps, base, per term {node: value}) as the kernel leaves them."""
    steps, base, leaf_values = _kernel_path(S, T, max_splits, min_leaf, backfit_rounds, n_threads)
    values = []
    for t, (term, _, _) in enumerate(steps.tolist()):  # over the steps
        if term == len(values):
            values.append({})
        k = sum(1 for s in steps[:t].tolist() if s[0] == term)  # the term's splits before
        for side in (0, 1):
            if not np.isnan(leaf_values[t, side]).any():
                values[term][2 * k + 1 + side] = leaf_values[t, side]
    return [tuple(s) for s in steps.tolist()], base, [dict(sorted(v.items())) for v in values]


def _close(a, b, scale):
    """Two models' (base, values) equal to rounding."""
    (base_a, values_a), (base_b, values_b) = a, b
    assert np.allclose(base_a, base_b, rtol=1e-12, atol=1e-12 * scale)
    assert [sorted(v) for v in values_a] == [sorted(v) for v in values_b]
    for va, vb in zip(values_a, values_b):
        for node in va:
            assert np.allclose(va[node], vb[node], rtol=1e-8, atol=1e-9 * scale), node


def _cases():
    return [(kind, d) for kind in ("class", "int", "noisy") for d in (1, 2, 3)]


@pytest.mark.parametrize("kind,d", _cases())
def test_same_path_as_the_numpy_growth(kind, d):
    rng = np.random.default_rng(d * 7 + len(kind))
    grew_terms = split_leaves = False
    for rep in range(4):
        n, L = int(rng.integers(20, 300)), int(rng.integers(1, 40))
        S, T = _problem(100 * rep + d, n, L, d, kind, nested=rep % 2 == 0)
        scale = float(np.abs(T).max()) + 1.0
        for min_leaf, rounds in ((1, 3), (4, 1), (1, 0)):
            steps, base, values = reference.grow_additive_path(S, T, 12, min_leaf, rounds)
            got, kbase, kvalues = _kernel_values(S, T, 12, min_leaf, rounds)
            assert got == steps
            _close((kbase, kvalues), (base, values), scale)
            _close(additive_values(S, T, got, len(got), rounds), (kbase, kvalues), scale)
            grew_terms |= any(t > 0 for t, _, _ in got)
            split_leaves |= any(node > 0 for _, node, _ in got)
    assert grew_terms and split_leaves  # both kinds of step were compared


def test_every_prefix_is_the_shorter_path():
    S, T = _problem(7, 400, 30, 2, "noisy")
    full = grow_additive_path(S, T, 10)
    assert len(full) == 10
    for b in (0, 1, 4):
        assert grow_additive_path(S, T, b) == full[:b]
        # the model of b splits replayed from the long path is the short path's
        steps, base, values = reference.grow_additive_path(S, T, b)
        _close(additive_values(S, T, full, b), (base, values), 2.0)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("L", [0, 1, 3])
def test_tiny_problems(n, L):
    for seed in range(4):
        S, T = _problem(seed, n, L, 2, "class")
        for min_leaf in (1, 2):
            got = grow_additive_path(S, T, 4, min_leaf)
            assert got == reference.grow_additive_path(S, T, 4, min_leaf)[0]
            if n < 2 * min_leaf or L == 0:
                assert got == []


def test_a_planted_additive_model_is_two_terms():
    rng = np.random.default_rng(3)
    X = rng.random((2000, 4))
    thresholds = np.linspace(0.1, 0.9, 9)
    S = np.hstack([X[:, [f]] > thresholds for f in range(4)])  # split 9 f + i: x_f > thresholds[i]
    y = 3.0 * (X[:, 1] > 0.3) - 2.0 * (X[:, 2] > 0.6)
    steps = grow_additive_path(S, y, 6)
    assert steps == [(0, 0, 9 + 2), (1, 0, 18 + 5)]  # then no split drops the (zero) error
    base, values = additive_values(S, y, steps, 2)
    leaves = additive_leaves(S, steps)
    fitted = base + sum(np.array([values[t][node] for node in leaves[:, t]]) for t in range(2))
    assert np.allclose(fitted[:, 0], y, atol=1e-9)
    assert values[0][1] - values[0][2] == pytest.approx([3.0])
    assert values[1][1] - values[1][2] == pytest.approx([-2.0])


def test_leaves_route_rows_as_the_reference_model():
    S, T = _problem(11, 300, 25, 1, "noisy")
    steps = grow_additive_path(S, T, 9)
    model = reference.AdditivePath(S, T)
    ref_steps = reference.grow_additive_path(S, T, 9)[0]
    assert steps == ref_steps
    leaves = additive_leaves(S, steps)
    for term, node, split in steps:  # the reference's routing, step by step
        model.split(term, node, split, np.zeros(1), np.zeros(1))
    assert leaves.shape == (300, len(model.leaf))
    for t, leaf in enumerate(model.leaf):
        assert np.array_equal(leaves[:, t], leaf)
    assert np.array_equal(additive_leaves(S, steps, 2), _route_two(S, steps))


def _route_two(S, steps):
    model = reference.AdditivePath(S, np.zeros(S.shape[0]))
    for term, node, split in steps[:2]:
        model.split(term, node, split, np.zeros(1), np.zeros(1))
    return np.column_stack(model.leaf)


def test_thread_count_does_not_change_the_path():
    # big enough for every pass to run on several threads (AP_PAR_WORK)
    S, T = _problem(9, 3000, 300, 1, "noisy", nested=False)
    one = _kernel_path(S, T, 15, 1, 3, 1)
    assert one[0].shape[0] == 15
    for n_threads in (2, 3):
        other = _kernel_path(S, T, 15, 1, 3, n_threads)
        for a, b in zip(one, other):
            assert np.array_equal(a, b, equal_nan=True)  # bit for bit
    S, T = _problem(10, 2000, 200, 3, "class")
    assert grow_additive_path(S, T, 12, n_threads=1) == grow_additive_path(S, T, 12, n_threads=2)


def test_inputs_as_the_reference_takes_them():
    # 1-D targets, integer and float 0/1 S
    S, T = _problem(5, 150, 20, 1, "int")
    expected = reference.grow_additive_path(S, T, 6)[0]
    assert grow_additive_path(S.astype(np.uint8), T[:, 0], 6) == expected
    assert grow_additive_path(S.astype(float), T, 6) == expected


def _good():
    S, T = _problem(8, 30, 4, 2, "class")
    return {"S": S, "T": T, "max_splits": 3}


BAD = {
    "S 1-D": (ValueError, {"S": np.zeros(30, bool)}),
    "S no rows": (ValueError, {"S": np.zeros((0, 4), bool), "T": np.zeros((0, 2))}),
    "S of strings": (TypeError, {"S": np.full((30, 4), "a")}),
    "S not 0/1": (ValueError, {"S": np.full((30, 4), 2)}),
    "S of halves": (ValueError, {"S": np.full((30, 4), 0.5)}),
    "T rows": (ValueError, {"T": np.zeros((29, 2))}),
    "T 3-D": (ValueError, {"T": np.zeros((30, 2, 1))}),
    "T no columns": (ValueError, {"T": np.zeros((30, 0))}),
    "T NaN": (ValueError, {"T": np.where(np.arange(60).reshape(30, 2) == 7, np.nan, 0.0)}),
    "T inf": (ValueError, {"T": np.where(np.arange(60).reshape(30, 2) == 7, np.inf, 0.0)}),
    "T huge": (ValueError, {"T": np.full((30, 2), 1e149)}),
    "T strings": (TypeError, {"T": np.full((30, 2), "a")}),
    "max_splits negative": (ValueError, {"max_splits": -1}),
    "max_splits float": (TypeError, {"max_splits": 2.0}),
    "max_splits bool": (TypeError, {"max_splits": True}),
    "max_splits too many": (ValueError, {"max_splits": MAX_SPLITS + 1}),
    "min_leaf 0": (ValueError, {"min_leaf": 0}),
    "min_leaf float": (TypeError, {"min_leaf": 1.5}),
    "backfit_rounds negative": (ValueError, {"backfit_rounds": -1}),
    "n_threads 0": (ValueError, {"n_threads": 0}),
    "n_threads float": (TypeError, {"n_threads": 1.0}),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input(case):
    error, change = BAD[case]
    with pytest.raises(error):
        grow_additive_path(**{**_good(), **change})


def _steps_good():
    kw = _good()
    return kw["S"], kw["T"], grow_additive_path(kw["S"], kw["T"], 3)


BAD_STEPS = {
    "a term skipped": (ValueError, lambda steps: [(1, 0, 0)] + steps[1:]),
    "not a leaf": (ValueError, lambda steps: steps[:1] + [(0, 0, 1)]),
    "a split out of range": (ValueError, lambda steps: [(0, 0, 4)]),
    "a negative split": (ValueError, lambda steps: [(0, 0, -1)]),
    "not a triple": (ValueError, lambda steps: [(0, 0)]),
    "a float entry": (TypeError, lambda steps: [(0, 0, 1.0)]),
}


@pytest.mark.parametrize("case", sorted(BAD_STEPS))
def test_replay_refuses_steps_that_are_no_path(case):
    S, T, steps = _steps_good()
    assert len(steps) >= 2
    error, change = BAD_STEPS[case]
    bad = change(steps)
    with pytest.raises(error):
        additive_values(S, T, bad, len(bad))
    with pytest.raises(error):
        additive_leaves(S, bad)


def test_replay_refuses_what_it_cannot_replay():
    S, T, steps = _steps_good()
    with pytest.raises(ValueError, match="more than"):
        additive_values(S, T, steps, len(steps) + 1)
    # a split that leaves a side empty: no mean there
    S = S.copy()
    S[:, 0] = True
    with pytest.raises(ValueError, match="without rows"):
        additive_values(S, T, [(0, 0, 0)], 1)
    with pytest.raises(ValueError):
        additive_values(S, T, steps, 1, backfit_rounds=-1)


def _kernel_args():
    S, T = _problem(8, 30, 4, 2, "class")
    return (np.ascontiguousarray(S).view(np.uint8), np.ascontiguousarray(T, dtype=np.float64), 3, 1, 3, REL_TOL)


# hostile arguments of the kernel entry point: each a change of _kernel_args()
KERNEL_BAD = {
    "T rows": lambda a: (a[0], a[1][:-1]) + a[2:],
    "negative splits": lambda a: a[:2] + (-1,) + a[3:],
    "too many splits": lambda a: a[:2] + (2 ** 40,) + a[3:],
    "min_leaf 0": lambda a: a[:3] + (0,) + a[4:],
    "negative rounds": lambda a: a[:4] + (-1,) + a[5:],
    "NaN tolerance": lambda a: a[:5] + (float("nan"),),
    "negative tolerance": lambda a: a[:5] + (-1.0,),
}


def test_kernel_accepts_good_arrays():
    term, node, split, base, values = _additive_search.additive_path_grow(*_kernel_args())
    assert term.size == node.size == split.size == values.shape[0] > 0 and base.shape == (2,)


@pytest.mark.parametrize("case", sorted(KERNEL_BAD))
def test_kernel_checks_its_arrays(case):
    with pytest.raises(ValueError):
        _additive_search.additive_path_grow(*KERNEL_BAD[case](_kernel_args()))


# values the kernel takes as grow_additive_path checked them (once): given others, its
# answer is not meant, but it reads no memory outside the arrays
KERNEL_TRUSTED = {
    "S of 2 and 255": lambda a: (np.where(a[0] > 0, 255, 2 * (np.arange(a[0].size).reshape(a[0].shape) % 2))
                                 .astype(np.uint8),) + a[1:],
    "T NaN": lambda a: (a[0], np.where(np.arange(a[1].size).reshape(a[1].shape) % 3 == 0, np.nan, a[1])) + a[2:],
    "T inf": lambda a: (a[0], np.full_like(a[1], np.inf)) + a[2:],
}


@pytest.mark.parametrize("case", sorted(KERNEL_TRUSTED))
def test_kernel_reads_within_its_arrays_whatever_the_values(case):
    args = KERNEL_TRUSTED[case](_kernel_args())
    term, node, split, base, values = _additive_search.additive_path_grow(*args)
    assert term.size == node.size == split.size == values.shape[0] <= args[2] and base.shape == (2,)
    assert np.all((split >= 0) & (split < args[0].shape[1]))
    assert np.all((term >= 0) & (term <= np.arange(term.size))) and np.all(node >= 0)


def test_kernel_reads_the_stop_flag():
    S, T = _problem(12, 500, 40, 1, "noisy")
    args = (np.ascontiguousarray(S).view(np.uint8), np.ascontiguousarray(T), 8, 1, 3, REL_TOL)
    plain = _additive_search.additive_path_grow(*args)
    for value in (1, 0):
        flag = np.full(1, value, dtype=np.int32)
        token = _common.STOP_FLAG.set(flag)
        try:
            if value:
                with pytest.raises(KernelInterrupted, match="kernel additive_path_grow: stopped"):
                    _additive_search.additive_path_grow(*args)
            else:  # a flag that stays unset changes nothing
                flagged = _additive_search.additive_path_grow(*args)
                for a, b in zip(plain, flagged):
                    assert np.array_equal(a, b, equal_nan=True)
        finally:
            _common.STOP_FLAG.reset(token)


def test_splits_that_cut_alike_tie_to_the_lower():
    # split 1 is split 0's other side: the same drop but for rounding, which must not choose
    rng = np.random.default_rng(4)
    chosen = set()
    for seed in range(20):
        x = rng.random((200, 2))
        S = np.column_stack([x[:, 0] <= 0.4, x[:, 0] > 0.4, x[:, 1] > 0.5])
        T = 2.0 * (x[:, :1] > 0.4) + rng.standard_normal((200, 1))
        steps, base, values = _kernel_values(S, T, 1)
        chosen.add(steps[0])
        assert steps == reference.grow_additive_path(S, T, 1)[0]
        # and within a leaf of a later term
        S2 = np.column_stack([x[:, 1] > 0.5, S[:, :2]])
        T2 = 3.0 * (x[:, 1:] > 0.5) + T
        assert grow_additive_path(S2, T2, 3)[:2] == [(0, 0, 0), (1, 0, 1)]
    assert chosen == {(0, 0, 0)}


WITHIN_THE_BOUND = r"""
import resource
import numpy as np
from defrag.search.additive_search import grow_additive_path


def additive_path_bytes(n_samples, n_splits, n_targets, max_splits):
    # the most the kernel allocates for a path of max_splits splits on n_samples rows,
    # n_splits splits (L) and n_targets targets (d), its outputs left out: the targets less
    # base and row scratch, each term's leaf per row, per leaf (at most 2 max_splits and the
    # root) its sums, scratch and a pointer per earlier leaf, and the counts two leaves of
    # different terms share (L 4-byte counts per pair; at most 2 max_splits^2 pairs, reached
    # when every split makes a new term), with the allocator's overhead per array
    n, L, d, m = (float(v) for v in (n_samples, n_splits, n_targets, max_splits))
    rows = 8.0 * n * d + 8.0 * 4 * n + 4.0 * n * m
    leaves = (2 * m + 2) * (8.0 * (2 * d + 2) * L + 8.0 * 4 * d + 16.0 * 2 * m + 256.0)
    pairs = 2.0 * m * m * (4.0 * L + 64.0)
    return rows + leaves + pairs + 64.0 * m


rng = np.random.default_rng(0)
n, L, m = 2000, 1000, 40
S = np.tile(rng.random((n, m)) > 0.5, (1, L // m + 1))[:, :L]  # m splits, repeated
y = (S[:, :m] * np.linspace(2.0, 1.0, m)).sum(axis=1)  # additive: every split a new term
grow_additive_path(S, y, 2, n_threads=1)  # the libraries' lazy allocations first
with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) for line in f if line.startswith("VmSize:")) * 1024
hard = resource.getrlimit(resource.RLIMIT_AS)[1]
bound = additive_path_bytes(n, L, 1, m)
for share in (0.5, 1.0):  # half the bound: refused cleanly; the bound: room enough
    resource.setrlimit(resource.RLIMIT_AS, (vm + int(share * bound) + 2 ** 20, hard))  # 1 MB for Python's own
    try:
        steps = grow_additive_path(S, y, m, n_threads=1)
        print(len(steps), sum(node == 0 for _, node, _ in steps))
    except MemoryError:
        print("MemoryError")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and RLIMIT_AS")
def test_the_kernel_stays_within_its_memory_bound():
    # the bound's worst case: every split a new term, so that every two leaves but a term's
    # own share counts; under an address-space limit of the bound (and 1 MB for Python) the
    # kernel runs, under half of it the allocation fails and is reported (0.9 fails too:
    # the bound is near tight there)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", WITHIN_THE_BOUND], capture_output=True, text=True, timeout=300,
                         env=env, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["MemoryError", "40", "40"]


MANY_THREADS = r"""
import numpy as np
from defrag.search.additive_search import grow_additive_path
rng = np.random.default_rng(0)
S = rng.random((3000, 300)) > 0.5
y = rng.random(3000) + S[:, 0]
print(grow_additive_path(S, y, 3, n_threads=100000) == grow_additive_path(S, y, 3, n_threads=1))
"""


def test_a_huge_thread_count_runs_as_a_team_it_can_start():
    # 100,000 threads once crashed the process (libgomp's team data on the caller's stack):
    # in a child, so that a crash fails this test only
    out = subprocess.run([sys.executable, "-c", MANY_THREADS], capture_output=True, text=True, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "True"
