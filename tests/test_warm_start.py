"""A warm start from earlier rules (DefragModel's reference_rules, fit/tree_path.py; issue 37):
the reference's regions are a cross-validated candidate, kept within REFERENCE_TOLERANCE of
the candidate chosen otherwise; a refit with the same model gives the same rules."""
import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor

from defrag import DefragModel
from defrag.fit import tree_path
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
    for form in tree_path.REFERENCE_FORMS:
        i = list(dropped.path_["form"]).index(form)
        assert dropped.path_["n_regions"][i] == 1
        assert dropped.path_["validation_error"][i] > (1 + tree_path.REFERENCE_TOLERANCE) * \
            dropped.path_["validation_error"][chosen]
    # the first fit's rules on another forest's predictions: kept where within the tolerance,
    # its regions then exactly the reference's, its outputs refitted
    other = RandomForestRegressor(n_estimators=20, min_samples_leaf=5, random_state=1).fit(X, forest.predict(X))
    warm = DefragModel(other, random_state=0, n_restarts=2, reference_rules=first.rules_).fit(X)
    forms, errors = list(warm.path_["form"]), warm.path_["validation_error"]
    best = tree_path.choose([c for c in _candidates(warm) if not c.form.startswith("reference")])
    se = warm.path_["reference_se"][best]  # of the paired differences from the best, per reference form
    limit = [errors[best] + max(tree_path.REFERENCE_TOLERANCE * errors[best], s) + 1e-12 for s in se]
    as_is, refitted = (forms.index(f) for f in tree_path.REFERENCE_FORMS)
    chosen = forms[warm.path_["chosen"]]
    # with_size at the same size reads the same choice off the path
    assert warm.with_size(n_regions=int(warm.n_regions_)).path_["chosen"] == warm.path_["chosen"]
    if errors[as_is] <= limit[0]:  # the earlier rules as they were: the same predictions
        assert chosen == "reference" and warm.reference_kept_
        assert np.array_equal(warm.predict(X), first.predict(X))
        assert warm.reference_diff_.unchanged and not any(
            x["old_prediction"] != x["new_prediction"] for x in warm.reference_diff_.kept)
    elif errors[refitted] <= limit[1]:  # their regions, today's outputs
        assert chosen == "reference refitted" and warm.reference_kept_
        assert np.array_equal(warm.rules_.apply(X), first.rules_.apply(X))
        assert warm.reference_diff_.unchanged
    else:
        assert not warm.reference_kept_ and not chosen.startswith("reference")


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
    i = list(warm.path_["form"]).index("reference refitted")
    assert warm.path_["n_regions"][i] == len(listed.rules_) + 1
    if warm.reference_kept_:
        assert np.array_equal(warm.rules_.apply(X), np.where(listed.rules_.apply(X) < 0, len(listed.rules_),
                                                             listed.rules_.apply(X)))


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


def test_the_reference_as_it_is_never_scores_better_than_its_regions_cross_validated():
    """Issue 47, item 1: yesterday's outputs were fitted on rows much like today's, so on
    them they score in-sample; the reference as it is scores no better than its regions with
    outputs refitted on each fold (before, it often scored below every searched tree)."""
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(600, noise=1.0, random_state=0)
    rng = np.random.default_rng(0)
    first, second = rng.integers(0, 600, 600), rng.integers(0, 600, 600)
    yesterday = RandomForestRegressor(n_estimators=30, random_state=0).fit(X[first], y[first])
    today = RandomForestRegressor(n_estimators=30, random_state=1).fit(X[second], y[second])
    reference = DefragModel(yesterday, random_state=0).fit(X[first]).rules_
    warm = DefragModel(today, random_state=0, reference_rules=reference).fit(X[second])
    forms = list(warm.path_["form"])
    as_is, refitted = forms.index("reference"), forms.index("reference refitted")
    errors = warm.path_["validation_error"]
    assert errors[as_is] >= errors[refitted]
