"""The test extra installs every package a test skips without (issue 48.4): a test suite
run after `pip install ".[test]"` skips nothing for a missing package."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the distribution that provides a module a test imports, where the names differ; None: the
# standard library or a dependency of defrag itself
PROVIDED_BY = {"IPython": "ipython", "xgboost": "xgboost-cpu", "distributed": "dask", "skops": "skops",
               "sklearn": None, "scipy": None, "joblib": None, "tomllib": None}


def _test_extra():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"^test = \[(.*?)\]$", text, flags=re.M | re.S).group(1)
    return {re.match(r"[A-Za-z0-9_.-]+", name).group(0).lower() for name in re.findall(r'"([^"]+)"', block)}


def _skipped_modules():
    modules = set()
    for name in os.listdir(os.path.join(ROOT, "tests")):
        if name.endswith(".py"):
            with open(os.path.join(ROOT, "tests", name), encoding="utf-8") as f:
                modules |= {m.split(".")[0] for m in re.findall(r"importorskip\(\s*[\"']([\w.]+)[\"']", f.read())}
    return modules


def test_every_package_a_test_skips_without_is_in_the_test_extra():
    extra = _test_extra()
    modules = _skipped_modules()
    assert {"numpydoc", "jsonschema", "pyarrow", "pandas"} <= modules  # what the scan must find
    missing = sorted(m for m in modules if PROVIDED_BY.get(m, m) is not None and
                     PROVIDED_BY.get(m, m).lower() not in extra)
    assert not missing, f"add to the test extra in pyproject.toml: {missing}"
