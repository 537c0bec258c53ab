"""The Cython entry points reject mismatched arrays with ValueError before any kernel
runs, also under `python -O` (which would strip assert statements)."""
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from defrag.splits import _encoding
from defrag.fit import _fit
from defrag.prototypes import _proximity
from defrag.proxy import _proxy_split
from defrag.rules import _rules_eval
from defrag.utils import _common
from defrag import _testing

X = np.random.default_rng(0).random((10, 3))
FEAT_PTR = np.array([0, 2, 3, 4], dtype=np.int64)  # 4 splits over 3 features
THRESHOLDS = np.array([0.2, 0.6, 0.5, 0.5])


def ranks():
    return _encoding.compute_ranks(X, FEAT_PTR, THRESHOLDS)


def classification_problem(n=10):
    return _fit.Problem(FEAT_PTR, ranks=ranks()[:, :n].copy(), y_class=np.zeros(n, np.int32),
                        n_classes=2)


def params(K=2):
    return {"eta": np.full((K, 4), 0.5), "alpha": np.full(K, 1.0 / K), "gamma": np.full((K, 2), 0.5)}


MISMATCHES = {
    "compute_ranks: feat_ptr one short":
        lambda: _encoding.compute_ranks(X, FEAT_PTR[:-1], THRESHOLDS),
    "compute_ranks: feat_ptr past the thresholds":
        lambda: _encoding.compute_ranks(X, FEAT_PTR, THRESHOLDS[:3]),
    "compute_group_ranks: group_ptr one short":
        lambda: _encoding.compute_group_ranks(X, np.array([0, 1, 2], np.int32), FEAT_PTR[:-1],
                                              THRESHOLDS),
    "pack_rows: thresholds shorter than features":
        lambda: _encoding.pack_rows(X, np.array([0, 1, 2], np.int32), THRESHOLDS[:2]),
    "pack_rows: set arrays without words":
        lambda: _encoding.pack_rows(X, np.array([0], np.int32), THRESHOLDS[:1],
                                    kind=np.zeros(1, np.uint8), set_ptr=np.zeros(2, np.int64)),
    "prune_conditions: keep shorter than the columns":
        lambda: _rules_eval.prune_conditions(np.zeros((3, 1), np.uint64), 10, np.ones(2, np.uint8)),
    "count_all: columns narrower than the samples":
        lambda: _rules_eval.count_all(np.zeros((2, 1), np.uint64), 100),
    "Problem: ranks of another feature count":
        lambda: _fit.Problem(FEAT_PTR, ranks=ranks()[:2].copy(), y_class=np.zeros(10, np.int32),
                             n_classes=2),
    "Problem: bits of another split count":
        lambda: _fit.Problem(FEAT_PTR, bits=np.zeros((10, 2), np.uint64), y_class=np.zeros(10, np.int32),
                             n_classes=2),
    "Problem: one target short":
        lambda: _fit.Problem(FEAT_PTR, ranks=ranks(), y_class=np.zeros(9, np.int32), n_classes=2),
    "fit: beta of another sample count":
        lambda: _fit.fit(classification_problem(), params(), np.full((9, 2), 0.5), "fab", 5, 1e-6,
                         1e-8, 1e-10, 1e-12),
    "fit: no iteration":
        lambda: _fit.fit(classification_problem(), params(), np.full((10, 2), 0.5), "fab", 0, 1e-6,
                         1e-8, 1e-10, 1e-12),
    "mstep: beta of another sample count":
        lambda: _testing.mstep(classification_problem(), np.full((9, 2), 0.5), params(), 1e-10, 1e-12),
    "loglik_ranks: eta of another split count":
        lambda: _testing.loglik_ranks(ranks(), FEAT_PTR, np.full((2, 3), 0.5)),
    "loglik_bits: packed rows too narrow":
        lambda: _testing.loglik_bits(np.zeros((10, 1), np.uint64), 70, np.full((2, 70), 0.5), 1e-10),
    "lower_bound: beta of another shape":
        lambda: _testing.lower_bound(np.zeros((10, 2)), np.zeros((10, 3)), 1.0),
    "estep: beta of another shape":
        lambda: _testing.estep(np.zeros((10, 2)), np.zeros((9, 2)), 1.0, 1, 0.0),
    "split_stats_ranks: beta of another sample count":
        lambda: _testing.split_stats_ranks(ranks(), FEAT_PTR, np.zeros((9, 2))),
    "split_stats_bits: packed rows too narrow":
        lambda: _testing.split_stats_bits(np.zeros((10, 1), np.uint64), 70, np.zeros((10, 2))),
    # the kernels that read a stop flag check their other arguments as before
    "compute_ranks: no thread":
        lambda: _encoding.compute_ranks(X, FEAT_PTR, THRESHOLDS, n_threads=0),
    "compute_group_ranks: no thread":
        lambda: _encoding.compute_group_ranks(X, np.array([0, 1, 2], np.int32), FEAT_PTR, THRESHOLDS,
                                              n_threads=0),
    "pack_rows: no thread":
        lambda: _encoding.pack_rows(X, np.array([0, 0, 1, 2], np.int32), THRESHOLDS, n_threads=0),
    "tree_distance: no thread":
        lambda: _proximity.tree_distance(np.zeros((2, 3), np.int32), np.zeros((3, 4), np.int32),
                                         np.ones(3, np.float32), n_threads=0),
    "tree_distance: a negative weight":
        lambda: _proximity.tree_distance(np.zeros((2, 3), np.int32), np.zeros((3, 4), np.int32),
                                         -np.ones(3, np.float32)),
    "proxy_best_split: no thread":
        lambda: _proxy_split.proxy_best_split(X, np.arange(10, dtype=np.int64), X[:, 0].copy(),
                                              X[:, 1].copy(), 1, 1e-9, n_threads=0),
    "proxy_best_split_proba: a row outside X":
        lambda: _proxy_split.proxy_best_split_proba(X, np.array([0, 10], np.int64), X[:, :2].copy(), 1),
    "fit: no thread":
        lambda: _fit.fit(classification_problem(), params(), np.full((10, 2), 0.5), "fab", 5, 1e-6,
                         1e-8, 1e-10, 1e-12, 0),
    "estep: no update":
        lambda: _testing.estep(np.zeros((10, 2)), np.full((10, 2), 0.5), 1.0, 0, 0.0,
                               stop=np.zeros(1, np.int32)),
    "estep: a stop flag of another type":
        lambda: _testing.estep(np.zeros((10, 2)), np.full((10, 2), 0.5), 1.0, 1, 0.0,
                               stop=np.zeros(1, np.float64)),
}


def test_a_fits_stop_flag_of_another_type_is_a_value_error():
    token = _common.STOP_FLAG.set(np.zeros(1, np.int64))
    try:
        with pytest.raises(ValueError):
            _encoding.compute_ranks(X, FEAT_PTR, THRESHOLDS)
    finally:
        _common.STOP_FLAG.reset(token)


@pytest.mark.parametrize("case", list(MISMATCHES))
def test_mismatched_arrays_are_a_value_error(case):
    with pytest.raises(ValueError):
        MISMATCHES[case]()


def test_checks_hold_under_python_O():
    code = (
        "import numpy as np\n"
        "from defrag.splits import _encoding\n"
        "try:\n"
        "    _encoding.compute_ranks(np.zeros((4, 2)), np.array([0, 1], np.int64), np.zeros(1))\n"
        "except ValueError:\n"
        "    print('ValueError')\n"
    )
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ValueError"


def test_no_assert_in_the_cython_modules():
    # asserts vanish under python -O: argument checks must raise explicitly
    package = pathlib.Path(__file__).resolve().parent.parent / "defrag"
    sources = sorted(package.rglob("*.pyx")) + sorted(package.rglob("*.pxd"))  # every room's
    assert sources
    found = [f"{p.name}:{i}" for p in sources
             for i, line in enumerate(p.read_text().splitlines(), 1) if re.match(r"\s*assert\b", line)]
    assert not found, found
