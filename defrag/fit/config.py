"""The fit's parameters, checked once and handed to the stages as plain data.

``FitConfig.from_params(estimator.get_params())`` checks DefragModel's parameters (a
ValueError naming the bad one) and resolves what depends on the data's size: the rows
each restart is fitted on (``subsample``) and the splits kept (``max_splits``).
"""
import numbers
from dataclasses import dataclass

import numpy as np

from ..utils.progress import check_verbose
from ..utils.validation import check_bool, check_n_jobs, check_positive_int, is_number

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

# n_restarts="auto": the restarts of Hara & Hayashi's experiments (20), where the kept
# restart is the model; 5 where every restart's components are candidate boxes of the
# searched list (rule_list="search"), which refines them: their variety matters, not
# the best restart.
AUTO_RESTARTS = 20
AUTO_RESTARTS_SEARCH = 5
# the most restarts a fit takes (a thousand times the paper's 20)
MAX_RESTARTS = 20_000
# subsample="auto" with rule_list="search": the restarts are fitted on the rows the list is
# searched on (fit/list_path.py's SEARCH_ROWS): only their components' boxes are read.
AUTO_SEARCH_ROWS = 3000


_is_real = is_number


def _schedule(eps_schedule):
    if eps_schedule is None:
        return np.zeros(0)
    if isinstance(eps_schedule, (str, bytes)) or np.ndim(eps_schedule) != 1:
        # a single number would be a schedule of one clamp, taken for the final eps
        raise ValueError(f"eps_schedule must be None or a sequence of numbers; got {eps_schedule!r}")
    return np.asarray(eps_schedule, dtype=np.float64)


@dataclass(frozen=True)
class FitConfig:
    """DefragModel's parameters, checked (see its docstring for their meaning)."""

    method: str
    max_rules: int
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
    rule_list: object  # True, False or "search"
    prune_tol: float
    n_rules: object  # None or an int >= 1: regions of the searched list
    gate_l2: float
    random_state: object
    n_jobs: object
    verbose: object  # "auto" or an int (utils/progress.py)

    @classmethod
    def from_params(cls, params):
        """The config of DefragModel's get_params(); ValueError for a bad parameter."""
        check_positive_int("max_rules", params["max_rules"])
        if not (isinstance(params["n_restarts"], str) and params["n_restarts"] == "auto"):
            check_positive_int("n_restarts", params["n_restarts"])
        check_positive_int("max_iter", params["max_iter"])
        if params["method"] not in METHODS:
            raise ValueError(f"method must be 'fab', 'em' or 'em-kl'; got {params['method']!r}")
        gate_l2 = params["gate_l2"]
        if not (_is_real(gate_l2) and 0.0 <= gate_l2 < np.inf):
            raise ValueError(f"gate_l2 must be a finite number >= 0; got {gate_l2!r}")
        if params["task"] not in ("auto", "regression", "classification"):
            raise ValueError(f"task must be 'auto', 'regression' or 'classification'; got {params['task']!r}")
        for name, lo, hi in (("tol", 0.0, np.inf), ("kappa", 0.0, 0.5), ("delta", 0.0, 1.0), ("eps", 0.0, 0.5)):
            v = params[name]
            if not _is_real(v) or not (lo <= v < hi) or (name in ("kappa", "eps") and v <= 0):
                raise ValueError(f"{name} must be a number in the range ({lo}, {hi}); got {v!r}")
        if params["kappa"] <= params["eps"]:
            raise ValueError("kappa must be larger than eps")
        try:
            sched = _schedule(params["eps_schedule"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"eps_schedule must be a sequence of numbers; got {params['eps_schedule']!r}") from exc
        if np.any(~(sched >= params["eps"])) or np.any(sched >= 0.5) or sched.size > 100:
            raise ValueError(f"eps_schedule values must lie in [eps, 0.5) (at most 100); got {params['eps_schedule']!r}")
        if params["max_iter"] > 10**7:
            raise ValueError(f"max_iter must be at most 10**7; got {params['max_iter']}")
        # each restart has its seed and thread share set up before the first one runs, and
        # the searched list keeps every restart's components: 10**7 restarts took 7 GB
        if not isinstance(params["n_restarts"], str) and params["n_restarts"] > MAX_RESTARTS:
            raise ValueError(f"n_restarts must be at most {MAX_RESTARTS}; got {params['n_restarts']}")
        sub = params["subsample"]
        if not (sub is None or (isinstance(sub, str) and sub == "auto")
                or (isinstance(sub, numbers.Integral) and not isinstance(sub, bool) and sub >= 1)
                or (_is_real(sub) and not isinstance(sub, numbers.Integral) and 0.0 < sub <= 1.0)):
            raise ValueError(f"subsample must be 'auto', None, an integer >= 1 or a float in (0, 1]; got {sub!r}")
        check_n_jobs(params["n_jobs"])
        check_verbose(params["verbose"])
        ms = params["max_splits"]
        if not (ms is None or (isinstance(ms, str) and ms == "auto")
                or (isinstance(ms, numbers.Integral) and not isinstance(ms, bool) and ms >= 1)):
            raise ValueError(f"max_splits must be 'auto', None or an integer >= 1; got {ms!r}")
        if params["penalty_splits"] not in ("all", "selected"):
            raise ValueError(f"penalty_splits must be 'all' or 'selected'; got {params['penalty_splits']!r}")
        rule_list = params["rule_list"]
        if not (isinstance(rule_list, (bool, np.bool_)) or (isinstance(rule_list, str) and rule_list == "search")):
            raise ValueError(f"rule_list must be 'search', True or False; got {rule_list!r}")
        if params["n_rules"] is not None:
            check_positive_int("n_rules", params["n_rules"])
            if rule_list != "search" or params["method"] == "em-kl":
                raise ValueError("n_rules sets the size of the searched list: it needs rule_list='search' "
                                 "and method 'fab' or 'em'")
        check_bool("keep_duplicate_splits", params["keep_duplicate_splits"])
        if not (_is_real(params["prune_tol"]) and 0.0 <= params["prune_tol"] <= 1.0):
            raise ValueError(f"prune_tol must be a number in [0, 1]; got {params['prune_tol']!r}")
        fields = {name: params[name] for name in cls.__dataclass_fields__}
        fields.update(eps_schedule=tuple(float(e) for e in sched),
                      rule_list=rule_list if isinstance(rule_list, str) else bool(rule_list),
                      keep_duplicate_splits=bool(params["keep_duplicate_splits"]),
                      n_rules=None if params["n_rules"] is None else int(params["n_rules"]))
        if isinstance(params["n_restarts"], str):  # "auto"
            searched = rule_list == "search" and params["method"] != "em-kl"
            fields["n_restarts"] = AUTO_RESTARTS_SEARCH if searched else AUTO_RESTARTS
        return cls(**fields)

    @property
    def emkl(self):
        return self.method == "em-kl"

    @property
    def searched(self):
        """The rule list is searched for (fit/list_path.py); EM-KL keeps its kept restart's list."""
        return self.rule_list == "search" and not self.emkl

    def subsample_size(self, n_samples):
        """Rows of the screening subsample, or n_samples when restarts are not screened."""
        sub = self.subsample
        if sub is None or self.n_restarts == 1:
            return n_samples
        if isinstance(sub, str) and self.searched:  # "auto": the rows the list is searched on
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
