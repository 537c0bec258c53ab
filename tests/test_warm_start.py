"""A warm start from earlier rules (DefragModel's reference_rules, search/tree_path.py and
search/warm_start.py; issues 37 and 47): the reference's regions and the reference edited on
today's rows are cross-validated candidates, kept within REFERENCE_TOLERANCE of the candidate
chosen otherwise; the edits match a plain NumPy reading of their rule; a refit with the same
model gives the same rules."""
import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor

from defrag import DefragModel
from defrag.search import tree_path, warm_start
from defrag.rules import RuleTree
from defrag.rules.tree import Leaf


@pytest.fixture(scope="module")
def fitted():
    X, y = load_diabetes(return_X_y=True)
    forest = RandomForestRegressor(n_estimators=20, min_samples_leaf=5, random_state=0).fit(X, y)
    model = DefragModel(forest, random_state=0, n_restarts=2).fit(X)
    return X, y, forest, model


def test_a_refit_with_the_same_model_keeps_the_same_rules(fitted, tmp_path):
    X, _, forest, first = fitted
    again = DefragModel(forest, random_state=0, n_restarts=2, reference_rules=first.rules_).fit(X)
    assert str(again.rules_) == str(first.rules_)
    assert again.rules_.to_dict() == first.rules_.to_dict()
    assert again.reference_diff_.unchanged
    forms = list(again.path_["form"])
    assert [f for f in forms if f.startswith("reference")] == list(tree_path.REFERENCE_FORMS)
    assert not any(f.startswith("reference") for f in first.path_["form"])
    assert again.reference_kept_ and forms[again.path_["chosen"]] == "reference"
    # from its JSON file, the same
    path = tmp_path / "rules.json"
    path.write_text(first.rules_.to_json())
    from_file = DefragModel(forest, random_state=0, n_restarts=2, reference_rules=str(path)).fit(X)
    assert str(from_file.rules_) == str(first.rules_)


def test_the_reference_is_kept_within_the_tolerance_and_dropped_beyond(fitted):
    X, _, forest, first = fitted
    # a reference of one region: far worse than the searched trees, dropped
    constant = RuleTree([Leaf(0.0)], feature_names=first.rules_.feature_names)
    dropped = DefragModel(forest, random_state=0, n_restarts=2, reference_rules=constant).fit(X)
    assert dropped.reference_kept_ is False
    assert str(dropped.rules_) == str(first.rules_)
    chosen = dropped.path_["chosen"]
    i = list(dropped.path_["form"]).index("reference")
    assert dropped.path_["n_regions"][i] == 1
    assert dropped.path_["validation_error"][i] > (1 + tree_path.REFERENCE_TOLERANCE) * \
        dropped.path_["validation_error"][chosen]
    # the first fit's rules on another forest's predictions: the first reference form within
    # the tolerance of the searched choice is printed, else the searched choice
    other = RandomForestRegressor(n_estimators=20, min_samples_leaf=5, random_state=1).fit(X, forest.predict(X))
    warm = DefragModel(other, random_state=0, n_restarts=2, reference_rules=first.rules_).fit(X)
    forms, errors = list(warm.path_["form"]), warm.path_["validation_error"]
    best = tree_path.choose([c for c in _candidates(warm) if not c.form.startswith("reference")])
    limit = errors[best] * (1 + tree_path.REFERENCE_TOLERANCE) + 1e-12
    within = [f for f in tree_path.REFERENCE_FORMS if errors[forms.index(f)] <= limit]
    chosen = forms[warm.path_["chosen"]]
    assert chosen == (within[0] if within else forms[best])
    assert warm.reference_kept_ == bool(within)
    # with_size reads its choice off the path (the reference edited as this fit edited it:
    # a fit of another size edits against another floor)
    k = int(warm.n_regions_)
    again = warm.with_size(n_regions=k)
    assert again.rules_ is warm.path_rules_[again.path_["chosen"]] and again.n_regions_ == k
    if chosen == "reference":  # the earlier regions: rows fall as they did
        assert np.array_equal(warm.rules_.apply(X), first.rules_.apply(X))


def _candidates(model):
    p = model.path_
    return [tree_path.Candidate(str(f), float(pr), int(k), float(e), float(c), n_conditions=int(nc),
                                n_regions=int(nr))
            for f, pr, k, e, c, nc, nr in zip(p["form"], p["literal_price"], p["size"], p["validation_error"],
                                              p["mean_checks"], p["n_conditions"], p["n_regions"])]


def test_a_rule_list_warm_starts_a_tree(fitted):
    X, _, forest, _ = fitted
    listed = DefragModel(forest, random_state=0, n_restarts=2, form="list").fit(X)
    warm = DefragModel(forest, random_state=0, n_restarts=2, reference_rules=listed.rules_).fit(X)
    i = list(warm.path_["form"]).index("reference")
    assert warm.path_["n_regions"][i] == len(listed.rules_)  # the list's regions: its rules and its default
    if warm.path_["form"][warm.path_["chosen"]] == "reference":
        assert np.array_equal(warm.rules_.apply(X), listed.rules_.apply(X))


def test_bad_references_are_refused_with_a_clear_error(fitted, tmp_path):
    X, y, forest, first = fitted
    names = [f"f{j}" for j in range(X.shape[1])]
    with pytest.raises(ValueError, match="reference_rules are over other features: feature 0 is"):
        DefragModel(forest, random_state=0, n_restarts=2, feature_names=names,
                    reference_rules=first.rules_).fit(X)
    with pytest.raises(ValueError, match="reference_rules warm-starts a searched tree"):
        DefragModel(forest, random_state=0, n_restarts=2, form="list", reference_rules=first.rules_).fit(X)
    with pytest.raises(ValueError, match="cannot read"):
        DefragModel(forest, reference_rules=str(tmp_path / "absent.json")).fit(X)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not the JSON of a RuleTree or a RuleSet"):
        DefragModel(forest, reference_rules=str(tmp_path / "bad.json")).fit(X)
    with pytest.raises(TypeError, match="reference_rules must be a RuleTree, a RuleSet or the path"):
        DefragModel(forest, reference_rules=3).fit(X)
    from sklearn.ensemble import RandomForestClassifier

    classifier = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y > 140)
    with pytest.raises(ValueError, match="reference_rules predict values; this fit predicts classes"):
        DefragModel(classifier, random_state=0, n_restarts=2, reference_rules=first.rules_).fit(X)


# ------------------------------------------- reference_rules paths (issue 45, item 8)
def _fit_in_a_child(forest_args, reference, limit_bytes=2 << 30, timeout=120):
    """DefragModel(forest, reference_rules=reference).fit in a child process of limited
    memory (a read without end there fails, not this test run): (exit status, stderr), or
    None where the child was still running at timeout (a read that waits)."""
    import os
    import subprocess
    import sys

    code = ("import resource, sys\n"
            f"resource.setrlimit(resource.RLIMIT_AS, ({limit_bytes}, {limit_bytes}))\n"
            "import numpy as np\n"
            "from sklearn.ensemble import RandomForestRegressor\n"
            "from defrag import DefragModel\n"
            "X = np.random.default_rng(0).random((200, 3))\n"
            f"forest = RandomForestRegressor({forest_args}).fit(X, X[:, 0])\n"
            "try:\n"
            f"    DefragModel(forest, reference_rules={reference!r}).fit(X)\n"
            "except ValueError as exc:\n"
            "    print(exc, file=sys.stderr)\n"
            "    sys.exit(3)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                             env=env)
    except subprocess.TimeoutExpired:
        return None
    return res.returncode, res.stderr


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo") or not __import__("os").path.exists("/dev/zero"),
                    reason="named pipes and /dev/zero")
def test_reference_rules_read_regular_files_only_and_within_a_size(fitted, tmp_path, monkeypatch):
    """/dev/zero was read until memory ran out; a named pipe without a writer waited forever."""
    import os

    X, _, forest, first = fitted
    # a device, in a child process whose memory is limited
    result = _fit_in_a_child("n_estimators=3, max_depth=3, random_state=0", "/dev/zero")
    assert result is not None and result[0] == 3, result
    assert "reference_rules: cannot read '/dev/zero'" in result[1] and "not a regular file" in result[1]
    # a named pipe no one writes to: refused at once, not waited on
    fifo = tmp_path / "rules.json"
    os.mkfifo(fifo)
    result = _fit_in_a_child("n_estimators=3, max_depth=3, random_state=0", str(fifo), timeout=60)
    assert result is not None, "reference_rules waited for a writer of a named pipe"
    assert result[0] == 3 and "named pipe" in result[1], result
    # a directory, and a file larger than the limit
    with pytest.raises(ValueError, match="is a directory, not a rules file"):
        DefragModel(forest, reference_rules=str(tmp_path)).fit(X)
    path = tmp_path / "big.json"
    path.write_text(first.rules_.to_json())
    from defrag.fit import config

    monkeypatch.setattr(config, "MAX_RULES_BYTES", path.stat().st_size - 1)
    with pytest.raises(ValueError, match=r"big\.json is larger than a rules file may be"):
        DefragModel(forest, reference_rules=str(path)).fit(X)
    monkeypatch.setattr(config, "MAX_RULES_BYTES", path.stat().st_size)
    warm = DefragModel(forest, random_state=0, n_restarts=2, reference_rules=str(path)).fit(X)
    assert str(warm.rules_) == str(first.rules_)


def test_split_drops_and_moves_match_plain_numpy():
    """split_drops is CART's drop of the squared error; moved_box moves a literal to the one
    of its group with the largest drop where that pays more than the price, as a loop over
    the group in plain NumPy finds it."""
    rng = np.random.default_rng(0)
    n, L = 300, 6
    S = rng.random((n, L)) < 0.5
    T = rng.normal(size=(n, 2)) + 3.0 * S[:, [2]]
    then = rng.random((n, 4)) < 0.3

    def drop(mask):
        def sse(A):
            return float(((A - A.mean(axis=0)) ** 2).sum()) if len(A) else 0.0
        return sse(T) - sse(T[mask]) - sse(T[~mask])

    np.testing.assert_allclose(warm_start.split_drops(T, then, 1), [drop(then[:, k]) for k in range(4)])
    assert warm_start.split_drops(T, then, n)[0] == -np.inf  # a side below min_leaf
    group = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 4, 4, 5])  # literal l < L: s_l = 1; L + l: s_l = 0
    cols = warm_start.literal_columns(S, np.arange(2 * L))
    assert np.array_equal(cols[:, :L], S) and np.array_equal(cols[:, L:], ~S)
    rows = np.arange(n)
    for price in (0.0, 1e9):
        box, best, moves = warm_start.moved_box(S, rows, T, [0], group, 1, price)
        drops = {j: drop(cols[:, j]) for j in np.flatnonzero(group == group[0])}
        j = max(drops, key=drops.get)
        if price == 0.0:
            assert box == [j] == [2] and moves == 1 and np.isclose(best, drops[j])
        else:  # no move pays a huge price
            assert box == [0] and moves == 0 and np.isclose(best, drops[0])


def test_an_edited_reference_moves_removes_and_adds_where_the_data_say_so():
    """A reference with a threshold in the wrong place and a missing split, edited on rows
    whose model says otherwise: the threshold moves to today's split point and the missing
    split is added; with today's own tree as the reference, nothing is edited."""
    rng = np.random.default_rng(1)
    n = 2000
    X = rng.random((n, 3))
    y = 4.0 * (X[:, 0] > 0.6) + 2.0 * (X[:, 1] > 0.5) + 0.1 * rng.normal(size=n)
    forest = RandomForestRegressor(n_estimators=20, min_samples_leaf=5, random_state=0).fit(X, y)
    fresh = DefragModel(forest, random_state=0, n_restarts=2).fit(X)
    from defrag.rules.conditions import Condition
    from defrag.rules.tree import Node

    names = fresh.rules_.feature_names
    wrong = RuleTree([Node([Condition(0, names[0], lower=0.3)],
                           Node([Condition(2, names[2], lower=0.9999)], Leaf(4.0), Leaf(4.0)), Leaf(0.0))],
                     feature_names=names)
    warm = DefragModel(forest, random_state=0, n_restarts=2, reference_rules=wrong).fit(X)
    forms = list(warm.path_["form"])
    edited = warm.path_rules_[forms.index("reference edited")]
    text = str(edited)
    assert "x0 > 0.6" in text or "x0 > 0.59" in text or "x0 <= 0.6" in text or "x0 <= 0.59" in text, text
    assert "x1" in text, text
    assert warm.path_["validation_error"][forms.index("reference edited")] < \
        warm.path_["validation_error"][forms.index("reference")]
    same = DefragModel(forest, random_state=0, n_restarts=2, reference_rules=fresh.rules_).fit(X)
    assert str(same.rules_) == str(fresh.rules_) and same.reference_diff_.unchanged


def test_reference_edit_price_is_checked(fitted):
    X, _, forest, first = fitted
    with pytest.raises(ValueError, match="reference_edit_price"):
        DefragModel(forest, reference_rules=first.rules_, reference_edit_price=-0.1).fit(X)


def test_an_xor_reference_over_categories_is_kept_by_the_edits():
    """The first split of an XOR drops the loss by almost nothing on its own: the edits keep
    it because the splits below it pay (a removal weighs the whole subtree). The reference's
    category set maps to today's split of that set; the edited reference scores as the
    reference itself."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    n = 1500
    X = np.column_stack([rng.integers(0, 6, n).astype(float), rng.random(n)])
    y = (np.isin(X[:, 0], [1, 3, 4]) ^ (X[:, 1] > 0.7)).astype(int)
    model = HistGradientBoostingClassifier(categorical_features=[0], max_iter=50, random_state=0).fit(X, y)
    first = DefragModel(model, random_state=0).fit(X, y)
    assert any(c.is_set for nd in first.rules_.nodes() for c in nd.conditions)
    warm = DefragModel(model, random_state=0, reference_rules=first.rules_).fit(X, y)
    forms, errors = list(warm.path_["form"]), warm.path_["validation_error"]
    assert errors[forms.index("reference edited")] == errors[forms.index("reference")] < 0.01
    assert str(warm.path_rules_[forms.index("reference edited")]) == str(first.rules_)
