"""The fit's parameters, checked once and handed to the stages as plain data.

Each parameter's own bounds are PARAMETER_CONSTRAINTS (DefragModel's
``_parameter_constraints``, checked by scikit-learn's ``_validate_params``);
``FitConfig.from_params(estimator.get_params())`` checks how they combine (a ValueError
naming them) and resolves what depends on the data's size: the rows each restart is fitted
on (``subsample``) and the splits kept (``max_splits``).
"""
import numbers
import os
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions

from ..rules import RuleTree, from_json
from ..utils.files import MAX_RULES_BYTES, read_file_bytes

# subsample="auto": restarts are fitted on this many rows above AUTO_SUBSAMPLE_ABOVE rows.
# On the 1,000,000-row benchmark a restart on all rows takes about 30 s on one core and
# 2-4 s on 30,000 rows, and the kept model was as accurate (docs/performance.rst).
AUTO_SUBSAMPLE = 30_000
AUTO_SUBSAMPLE_ABOVE = 100_000

# max_splits="auto": the ceil(10 sqrt(N)) splits with the largest training gain. With every
# split of a forest the binary features outweigh the output by 900-2400 nats per point
# (the regions follow the density of X, not the prediction); on nine real data sets the
# rule lists fitted to 10 sqrt(N) splits beat a CART of the same size fitted to the
# forest in 7 (docs/performance.rst, "Rules against a tree of the same size").
AUTO_SPLITS_PER_ROOT = 10.0

METHODS = ("fab", "em", "em-kl")
# what the fit prints (DefragModel's form): a searched tree of rules, or under a budget a
# tree or a sum of trees ("auto"); a tree ("tree"); a sum of trees ("sum"); the searched
# ordered list ("list"); the kept restart's components as a list ("restarts"); the paper's
# rules, one per component, predicting by MAP ("paper")
FORMS = ("auto", "tree", "sum", "list", "restarts", "paper")
# regions of the largest tree searched where neither max_conditions nor n_regions sets it
MAX_REGIONS = 10

# n_restarts="auto": the restarts of Hara & Hayashi's experiments (20), where the kept
# restart is the model; 5 where every restart's components are candidate boxes of the
# searched list (form="list"), which refines them: their variety matters, not
# the best restart.
AUTO_RESTARTS = 20
AUTO_RESTARTS_SEARCH = 5
# the most restarts a fit takes (a thousand times the paper's 20)
MAX_RESTARTS = 20_000
# subsample="auto" with form="list": the restarts are fitted on the rows the list is
# searched on (search/list_path.py's SEARCH_ROWS): only their components' boxes are read.
AUTO_SEARCH_ROWS = 3000


def _schedule(eps_schedule):
    if eps_schedule is None:
        return np.zeros(0)
    if isinstance(eps_schedule, (str, bytes)) or np.ndim(eps_schedule) != 1:
        # a single number would be a schedule of one clamp, taken for the final eps
        raise ValueError(f"eps_schedule must be None or a sequence of numbers; got {eps_schedule!r}")
    return np.asarray(eps_schedule, dtype=np.float64)


def _reference_rules(reference, form, method):
    """The explanation a warm start keeps where it costs little (search/tree_path.py): a RuleTree
    or a RuleSet, or the path of the JSON file one of them wrote (``to_json``)."""
    if reference is None:
        return None
    if isinstance(reference, (str, bytes, os.PathLike)):
        # a regular file of at most MAX_RULES_BYTES: a device would be read without end, a
        # named pipe would wait for a writer (utils/files.py)
        try:
            text = read_file_bytes(reference, "rules file", MAX_RULES_BYTES).decode("utf-8")
        except (ValueError, UnicodeDecodeError) as exc:  # FileReadError, or not UTF-8
            raise ValueError(f"reference_rules: cannot read {os.fsdecode(reference)!r} ({exc})") from None
        try:
            reference = from_json(text)
        except ValueError as exc:  # RulesDocumentError, or JSON that is no document
            raise ValueError(f"reference_rules: {os.fsdecode(reference)!r} is not the JSON of a RuleTree or a "
                             f"RuleSet ({exc})") from None
    if not isinstance(reference, RuleTree):
        raise TypeError(f"reference_rules must be a RuleTree, a RuleSet or the path of its JSON; got "
                        f"{type(reference).__name__}")
    if form not in ("auto", "tree", "sum") or method == "em-kl":
        raise ValueError(f"reference_rules warm-starts a searched tree (form 'auto', 'tree' or 'sum', method 'fab' "
                         f"or 'em'); got form={form!r}, method={method!r}")
    return reference


@dataclass(frozen=True)
class FitConfig:
    """DefragModel's parameters, checked (see its docstring for their meaning)."""

    method: str
    n_components: int
    n_restarts: int
    max_iter: int
    tol: float
    kappa: float
    delta: float
    eps: float
    eps_schedule: tuple
    keep_duplicate_splits: bool
    task: str
    subsample: object
    max_splits: object
    penalty_splits: str
    form: str  # one of FORMS
    prune_tol: float
    n_regions: object  # None or an int >= 1: regions of the searched explanation
    max_regions: object  # None or an int >= 1: regions of the largest searched
    max_conditions: object  # None or an int >= 0: comparisons printed at most
    gate_l2: float
    random_state: object
    n_jobs: object
    verbose: object  # "auto" or an int (utils/progress.py)
    reference_rules: object = None  # None, or the RuleTree / RuleSet of a warm start (read from its JSON)
    reference_edit_price: float = 0.02  # a warm start's price of an edit (search/warm_start.py)

    @classmethod
    def from_params(cls, params):
        """The config of DefragModel's get_params(), its parameters each already checked
        against PARAMETER_CONSTRAINTS (BaseEstimator._validate_params): ValueError where
        parameters do not go together."""
        if params["kappa"] <= params["eps"]:
            raise ValueError("kappa must be larger than eps")
        try:
            sched = _schedule(params["eps_schedule"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"eps_schedule must be a sequence of numbers; got {params['eps_schedule']!r}") from exc
        if np.any(~(sched >= params["eps"])) or np.any(sched >= 0.5) or sched.size > 100:
            raise ValueError(f"eps_schedule values must lie in [eps, 0.5) (at most 100); got {params['eps_schedule']!r}")
        form, method = params["form"], params["method"]
        searched = form in ("auto", "tree", "sum", "list") and method != "em-kl"
        if params["n_regions"] is not None and params["max_conditions"] is not None:
            raise ValueError("set n_regions (the regions) or max_conditions (the comparisons printed), not both")
        if (params["n_regions"] is not None or params["max_conditions"] is not None) and not searched:
            name = "n_regions" if params["n_regions"] is not None else "max_conditions"
            raise ValueError(f"{name} sizes a searched explanation: it needs form 'auto', 'tree', 'sum' or "
                             f"'list' and method 'fab' or 'em' (got form={form!r}, method={method!r})")
        if form == "sum" and params["max_conditions"] is None:
            raise ValueError("form='sum' prints a sum of small trees within a budget: set max_conditions "
                             "(the comparisons printed), or use form='auto'")
        if params["max_conditions"] is not None and form == "list":
            raise ValueError("max_conditions is a budget for form 'auto', 'tree' or 'sum'; a list is sized "
                             "by n_regions")
        if params["max_regions"] is not None and params["n_regions"] is not None and \
                params["n_regions"] > params["max_regions"]:
            raise ValueError(f"n_regions={params['n_regions']} is more than max_regions={params['max_regions']}")
        if method == "em-kl" and form not in ("auto", "restarts", "paper"):
            raise ValueError(f"method='em-kl' prints its kept restart's rules (form 'restarts', 'auto') or its "
                             f"components' (form 'paper'); got form={form!r}")
        fields = {name: params[name] for name in cls.__dataclass_fields__ if name != "reference_rules"}
        fields["reference_edit_price"] = float(params["reference_edit_price"])
        fields["reference_rules"] = _reference_rules(params.get("reference_rules"), form, method)
        fields.update(eps_schedule=tuple(float(e) for e in sched),
                      form="restarts" if method == "em-kl" and form == "auto" else form,
                      keep_duplicate_splits=bool(params["keep_duplicate_splits"]),
                      **{name: None if params[name] is None else int(params[name])
                         for name in ("n_regions", "max_regions", "max_conditions")})
        if isinstance(params["n_restarts"], str):  # "auto"
            fields["n_restarts"] = AUTO_RESTARTS_SEARCH if searched else AUTO_RESTARTS
        return cls(**fields)

    @property
    def emkl(self):
        return self.method == "em-kl"

    @property
    def searched(self):
        """The ordered rule list is searched for (form "list": search/list_path.py)."""
        return self.form == "list"

    @property
    def tree_searched(self):
        """A tree of rules (or a sum of trees) is searched for (search/tree_path.py)."""
        return self.form in ("auto", "tree", "sum")

    @property
    def rule_list(self):
        """The printed rules predict as an ordered list or a tree (first match), not by the
        mixture's MAP (form "paper")."""
        return self.form != "paper"

    @property
    def restart_lists(self):
        """Each restart fits its components' rule list (rules/lists.py) and is scored by it:
        the restarts' list is printed, or weighed against the searched list."""
        return self.form in ("restarts", "list") and not (self.searched and self.n_regions is not None)

    @property
    def largest_regions(self):
        """Regions of the largest explanation searched."""
        if self.n_regions is not None:
            return self.n_regions
        if self.max_regions is not None:
            return self.max_regions
        if self.max_conditions is not None:
            return self.max_conditions + 1
        return MAX_REGIONS

    def subsample_size(self, n_samples):
        """Rows of the screening subsample, or n_samples when restarts are not screened."""
        sub = self.subsample
        if sub is None or self.n_restarts == 1:
            return n_samples
        if isinstance(sub, str) and (self.searched or self.tree_searched):  # "auto": the search's rows
            size = AUTO_SEARCH_ROWS
        elif isinstance(sub, str):  # "auto"
            size = AUTO_SUBSAMPLE if n_samples > AUTO_SUBSAMPLE_ABOVE else n_samples
        elif isinstance(sub, numbers.Integral):
            size = int(sub)
        else:
            size = int(np.ceil(sub * n_samples))
        return max(1, min(size, n_samples))

    def splits_kept(self, n_samples):
        """Splits kept for the fit: 'auto' keeps ceil(10 sqrt(N)), None all."""
        if self.max_splits is None:
            return None
        if isinstance(self.max_splits, str):  # "auto"
            return int(np.ceil(AUTO_SPLITS_PER_ROOT * np.sqrt(n_samples)))
        return int(self.max_splits)

    def restart_options(self, n_splits, n_components, n_all_splits):
        """The options of one restart (fit/restarts.py's run_restart)."""
        return dict(
            n_splits=n_splits, n_components=n_components, method=self.method,
            max_iter=self.max_iter, tol=float(self.tol), delta=float(self.delta), eps=float(self.eps),
            eps_schedule=self.eps_schedule,
            penalty_splits=n_all_splits if self.penalty_splits == "all" else 0,
            gate_l2=float(self.gate_l2),
        )


class Number(Interval):
    """scikit-learn's Interval that no bool satisfies: a flag given where a number is asked
    is a mistake to point out, not 1 or 0 (utils/validation.py's is_number)."""

    def is_satisfied_by(self, val):
        return not isinstance(val, bool) and super().is_satisfied_by(val)


# DefragModel's parameters as scikit-learn declares them (``_parameter_constraints``, checked
# by BaseEstimator._validate_params at fit): every bound of one parameter; from_params checks
# how parameters combine
PARAMETER_CONSTRAINTS = {
    "estimator": "no_validation",  # a fitted or unfitted ensemble, a Booster or an array of splits
    "max_conditions": [Number(Integral, 0, None, closed="left"), None],
    "n_regions": [Number(Integral, 1, None, closed="left"), None],
    "form": [StrOptions(set(FORMS))],
    "random_state": ["random_state"],
    # scikit-learn's convention: -1 all cores, -2 all but one, ...; 0 means nothing
    "n_jobs": [Number(Integral, 1, None, closed="left"), Number(Integral, None, -1, closed="right"), None],
    "verbose": [StrOptions({"auto"}), "verbose"],
    "method": [StrOptions(set(METHODS))],
    "n_components": [Number(Integral, 1, None, closed="left")],
    # each restart has its seed and thread share set up before the first one runs, and the
    # searched list keeps every restart's components: 10**7 restarts took 7 GB
    "n_restarts": [Number(Integral, 1, MAX_RESTARTS, closed="both"), StrOptions({"auto"})],
    "max_iter": [Number(Integral, 1, 10**7, closed="both")],
    "tol": [Number(Real, 0, np.inf, closed="left")],
    "kappa": [Number(Real, 0, 0.5, closed="neither")],
    "delta": [Number(Real, 0, 1, closed="left")],
    "eps": [Number(Real, 0, 0.5, closed="neither")],
    "eps_schedule": "no_validation",  # (from_params: a sequence of numbers within [eps, 0.5))
    "keep_duplicate_splits": ["boolean"],
    "task": [StrOptions({"auto", "regression", "classification"})],
    "feature_names": "no_validation",  # checked_names says what a name list must be
    "subsample": [StrOptions({"auto"}), Number(Integral, 1, None, closed="left"),
                  Number(RealNotInt, 0, 1, closed="right"), None],
    "max_splits": [StrOptions({"auto"}), Number(Integral, 1, None, closed="left"), None],
    "penalty_splits": [StrOptions({"all", "selected"})],
    "max_regions": [Number(Integral, 1, None, closed="left"), None],
    "prune_tol": [Number(Real, 0, 1, closed="both")],
    "gate_l2": [Number(Real, 0, np.inf, closed="left")],
    "reference_rules": "no_validation",  # (_reference_rules: a RuleTree, a RuleSet or its JSON's path)
    "reference_edit_price": [Number(Real, 0, 1, closed="both")],
}
