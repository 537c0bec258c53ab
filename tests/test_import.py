"""`import defrag` stays small: scikit-learn loads only with the estimators."""
import pickle
import subprocess
import sys

import pytest

import defrag
from defrag import Condition, Rule, RuleSet


def _run(code):
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_scoring_a_pickled_ruleset_does_not_import_sklearn(tmp_path):
    rules = RuleSet([Rule([Condition(0, "x0", lower=0.5)], 1, support=3, weight=1.0)], 0,
                    feature_names=["x0", "x1"])
    path = tmp_path / "rules.pkl"
    path.write_bytes(pickle.dumps(rules))
    out = _run(
        "import pickle, sys, numpy as np\n"
        f"rules = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "print(rules.predict(np.array([[0.2, 0.0], [0.7, 0.0]])).tolist(), "
        "any(m == 'sklearn' or m.startswith('sklearn.') for m in sys.modules))"
    )
    assert out == "[0, 1] False"


def test_estimators_load_on_first_use():
    out = _run(
        "import sys, defrag\n"
        "before = 'sklearn' in sys.modules\n"
        "from defrag import DefragModel, ProxyTree, tree_distance\n"
        "print(before, 'sklearn' in sys.modules, DefragModel.__module__, ProxyTree.__module__)"
    )
    assert out == "False True defrag.defrag_model defrag.proxy.estimators"


def test_every_public_name_resolves():
    for name in defrag.__all__:
        assert getattr(defrag, name) is not None
    assert set(defrag.__all__) <= set(dir(defrag))
    with pytest.raises(AttributeError, match="no_such_name"):
        defrag.no_such_name
