"""The reading guides say what the code does (issue 48.4): the README's printed evaluate
keys and its "Reading the output" section, the methods page on an unfitted model, and
the install page's test time."""
import ast
import os
import re

import pytest
from sklearn.ensemble import RandomForestClassifier

from conftest import xor_data
from defrag import DefragModel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
        return f.read()


@pytest.fixture(scope="module")
def fitted():
    Xtr, ytr, Xte, yte = xor_data(0, n=400)
    rf = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(Xtr, ytr)
    return DefragModel(rf, n_restarts=2, random_state=0).fit(Xtr), Xte, yte


def test_the_readme_prints_the_keys_evaluate_returns(fitted):
    m, X, y = fitted
    printed = [line for line in _read("README.md").splitlines() if line.startswith("{'error'")]
    assert len(printed) == 1
    assert list(ast.literal_eval(printed[0])) == list(m.evaluate(X, y))


def test_the_readme_reading_section_names_real_keys_and_says_a_sums_lines_are_no_regions(fitted):
    readme = _read("README.md")
    section = readme[readme.index("## Reading the output"):]
    section = section[:section.index("\n## ", 3)]
    m, X, y = fitted
    keys = set(m.evaluate(X, y)) | {"r2", "model_r2"}  # (the regression keys)
    named = set(re.findall(r"`(\w+)`", section)) & (keys | {"error_mixture_map", "model_error", "mean_checks"})
    assert {"error", "model_error", "r2", "model_r2", "fidelity"} <= named <= keys
    assert "not a region" in section and "sum" in section
    for word in ("`p`", "`support`", "`*`", "0.95"):
        assert word in section, word


def test_an_unfitted_model_is_cloned_and_fitted_as_the_methods_page_says():
    methods = _read("docs", "user_guide", "methods.rst")
    assert "an unfitted model is a ``NotFittedError``" not in methods
    assert "cloned and fitted" in methods
    Xtr, ytr, _, _ = xor_data(1, n=300)
    unfitted = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    m = DefragModel(unfitted, n_restarts=1, random_state=0).fit(Xtr, ytr)
    assert m.estimator_ is not unfitted and hasattr(m.estimator_, "estimators_")
    assert not hasattr(unfitted, "estimators_")
    with pytest.raises(ValueError, match="requires y"):
        DefragModel(unfitted).fit(Xtr)


def test_the_install_page_gives_the_test_time_with_its_command():
    install = _read("docs", "install.rst")
    development = _read("docs", "development.rst")
    assert "about a minute on a quiet" not in install + development
    said = re.search(r"tests in (\d+) s of wall clock on the 2-core development machine, nearly idle, as "
                     r"``bash \.\./shared/tools/fresh-check\.sh`` ran it", " ".join(install.split()))
    assert said, "the install page says the suite's time and how it was measured"
    minutes = round(int(said.group(1)) / 60)
    assert f"about {minutes} minutes on an idle 2-core machine" in development
