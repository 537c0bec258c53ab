"""Proxy trees: a small CART fitted to an ensemble's predictive mean and variance.

Afrabandpey et al., "Making Bayesian predictive models interpretable: a decision
theoretic approach" (interpretability utility). The reference model gives, per
point j, a predictive mean m_j and variance v_j. A regression tree with one mean
mu_i per leaf and a normal likelihood is fitted to maximise the expected
log-likelihood under the reference (eq. 8): a node's score is

    L_i = -n_i log(sigma2_i),  sigma2_i = mean_j [v_j + (m_j - mu_i)^2]

(the split search, a sorted sweep per feature, is in src_c/dfg_proxy_split.c).
The grown tree is pruned along the weakest-link sequence of the cost (eq. 9)

    C_alpha(T) = S log(sigma2_T) + alpha * b,  sigma2_T = sum_leaves sum_j [...] / S

and alpha is chosen by 5-fold cross-validation, or the largest subtree with at
most ``max_leaves`` leaves is taken. ``ProxyTreeClassifier`` does the same with a
classifier's class probabilities as soft targets of a categorical likelihood
(node score n_i sum_c p_ic log p_ic). Local explanations (sec. 4.2) fit the same
tree to the reference's predictions on a Gaussian neighbourhood of a point;
``tree_dissimilarity`` is eq. 10 and ``bootstrap_instability`` sec. 4.1.3.

The package holds one concern per module: ``reference`` (the reference model's
predictions), ``grow`` and ``prune`` (the tree), ``estimators`` (ProxyTree,
ProxyTreeClassifier), ``local`` (local explanations) and ``stability``.
"""
from .estimators import ProxyTree, ProxyTreeClassifier, explain_local
from .local import LimeExplanation, LocalExplanation, local_fidelity, local_loss
from .reference import reference_predictions, reference_proba
from .stability import bootstrap_instability, tree_dissimilarity

__all__ = [
    "ProxyTree",
    "ProxyTreeClassifier",
    "reference_proba",
    "LocalExplanation",
    "LimeExplanation",
    "reference_predictions",
    "explain_local",
    "local_fidelity",
    "tree_dissimilarity",
    "bootstrap_instability",
]
