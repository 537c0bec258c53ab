import numpy as np
import pytest


def xor_data(seed, n=1000, regression=False):
    """Synthetic1 of sec. 7: x ~ U[0,1]^2, y = XOR(x0 > .5, x1 > .5) with 10% label
    noise; the regression version adds N(0, 0.1^2) noise to the XOR target instead."""
    rng = np.random.default_rng(seed)
    X = rng.random((2 * n, 2))
    clean = np.logical_xor(X[:, 0] > 0.5, X[:, 1] > 0.5).astype(int)
    if regression:
        y = clean + 0.1 * rng.standard_normal(2 * n)
    else:
        y = np.where(rng.random(2 * n) < 0.1, 1 - clean, clean)
    return X[:n], y[:n], X[n:], y[n:]


def tabular_data(n_classes, seed=0, n=500, nan=0.15):
    """Features on very different scales, one with ties, a share of NaN; a smooth
    regression target (n_classes = 0) or classes cut from the first feature."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1, 10, 1e-3, 100]
    X[:, 3] = np.round(X[:, 3])
    if n_classes == 0:
        y = X[:, 0] + np.sin(X[:, 1])
    else:
        y = np.digitize(X[:, 0], np.linspace(-1, 1, n_classes - 1))
    X[rng.random(X.shape) < nan] = np.nan
    return X, y


@pytest.fixture(scope="session")
def xor_forest():
    from sklearn.ensemble import RandomForestClassifier

    Xtr, ytr, Xte, yte = xor_data(0)
    rf = RandomForestClassifier(n_estimators=30, random_state=0).fit(Xtr, ytr)
    return rf, Xtr, ytr, Xte, yte


def categorical_frame(n_classes, seed=0, n=600, nan=0.1):
    """A DataFrame with numeric columns (with NaN) and two pandas categorical ones (string
    categories, one never used; integer categories), all with missing values; the target
    depends on both kinds of feature."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue", "black", "white", "grey"], n)
    size = rng.choice([10, 3, 7, 42], n)
    X = pd.DataFrame({
        "x0": rng.normal(size=n),
        "colour": pd.Categorical(colour, categories=["grey", "white", "red", "green", "blue", "black", "never"]),
        "x2": rng.normal(size=n) * 10,
        "size": pd.Categorical(size, categories=[3, 7, 10, 42]),
    })
    for col in X.columns:
        X.loc[rng.random(n) < nan, col] = np.nan
    signal = (np.nan_to_num(X["x0"].to_numpy()) + 1.5 * np.isin(colour, ["red", "blue"])
              - 1.0 * (size == 42) + 0.05 * np.nan_to_num(X["x2"].to_numpy()))
    if n_classes == 0:
        return X, signal
    return X, np.digitize(signal, np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1]))


def json_paths(node, prefix=()):
    """Every place in a JSON document: tuples of keys / indices (the fuzz tests mutate
    one)."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += json_paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += json_paths(value, prefix + (i,))
    return out


def _hypothesis_profiles():
    """Property tests (test_properties.py, test_fuzz_models.py): a bounded, derandomised
    "ci" run by default; DEFRAG_FUZZ_EXAMPLES=N runs N examples per property."""
    import os

    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return
    quiet = [HealthCheck.too_slow, HealthCheck.data_too_large]
    settings.register_profile("ci", max_examples=40, derandomize=True, deadline=2000,
                              suppress_health_check=quiet, print_blob=True)
    n = int(os.environ.get("DEFRAG_FUZZ_EXAMPLES", "0") or 0)
    if n > 0:
        settings.register_profile("long", max_examples=n, derandomize=False, deadline=5000,
                                  suppress_health_check=quiet, print_blob=True, database=None)
        settings.load_profile("long")
    else:
        settings.load_profile("ci")


_hypothesis_profiles()


# the environment variables that narrow the kernels' instruction sets (src_c/dfg_cpu.h)
KERNEL_ENV = ("DEFRAG_NO_AVX2", "DEFRAG_NO_AVX512")


def _reread_cpu():
    """Each loaded extension's next kernel dispatch reads the CPU and the environment again
    (dfg_cpu_reread: every extension holds its own copy of dfg_cpu.c, which reads them once)."""
    import ctypes
    import sys

    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if name.startswith("defrag.") and path.endswith((".so", ".pyd")):
            reread = getattr(ctypes.CDLL(path), "dfg_cpu_reread", None)
            if reread is not None:
                reread()


@pytest.fixture
def kernel_env():
    """choose(**env): the kernels' builds as the DEFRAG_NO_* variables in env select them
    (the others unset); the environment and the choice are restored afterwards."""
    import os

    saved = {name: os.environ.get(name) for name in KERNEL_ENV}

    def choose(**env):
        for name in KERNEL_ENV:
            os.environ.pop(name, None)
        os.environ.update(env)
        _reread_cpu()

    yield choose
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _reread_cpu()
