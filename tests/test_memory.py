"""The memory guard (defrag/utils/memory.py): a fit whose working set exceeds the limit is
refused before it allocates, with the estimate, the limit and the knobs in the message;
one that fits runs unchanged."""
import re
import time

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

import defrag
from defrag import DefragMemoryError, DefragModel
from defrag.utils.memory import _parse_bytes, fit_estimate, memory_limit


@pytest.fixture(scope="module")
def small_forest():
    rng = np.random.default_rng(0)
    X = rng.random((400, 5))
    y = (X[:, 0] > 0.5).astype(int)
    return RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y), X


def test_more_rules_than_rows_is_refused(small_forest):
    # a new user's case (issue 22): EM with a million components on 400 rows ran for
    # minutes (and clamped to 400 components still did); refused before anything is
    # allocated, under any limit
    rf, X = small_forest
    with pytest.raises(DefragMemoryError) as info:
        DefragModel(rf, method="em", n_components=10**6, form="list").fit(X)
    msg = str(info.value)
    assert "n_components=1000000 is more than the 400 rows" in msg and "Set n_components <= 400" in msg
    assert re.search(r"would need about [0-9.]+ GB of memory \(limit: ", msg)
    assert "subsample=" not in msg  # all rows are fitted on: a subsample would not help
    assert isinstance(info.value, MemoryError) and isinstance(info.value, ValueError)
    # with a subsample, the message points at it too
    with pytest.raises(DefragMemoryError, match=r"more than the 50 rows .*subsample="):
        DefragModel(rf, n_components=51, subsample=50, form="list").fit(X)
    DefragModel(rf, n_components=50, subsample=50, n_restarts=2, max_iter=3, random_state=0, form="list").fit(X)


def test_working_set_over_the_limit_names_the_knobs(small_forest):
    rf, X = small_forest
    with defrag.max_memory("4M"), pytest.raises(DefragMemoryError) as info:
        DefragModel(rf, method="em", n_components=400, form="list").fit(X)
    msg = str(info.value)
    assert msg.startswith("DefragModel.fit on 400 rows, 2 classes, 400 components (K) and ")
    assert "MB" in msg and "limit of 4 MB" in msg
    for knob in ("subsample=", "n_jobs=", "n_components="):
        assert knob in msg


def test_a_fit_that_fits_is_unchanged(small_forest):
    rf, X = small_forest
    plain = DefragModel(rf, n_restarts=3, random_state=0, form="list").fit(X)
    with defrag.max_memory("1G"):
        guarded = DefragModel(rf, n_restarts=3, random_state=0, form="list").fit(X)
    np.testing.assert_array_equal(plain.predict(X), guarded.predict(X))
    assert str(plain.rules_) == str(guarded.rules_)


def test_limit_settings_and_tiny_limit(small_forest):
    rf, X = small_forest
    previous = defrag.set_max_memory(1000)  # bytes: even the input does not fit
    try:
        assert memory_limit()[0] == 1000
        with pytest.raises(DefragMemoryError, match="set_max_memory"):
            DefragModel(rf, n_restarts=1, form="list").fit(X)
        with defrag.max_memory(float("inf")):  # a thread-local override wins
            DefragModel(rf, n_restarts=1, random_state=0, form="list").fit(X)
    finally:
        defrag.set_max_memory(previous)
    assert _parse_bytes("1.5k", "x") == 1536 and _parse_bytes("2GiB", "x") == 2 * 2**30
    for bad in ("lots", -1, 0, float("nan")):
        with pytest.raises(ValueError):
            defrag.set_max_memory(bad)


def test_default_limit_reads_the_os(monkeypatch):
    monkeypatch.delenv("DEFRAG_MAX_MEMORY", raising=False)
    limit, source = memory_limit()
    assert limit is None or 0 < limit < 2.0 ** 50
    monkeypatch.setenv("DEFRAG_MAX_MEMORY", "3M")
    assert memory_limit() == (3 * 2**20, "DEFRAG_MAX_MEMORY")


def test_estimate_scales_with_what_a_restart_allocates():
    base = dict(n_samples=1000, n_fit=1000, n_features=10, n_splits=300, n_groups=10, bit_words=0,
                max_group=30, n_components=10, n_classes=2, workers=1, threads=1, rule_list=False)
    one = sum(fit_estimate(**base).values())
    # the restarts' part (3 N K doubles at least) grows linearly with K and with workers
    ten_k = sum(fit_estimate(**{**base, "n_components": 100}).values())
    two_workers = sum(fit_estimate(**{**base, "workers": 2}).values())
    assert ten_k > 9 * (one - 8 * 1000 * 10 - 4 * 1000 * 10)
    assert two_workers > 1.9 * fit_estimate(**base)["restarts in flight"]
    assert fit_estimate(**base)["restarts in flight"] >= 8.0 * 3 * 1000 * 10
    # a subsample shrinks the per-restart part (scoring on all rows keeps an N x K buffer)
    sub = fit_estimate(**{**base, "n_samples": 100_000, "n_fit": 1000})
    full = fit_estimate(**{**base, "n_samples": 100_000, "n_fit": 100_000})
    assert sub["restarts in flight"] < full["restarts in flight"] / 2


def test_sparse_input_is_named(small_forest):
    sp = pytest.importorskip("scipy.sparse")
    rf, X = small_forest
    with pytest.raises(TypeError, match="sparse input is not supported"):
        DefragModel(rf, form="list").fit(sp.csr_matrix(X))
    with pytest.raises(TypeError, match="sparse input is not supported"):
        defrag.PrototypeExplainer(rf, n_prototypes=2).fit(sp.csr_matrix(X))


def test_nearly_constant_regression_target_gives_one_rule(small_forest):
    _, X = small_forest
    from sklearn.ensemble import RandomForestRegressor

    rf = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, X[:, 0])
    y = 2.5 + 1e-15 * np.arange(X.shape[0]) % 3  # constant up to rounding
    model = DefragModel(rf, random_state=0, n_restarts=2, form="list").fit(X, y)
    assert model.n_regions_ == 1 and model.n_components_ == 1


def test_prototypes_over_the_limit_are_refused_before_allocating(small_forest):
    rf, X = small_forest
    Xbig = np.tile(X, (50, 1))  # 20,000 points: a 1.6 GB candidates x points float32 matrix
    y = rf.predict(Xbig)
    with defrag.max_memory("200M"):
        t = time.perf_counter()
        with pytest.raises(DefragMemoryError) as info:
            defrag.PrototypeExplainer(rf, n_prototypes=3).fit(Xbig, y)
        assert time.perf_counter() - t < 1.0
        msg = str(info.value)
        assert "PrototypeExplainer.fit would need about 1.61 GB" in msg and "limit of 200 MB" in msg
        assert "distance matrix 1.49 GB" in msg and "max_candidates=" in msg and "fewer trees (now 20)" in msg
        # the knob it names makes it fit; and what fits runs unchanged
        small = defrag.PrototypeExplainer(rf, n_prototypes=3, max_candidates=500, random_state=0).fit(Xbig, y)
    plain = defrag.PrototypeExplainer(rf, n_prototypes=3, max_candidates=500, random_state=0).fit(Xbig, y)
    np.testing.assert_array_equal(small.prototypes_, plain.prototypes_)


def test_proxy_tree_over_the_limit_is_refused_before_allocating(small_forest):
    from sklearn.ensemble import RandomForestRegressor

    from defrag.proxy import ProxyTree, ProxyTreeClassifier

    _, X = small_forest
    rf = RandomForestRegressor(n_estimators=300, max_depth=2, random_state=0).fit(X, X[:, 0])
    Xbig = np.tile(X, (250, 1))  # 100,000 rows x 300 members: 229 MB of member predictions
    with defrag.max_memory("100M"):
        t = time.perf_counter()
        with pytest.raises(DefragMemoryError) as info:
            ProxyTree(rf, max_leaves=4).fit(Xbig)
        assert time.perf_counter() - t < 1.0
        msg = str(info.value)
        assert "ProxyTree.fit would need about" in msg and "member predictions 229 MB" in msg
        assert "fewer members (now 300)" in msg and "min_samples_leaf" in msg
        with pytest.raises(DefragMemoryError, match="ProxyTreeClassifier.fit"):
            ProxyTreeClassifier(max_leaves=4).fit(Xbig, np.arange(Xbig.shape[0]) % 50)
        guarded = ProxyTree(rf, max_leaves=4).fit(X)
    plain = ProxyTree(rf, max_leaves=4).fit(X)
    np.testing.assert_array_equal(guarded.predict(X), plain.predict(X))
    assert str(guarded.rules_) == str(plain.rules_)


def test_proxy_and_prototype_estimates_grow_with_their_knobs():
    from defrag.utils.memory import prototype_estimate, proxy_estimate

    base = dict(n_samples=10_000, n_candidates=10_000, n_trees=100, n_features=5, n_classes=2,
                euclidean=False, supervised=False)
    full = prototype_estimate(**base)
    fewer = prototype_estimate(**{**base, "n_candidates": 1000})
    assert full["distance matrix"] == 4.0 * 10_000 ** 2 == 10 * fewer["distance matrix"]
    assert full["leaf matrix"] >= 12.0 * 10_000 * 100
    assert sum(prototype_estimate(**{**base, "supervised": True}).values()) > sum(full.values())
    p = dict(n_samples=100_000, n_features=10, n_targets=2, n_members=0, n_threads=1, cv=False,
             min_leaf=5)
    plain = proxy_estimate(**p)
    assert "member predictions" not in plain
    assert proxy_estimate(**{**p, "n_members": 100})["member predictions"] == 8.0 * 100_000 * 100
    assert "X as float64" not in plain and proxy_estimate(**{**p, "x_copied": True})["X as float64"] == 8e6
    assert proxy_estimate(**{**p, "cv": True, "x_copied": True})["X as float64"] == 1.6e7
    assert proxy_estimate(**{**p, "min_leaf": 50})["tree"] < plain["tree"] / 5


def _fake_status(tmp_path, vm_size_kb, vm_data_kb):
    path = tmp_path / "status"
    path.write_text(f"Name:\tpython\nVmSize:\t{vm_size_kb} kB\nVmData:\t{vm_data_kb} kB\n")
    return str(path)


def test_address_space_limit_bounds_the_available_memory(monkeypatch, tmp_path):
    import defrag.utils.memory as mem

    monkeypatch.delenv("DEFRAG_MAX_MEMORY", raising=False)
    monkeypatch.setattr(mem, "PROC_STATUS", _fake_status(tmp_path, 1_000_000, 500_000))
    monkeypatch.setattr(mem, "_cgroup_room", lambda: None)
    monkeypatch.setattr(mem, "_meminfo_available", lambda: 64.0 * 2**30)
    limits = {mem.resource.RLIMIT_AS: 6_000_000 * 1024, mem.resource.RLIMIT_DATA: mem.resource.RLIM_INFINITY}
    monkeypatch.setattr(mem.resource, "getrlimit", lambda which: (limits.get(which, mem.resource.RLIM_INFINITY),) * 2)
    # ulimit -v 6000000 with 1,000,000 kB mapped: 5,000,000 kB left of the 64 GB free
    room, what = mem.memory_room()
    assert room == 5_000_000 * 1024 and "RLIMIT_AS" in what
    assert mem.memory_limit()[0] == mem.DEFAULT_SHARE * room
    # RLIMIT_DATA (ulimit -d) against VmData, when tighter
    limits[mem.resource.RLIMIT_DATA] = 1_500_000 * 1024
    assert mem.memory_room()[0] == 1_000_000 * 1024
    assert "RLIMIT_DATA" in mem.memory_room()[1]  # the limit that binds is named
    # no limits: the machine's memory
    limits.clear()
    assert mem.memory_room() == (64.0 * 2**30, "the machine's available memory")


def _cgroup_tree(root, version, nested_limit, parent_limit, usage, inactive):
    """A fake cgroup mount: this process in /app/worker, limits at both levels."""
    root.mkdir(parents=True, exist_ok=True)
    proc = root / "cgroup"
    if version == 2:
        mount, names, stat_key = root / "fs", ("memory.max", "memory.current"), "inactive_file"
        proc.write_text("0::/app/worker\n")
    else:
        mount, names, stat_key = root / "fs" / "memory", ("memory.limit_in_bytes", "memory.usage_in_bytes"), \
            "total_inactive_file"
        proc.write_text("5:cpu,cpuacct:/app/worker\n4:memory:/app/worker\n0::/\n")
        # v1's root reports "no limit" as a huge number
        mount.mkdir(parents=True)
        (mount / names[0]).write_text("9223372036854771712\n")
    for rel, limit in (("app", parent_limit), ("app/worker", nested_limit)):
        d = mount / rel
        d.mkdir(parents=True)
        (d / names[0]).write_text(f"{limit}\n")
        (d / names[1]).write_text(f"{usage}\n")
        (d / "memory.stat").write_text(f"active_file 5\n{stat_key} {inactive}\nanon 7\n")
    return str(root / "fs"), str(proc)


@pytest.mark.parametrize("version", [1, 2])
def test_cgroup_limits_of_the_process_and_its_parents(monkeypatch, tmp_path, version):
    import defrag.utils.memory as mem

    G = 2**30
    root, proc = _cgroup_tree(tmp_path, version, "max" if version == 2 else 2**63 - 4096, 3 * G, G, G // 2)
    monkeypatch.setattr(mem, "CGROUP_ROOT", root)
    monkeypatch.setattr(mem, "PROC_CGROUP", proc)
    # the parent's 3 GB limit applies; the usage less the inactive page cache counts
    assert mem._cgroup_room() == 3 * G - (G - G // 2)
    monkeypatch.setattr(mem, "_meminfo_available", lambda: 64.0 * G)
    monkeypatch.setattr(mem, "_rlimit_room", lambda: (None, None))
    room, what = mem.memory_room()
    assert room == 2.5 * G and "cgroup" in what
    # a tighter limit on the process's own cgroup wins
    root, proc = _cgroup_tree(tmp_path / "b", version, 2 * G, 3 * G, G, 0)
    monkeypatch.setattr(mem, "CGROUP_ROOT", root)
    monkeypatch.setattr(mem, "PROC_CGROUP", proc)
    assert mem._cgroup_room() == G
    # no cgroup files: no cgroup limit
    monkeypatch.setattr(mem, "CGROUP_ROOT", str(tmp_path / "none"))
    assert mem._cgroup_room() is None


REFUSED_UNDER_ULIMIT = """
import resource, sys
import numpy as np
from sklearn.ensemble import RandomForestClassifier
from defrag import DefragMemoryError, DefragModel
resource.setrlimit(resource.RLIMIT_AS, (6_000_000 * 1024, resource.RLIM_INFINITY))
rng = np.random.default_rng(0)
X = rng.random((400, 5))
rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, X[:, 0] > 0.5)
for K, rows in ((10**6, X), (20_000, np.tile(X, (50, 1)))):
    try:
        DefragModel(rf, method="em", n_components=K, n_restarts=1, form="list").fit(rows)
    except DefragMemoryError as exc:
        print(type(exc).__name__, exc)
    else:
        print("fitted")
"""


def test_issue_case_refused_under_ulimit_v():
    """The issue's case under ``ulimit -v 6000000`` (NumPy's MemoryError after 25 s
    before), and a K <= N fit whose working set exceeds the address-space room: both
    refused by the guard, the second naming RLIMIT_AS."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("DEFRAG_MAX_MEMORY", None)
    out = subprocess.run([sys.executable, "-c", REFUSED_UNDER_ULIMIT], capture_output=True, text=True,
                         timeout=120, env=env, check=False)
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 0 and len(lines) == 2, out.stderr[-2000:]
    assert lines[0].startswith("DefragMemoryError") and "n_components=1000000 is more than the 400 rows" in lines[0]
    assert lines[1].startswith("DefragMemoryError") and "RLIMIT_AS" in lines[1]


# ------------------------------------------------------------------ the baselines and classes


@pytest.fixture(scope="module")
def many_rows():
    """A small forest classifier (2 classes) and 1,000,000 rows to fit on."""
    rng = np.random.default_rng(1)
    X = rng.random((10**6, 5))
    rf = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X[:2000], X[:2000, 0] > 0.5)
    return rf, X


@pytest.mark.parametrize("name", ["BornAgainTree", "InTrees", "NodeHarvest", "DepthTwoTree"])
def test_baselines_refuse_a_continuous_y_with_a_classifier(many_rows, name):
    # issue 23: BornAgainTree grew until the OOM killer, InTrees asked for 3.6 TiB
    # (np.eye(n_classes)) at 1e6 classes, DepthTwoTree ran past 250 s at 100k
    from defrag import baselines

    rf, X = many_rows
    n = 10**5 if name == "DepthTwoTree" else 10**6
    with pytest.raises(DefragMemoryError) as info:
        getattr(baselines, name)(rf).fit(X[:n], np.arange(n))
    msg = str(info.value)
    assert f"{name}.fit: y has {n} distinct labels among {n} rows" in msg
    assert "the model knows 2 classes" in msg and "regression" in msg
    assert isinstance(info.value, MemoryError) and isinstance(info.value, ValueError)


def test_defrag_model_refuses_a_continuous_y_with_a_classifier(small_forest, monkeypatch):
    import defrag.utils.memory as mem

    rf, X = small_forest
    monkeypatch.setattr(mem, "MAX_CLASSES", 100)
    y = np.random.default_rng(0).random(X.shape[0])  # continuous: no class labels at all
    with pytest.raises(ValueError, match=r"^y: continuous values, not class labels.*task='regression'"):
        DefragModel(rf, task="classification", form="list").fit(X, y)
    # 400 distinct labels (of integers): more classes than the bound
    with pytest.raises(DefragMemoryError, match=r"DefragModel.fit: y has 400 distinct .*task='regression'"):
        DefragModel(rf, task="classification", form="list").fit(X, np.arange(X.shape[0]))


def test_class_bound_is_the_larger_of_the_bound_and_the_models_classes(monkeypatch):
    import defrag.utils.memory as mem
    from defrag.baselines import DepthTwoTree

    monkeypatch.setattr(mem, "MAX_CLASSES", 5)
    rng = np.random.default_rng(0)
    X = rng.random((600, 4))
    y8 = np.floor(X[:, 0] * 8).astype(int)
    two = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y8 % 2)
    eight = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y8)
    with pytest.raises(DefragMemoryError, match=r"8 distinct labels among 600 rows, more than 5 "):
        DepthTwoTree(two).fit(X, y8)
    assert DepthTwoTree(eight).fit(X, y8).classes_.size == 8  # the model's own 8 classes
    assert DepthTwoTree(two).fit(X, y8 % 5).classes_.size == 5  # at the bound
    mem.check_class_count(5, None, 10, "x")
    with pytest.raises(DefragMemoryError, match="does not name its classes"):
        mem.check_class_count(6, None, 10, "x")


@pytest.mark.parametrize("name", ["BornAgainTree", "InTrees", "NodeHarvest", "DepthTwoTree"])
def test_baselines_over_the_limit_are_refused_before_fitting(small_forest, name, monkeypatch):
    from defrag import baselines

    rf, X = small_forest
    y = rf.predict(X)
    seen = []
    real = baselines.born_again.check_memory_of.__globals__["check_memory"]

    def record(estimate, what, knobs, parts=None):
        seen.append((estimate, what))
        return real(estimate, what, knobs, parts)

    import defrag.utils.memory as mem

    monkeypatch.setattr(mem, "check_memory", record)
    model = getattr(baselines, name)(rf)
    with defrag.max_memory(1000), pytest.raises(DefragMemoryError) as info:
        model.fit(X, y)
    msg = str(info.value)
    assert msg.startswith(f"{name}.fit on 400 rows") and "limit of 1000 bytes" in msg
    assert "Reduce it with" in msg and not hasattr(model, "rules_")
    # under no limit it fits, and the estimate it checked is at least the input's size
    with defrag.max_memory(float("inf")):
        getattr(baselines, name)(rf).fit(X, y)
    assert seen[-1][1].startswith(f"{name}.fit") and seen[-1][0] > 0


def test_intrees_class_counts_against_the_one_hot_product():
    from defrag.baselines.intrees import class_counts

    rng = np.random.default_rng(0)
    cover = rng.random((500, 30)) < 0.3
    y = rng.choice([0, 2, 3, 6], 500)  # classes 1, 4, 5 absent
    onehot = np.eye(7, dtype=np.float32)[y]
    np.testing.assert_array_equal(class_counts(cover, y, 7), cover.T.astype(np.float32) @ onehot)
    assert class_counts(cover[:0], y[:0], 7).shape == (30, 7)


def test_intrees_sized_to_the_classes_present(monkeypatch):
    """A model of 6 classes, y of 3 of them: the same list as on the 3 classes alone, and
    its tables sized to 3 (the estimate names the classes present)."""
    import defrag.utils.memory as mem
    from defrag.baselines import InTrees

    rng = np.random.default_rng(0)
    X = rng.random((900, 4))
    y6 = np.floor(X[:, 0] * 6).astype(int)
    six = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, y6)
    y = np.where(y6 < 3, 0, np.where(y6 < 5, 2, 5))
    seen = []
    real = mem.check_memory
    monkeypatch.setattr(mem, "check_memory", lambda e, what, k, p=None: (seen.append(what), real(e, what, k, p)))
    model = InTrees(six).fit(X, y)
    assert "3 classes present" in seen[-1]
    assert list(model.classes_) == list(range(6))
    assert set(model.predict(X)) <= {0, 2, 5} and model.predict_proba(X).shape == (900, 6)
    assert model.score(X, y) > 0.9


def test_node_harvest_null_space_without_the_left_factor():
    from defrag.baselines.node_harvest import null_space

    rng = np.random.default_rng(0)
    for m, p in ((300, 20), (20, 20), (8, 20)):
        A = (rng.random((m, p)) < 0.3).astype(float)
        B = null_space(A)
        assert B.shape == (p, p - np.linalg.matrix_rank(A))
        np.testing.assert_allclose(A @ B, 0.0, atol=1e-10)
        np.testing.assert_allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-10)


def test_baseline_estimates_grow_with_their_knobs():
    from defrag.utils.memory import (
        born_again_estimate,
        depth_two_estimate,
        intrees_estimate,
    )

    bat = dict(n_rows=10**5, n_features=5, n_classes=10, max_depth=10, min_samples_split=10,
               n_generated=100, n_test=2 * 10**4)
    base = sum(born_again_estimate(**bat).values())
    assert sum(born_again_estimate(**{**bat, "n_classes": 1000}).values()) > 50 * born_again_estimate(**bat)[
        "node values"]
    # a node that splits holds more than min_samples_split rows: 20 rows, depth 10, few nodes
    assert born_again_estimate(**{**bat, "n_rows": 20})["node values"] <= 3 * 8 * 10 * (1 + 2 * 10)
    assert sum(born_again_estimate(**{**bat, "max_depth": 2}).values()) < base
    assert intrees_estimate(1000, 100, 10**6)["class counts"] >= 4.0 * 100 * 10**6
    assert depth_two_estimate(1000, 5, 10**5, 2)["per-class tables"] >= 8.0 * 7 * 10**5
