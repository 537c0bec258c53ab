"""FAB/EM runs: the bound, truncation, determinism across threads, pickling."""
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from defrag import DefragModel


def test_lower_bound_never_decreases_within_a_phase(xor_forest):
    rf, Xtr, ytr, _, _ = xor_forest
    for schedule in [(), (0.3, 0.1, 0.03, 0.01, 0.001)]:
        m = DefragModel(rf, n_restarts=3, random_state=0, eps_schedule=schedule, tol=1e-9).fit(Xtr, ytr)
        lb, phase = m.lower_bound_, m.lower_bound_phase_
        assert lb.size == phase.size and lb.size >= 2
        same = phase[1:] == phase[:-1]
        steps = np.diff(lb)[same]
        assert steps.size > 0
        assert np.all(steps >= -1e-9 * np.abs(lb[:-1][same])), steps.min()
        assert phase[-1] == len(schedule)


def test_fab_truncates_and_em_keeps_max_rules(xor_forest):
    rf, Xtr, ytr, _, _ = xor_forest
    fab = DefragModel(rf, n_components=10, n_restarts=4, random_state=0).fit(Xtr, ytr)
    assert fab.n_components_ < 10
    em = DefragModel(rf, method="em", n_components=6, n_restarts=2, random_state=0).fit(Xtr, ytr)
    assert em.n_components_ == 6 and em.eta_.shape[0] == 6
    # the paper's rules: one per component
    em = DefragModel.paper(rf, method="em", n_components=6, n_restarts=2, random_state=0).fit(Xtr, ytr)
    assert em.n_regions_ == 6 and len(em.rules_.rules) == 6
    assert np.all(em.restart_n_regions_ == 6)
    np.testing.assert_allclose(em.alpha_.sum(), 1.0)


def rules_signature(model):
    return model.rules_.to_dict(), model.eta_, model.alpha_


def test_same_rules_for_n_jobs_1_and_2(xor_forest):
    rf, Xtr, ytr, _, _ = xor_forest
    a = DefragModel(rf, n_restarts=6, random_state=3, n_jobs=1).fit(Xtr, ytr)
    b = DefragModel(rf, n_restarts=6, random_state=3, n_jobs=2).fit(Xtr, ytr)
    assert a.rules_.to_dict() == b.rules_.to_dict()
    np.testing.assert_array_equal(a.eta_, b.eta_)
    np.testing.assert_array_equal(a.restart_errors_, b.restart_errors_)


SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    sys.path.insert(0, {tests!r})
    from conftest import xor_data
    from sklearn.ensemble import RandomForestRegressor
    from defrag import DefragModel
    from defrag.utils.threads import thread_budget
    Xtr, ytr, _, _ = xor_data(1, n=20000, regression=True)
    rf = RandomForestRegressor(n_estimators=10, min_samples_leaf=50, random_state=0).fit(Xtr, ytr)
    m = DefragModel(rf, n_restarts=1, random_state=0).fit(Xtr, ytr)
    print(json.dumps({{"threads": thread_budget(None, 1, len(Xtr))[1],
                      "rules": m.rules_.to_dict(), "eta": m.eta_.tolist()}}))
""")


def test_same_rules_for_omp_num_threads_1_and_2():
    # 20,000 samples: enough for two OpenMP threads (MIN_SAMPLES_PER_THREAD) and
    # many reduction blocks, so the threads really split the work
    code = SCRIPT.format(tests=os.path.dirname(__file__))
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        outs.append(res.stdout.strip().splitlines()[-1])
    import json

    a, b = (json.loads(o) for o in outs)
    assert a["threads"] == 1
    from defrag import show_config

    if show_config()["openmp"] and len(os.sched_getaffinity(0)) >= 2:
        assert b["threads"] == 2
    assert a["rules"] == b["rules"] and a["eta"] == b["eta"]


def test_pickle_round_trip_gives_identical_predictions(xor_forest):
    rf, Xtr, ytr, Xte, _ = xor_forest
    m = DefragModel(rf, n_restarts=3, random_state=0).fit(Xtr, ytr)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m.predict(Xte), m2.predict(Xte))
    np.testing.assert_array_equal(m.predict_proba(Xte), m2.predict_proba(Xte))
    assert str(m) == str(m2)


def test_fit_to_the_ensemble_without_y(xor_forest):
    rf, Xtr, _, Xte, _ = xor_forest
    m = DefragModel(rf, n_restarts=5, random_state=0).fit(Xtr)
    ev = m.evaluate(Xte, rf.predict(Xte))
    assert 2 <= m.n_regions_ <= 8
    assert ev["fidelity"] == pytest.approx(1 - ev["error"])
    assert ev["fidelity"] > 0.8


def test_predict_proba_and_two_step_map_agree(xor_forest):
    rf, Xtr, ytr, Xte, _ = xor_forest
    for m in (DefragModel(rf, n_restarts=3, random_state=0).fit(Xtr, ytr),
              DefragModel.paper(rf, n_restarts=3, random_state=0).fit(Xtr, ytr)):
        proba = m.predict_proba(Xte)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
        np.testing.assert_array_equal(m.classes_[np.argmax(proba, axis=1)], m.predict(Xte))
        # eq. 10 by hand: argmax_k log p(s|k) + log alpha_k over the dense s matrix
        S = m.splits_.binary_features(Xte)
        logpost = S @ np.log(m.eta_).T + (~S) @ np.log1p(-m.eta_).T + np.log(m.alpha_)
        np.testing.assert_array_equal(m.apply_map(Xte), np.argmax(logpost, axis=1))
        np.testing.assert_array_equal(m.predict_map(Xte),
                                      m.classes_[np.argmax(m.gamma_, axis=1)][np.argmax(logpost, axis=1)])
