"""Plain NumPy versions of the defrag equations (Hara & Hayashi 2017), dense and
slow on purpose: the tests compare the C kernels against them."""
import numpy as np

from defrag.rules.conditions import printed_between


def binary_features(X, feature, threshold):
    """s_nl = [x_{n, d_l} > t_l] (sec. 4.1), dense N x L."""
    return (X[:, feature] > threshold).astype(np.float64)


def log_bernoulli(S, eta):
    """eq. 6: sum_l s_l log eta_kl + (1 - s_l) log(1 - eta_kl), N x K."""
    return S @ np.log(eta).T + (1.0 - S) @ np.log1p(-eta).T


def log_output(params, y, n_classes):
    """eq. 8: log p(y_n | k), N x K."""
    if n_classes == 0:
        lam, mu = params["precision"], params["mean"]
        return 0.5 * np.log(lam / (2 * np.pi)) - 0.5 * lam * (y[:, None] - mu) ** 2
    return np.log(params["gamma"][:, y].T)


def log_joint(S, params, y, n_classes):
    """log f_nk = log p(y|k) + log p(s|k) + log alpha_k (eq. 9)."""
    return log_bernoulli(S, params["eta"]) + log_output(params, y, n_classes) + np.log(params["alpha"])


def omega(n_splits, n_classes):
    """omega = (dim phi / K + L + 1) / 2 of eq. 12 (dim phi / K = 2 or C)."""
    return 0.5 * ((2 if n_classes == 0 else n_classes) + n_splits + 1)


def lower_bound(logf, beta, om):
    """eq. 12: sum beta log f - omega sum_k log(sum_n beta + 1) + H(beta)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = np.where(beta > 0, beta * np.log(beta), 0.0)
    return float(np.sum(beta * logf) - om * np.sum(np.log(beta.sum(axis=0) + 1.0)) - ent.sum())


def softmax(a):
    a = a - a.max(axis=1, keepdims=True)
    e = np.exp(a)
    return e / e.sum(axis=1, keepdims=True)


def estep_fab(logf, beta, om, n_updates, tol=None):
    """eq. 13 / App. C eq. 35 applied n_updates times; with tol, stopped as soon as no
    column sum of beta moves by more than tol * N (the update reads beta only through
    its column sums, as in src_c/dfg_estep.c)."""
    colsum = beta.sum(axis=0)
    for _ in range(n_updates):
        beta = softmax(logf - om / (colsum + 1.0))
        previous, colsum = colsum, beta.sum(axis=0)
        if tol is not None and np.max(np.abs(colsum - previous)) <= tol * beta.shape[0]:
            break
    return beta


def truncate(params, beta, delta):
    """Algorithm 1: drop component k when (1/N) sum_n beta_nk < delta (keeping the largest
    when none is left, as src_c/dfg_fit.c does), and renormalise beta's rows over the
    components kept (uniform for a row with nothing left)."""
    colsum = beta.sum(axis=0)
    keep = colsum / beta.shape[0] >= delta
    if keep.all():
        return params, beta
    if not keep.any():
        keep[np.argmax(colsum)] = True
    params = {name: a[keep] for name, a in params.items()}
    beta = beta[:, keep]
    rows = beta.sum(axis=1, keepdims=True)
    beta = np.where(rows > 0, beta / np.where(rows > 0, rows, 1.0), 1.0 / beta.shape[1])
    return params, beta


def mstep(S, beta, y, n_classes, eps, var_floor):
    """eq. 14 (App. C eq. 39-41), with eta clamped to [eps, 1 - eps]."""
    nk = beta.sum(axis=0)
    params = {
        "eta": np.clip((beta.T @ S) / nk[:, None], eps, 1 - eps),
        "alpha": nk / nk.sum(),
    }
    if n_classes == 0:
        mu = beta.T @ y / nk
        var = np.sum(beta * (y[:, None] - mu) ** 2, axis=0) / nk
        params["mean"], params["precision"] = mu, 1.0 / np.maximum(var, var_floor)
    else:
        onehot = np.eye(n_classes)[y]
        params["gamma"] = np.maximum(beta.T @ onehot / nk[:, None], eps)
    return params


def set_test(codes, members, negate):
    """[code in members] (negated when negate) for category codes (float, NaN-free);
    negative codes and codes no set names are in no set."""
    return np.isin(codes, np.asarray(members, dtype=np.float64)) ^ bool(negate)


def gate_log_prob(S, w):
    """log q(k | x_n) = w_k^T s_n - log sum_k' exp(w_k'^T s_n) (2016 paper, model (3)), N x K."""
    a = S @ w.T
    top = a.max(axis=1, keepdims=True)
    return a - top - np.log(np.exp(a - top).sum(axis=1, keepdims=True))


def gate_objective(S, beta, w, rho):
    """The gate's M-step objective to minimise, -sum beta log q(k|x) + rho/2 ||w||^2, and
    its gradient -sum_n (beta_nk - r_n q_nk) s_nl + rho w_kl (r_n = sum_k beta_nk)."""
    lq = gate_log_prob(S, w)
    value = -np.sum(beta * lq) + 0.5 * rho * np.sum(w * w)
    resid = beta - beta.sum(axis=1, keepdims=True) * np.exp(lq)
    return value, -(resid.T @ S) + rho * w


def emkl_log_joint(S, params, w, y, n_classes):
    """log q(z_n | k) + log q(s_n | k) + log q(k | x_n), N x K (no mixing weight)."""
    return log_bernoulli(S, params["eta"]) + log_output(params, y, n_classes) + gate_log_prob(S, w)


def emkl_bound(logf, beta):
    """The lower bound (6): sum beta logf - sum beta log beta."""
    return lower_bound(logf, beta, 0.0)


def emkl_posterior(S, eta, w):
    """q(k | x, s) proportional to q(s | k) q(k | x), N x K."""
    return softmax(log_bernoulli(S, eta) + gate_log_prob(S, w))


def printed_bound(value, column):
    """The bound printed for value on a training column (NaN ignored): the shortest decimal
    that splits the column's values as value does, from its neighbours in the column."""
    column = column[~np.isnan(column)]
    below, above = column[column <= value], column[column > value]
    return printed_between(value, below.max() if below.size else -np.inf, above.min() if above.size else np.inf)
