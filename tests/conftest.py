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
