"""Thread counts a careless or hostile caller hands defrag (issue 40): a count below 1,
a float or a bool is a ValueError naming n_threads, and a huge count runs on the cores
there are, never reaching OpenMP as it is (100,000 threads crashed libgomp: SIGSEGV)."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from defrag import DefragModel, ProxyTree, tree_distance
from defrag.rules import _rules_eval
from defrag.utils import _common, threads

RNG = np.random.default_rng(0)
X = RNG.normal(size=(400, 3))
Y = (X[:, 0] > 0).astype(int)


@pytest.fixture(scope="module")
def rules():
    forest = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, Y)
    return DefragModel(forest, n_restarts=2, random_state=0).fit(X).rules_


def run_python(code):
    """(return code, stderr) of code run in a fresh interpreter: a crash stays there."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("method", ["predict", "covers", "apply"])
@pytest.mark.parametrize("bad", [0, -1, 2.5, True, None, "4"])
def test_a_ruleset_refuses_a_thread_count_that_is_no_count(rules, method, bad):
    with pytest.raises(ValueError, match=r"n_threads must be an integer >= 1.*got"):
        getattr(rules, method)(X, n_threads=bad)


def test_a_huge_thread_count_runs_on_the_cores_in_a_fresh_process():
    # 100,000 rows: the rule kernel's parallel region runs (it is skipped below 4,096)
    code = """
        import numpy as np
        from sklearn.ensemble import RandomForestClassifier
        from defrag import DefragModel
        rng = np.random.default_rng(0)
        X = rng.normal(size=(400, 3)); y = (X[:, 0] > 0).astype(int)
        rules = DefragModel(RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, y),
                            n_restarts=2, random_state=0).fit(X).rules_
        Xb = rng.normal(size=(100_000, 3))
        want = rules.predict(Xb)
        for n in (100_000, 10 ** 6, 10 ** 12):
            assert (rules.predict(Xb, n_threads=n) == want).all()
            assert (rules.apply(Xb, n_threads=n) == rules.apply(Xb)).all()
            assert (rules.covers(Xb, n_threads=n) == rules.covers(Xb)).all()
        print("ok")
    """
    rc, err = run_python(code)
    assert rc == 0, err[-2000:]


def test_the_c_kernels_bound_a_team_whatever_count_they_are_handed():
    # defrag._testing calls the kernels without the Python layer's cap: the C bound
    # (src_c/dfg_common.h, dfg_team) is all that stands between 10**6 and libgomp
    code = """
        import numpy as np
        from defrag import _testing
        logf = np.random.default_rng(0).normal(size=(50_000, 3))
        beta = np.full((50_000, 3), 1 / 3)
        one = _testing.lower_bound(logf, beta, 1.0, n_threads=1)
        many = _testing.lower_bound(logf, beta, 1.0, n_threads=10 ** 6)
        assert one[0] == many[0] and (one[1] == many[1]).all()
        print("ok")
    """
    rc, err = run_python(code)
    assert rc == 0, err[-2000:]


def test_every_kernel_call_refuses_a_count_below_one_and_caps_the_rest():
    cover = np.zeros((10, 3), np.uint8)
    for bad in (0, -1, -10 ** 6):
        with pytest.raises(ValueError, match="n_threads must be an integer >= 1"):
            _rules_eval.first_cover(cover, n_threads=bad)
    # a count above the ceiling is the ceiling: nothing is started beyond the cores
    assert threads.checked_threads(10 ** 9) == threads.threads_now() == _common.thread_ceiling()
    assert threads.checked_threads(1) == 1
    for bad in (0, 1.0, False, np.float64(2.0)):
        with pytest.raises(ValueError, match="n_threads"):
            threads.checked_threads(bad)
    assert threads.checked_threads(np.int64(1)) == 1


def test_proxy_tree_and_tree_distance_take_a_checked_count():
    with pytest.raises(ValueError, match="n_jobs must be None or a non-zero integer"):
        ProxyTree(n_jobs=0).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="The 'n_jobs' parameter of ProxyTree must be"):
        ProxyTree(n_jobs=1.5).fit(X, X[:, 0])
    # a huge count: neither a crash nor a memory refusal counted per asked thread
    big = ProxyTree(n_jobs=10 ** 9, max_leaves=4).fit(X, X[:, 0])
    small = ProxyTree(n_jobs=1, max_leaves=4).fit(X, X[:, 0])
    np.testing.assert_array_equal(big.predict(X), small.predict(X))
    leaves = RNG.integers(0, 4, size=(20, 5))
    w = np.ones(5, np.float32)
    np.testing.assert_array_equal(tree_distance(leaves, leaves, w, n_threads=10 ** 9),
                                  tree_distance(leaves, leaves, w))
    with pytest.raises(ValueError, match="n_threads"):
        tree_distance(leaves, leaves, w, n_threads=0)
