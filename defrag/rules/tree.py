"""The one class of every printed explanation, ``RuleTree``: an ordered list of rules, a
tree of rules or a sum of small trees, held as trees of boxes (``Node``) and regions
(``Leaf``, rules/tree_nodes.py).

A *tree of rules* (one term, no base) tests a box at each inner node: where every
condition of the box holds, a row takes the "then" branch, else the "else" branch; a
leaf is a region and gives its prediction. A condition printed at a node is read once
for every region below it, where an ordered list of rules prints (and a reader checks)
it again in each rule.

An *ordered list of rules* (form "list", built by ``RuleSet``) is the tree whose "then"
branches are all leaves: a row takes the prediction of the first rule that holds, else
the default. It prints as a numbered listing and a table (rules/ruleset.py), and its
documents and exports are a list's (schema 1, rules/export.py).

A *sum of trees* (a base and several terms, each a small tree over single conditions)
predicts the base plus one value from each term: the value of the leaf its row reaches
(in classification with two classes, the sum is the probability of the second class,
which is predicted where it exceeds one half).

Rows are read as rules/explanation.py says (column matching by name, the source model's
categories, missing values) and sent down every term by the C router
(src_c/dfg_route.h) a block of rows at a time, so that predict's memory is its output and
a bounded block.
"""
import functools
import math

import numpy as np

from ..utils.docstrings import shared_parameters
from . import document, document_reader, export, tree_export
from .conditions import Condition
from .explanation import Explanation
from .printing import Printing
from .ruleset import ListForm, Rule, rule_chain
from .tree_nodes import Leaf, Node, from_units, rounded, spread_decimals, sum_decimals, to_units, walk



class RuleTree(ListForm, Printing, Explanation):
    """An explanation: an ordered list of rules, a tree of rules, or a sum of small trees.

    A tree of rules (one term, ``base`` None) tests a box of conditions at each inner node:
    where every condition holds, a row takes the "then" branch, else the "else" branch; a
    leaf is a region and gives its prediction. An ordered list (``form="list"``, built by
    ``RuleSet``) is a tree whose "then" branches are all leaves, one per rule, and whose
    last leaf is the default. A sum of trees (``base`` a number) predicts the base plus
    the value of the leaf each term's tree sends the row to; with two classes, the sum is
    the second class's probability, predicted where it exceeds one half. A sum's numbers
    are rounded to the decimals it prints. Rows are read in C, only the columns the
    conditions name (``encode``).

    Parameters
    ----------
    terms : sequence of Node or Leaf
        The root of each tree: one for a list or a tree of rules, one or more for a sum.
    base : float, default=None
        The first number of a sum; None for a list or a tree of rules.
    feature_names : sequence of str, default=None
        The features' names as printed, one per column; every condition must name its
        feature so (ValueError otherwise). None: the features are positions.
    classes : array-like, default=None
        The class labels (classification; a sum takes two).
    supports_missing : bool, default=False
        Whether the source model routes missing values (NaN); otherwise a NaN in a
        feature a condition reads is refused.
    encoding : InputEncoding, default=None
        How the source model reads the inputs (category codes, zero as missing); None:
        the inputs are read as they are.
    feature_names_in : sequence of str, default=None
        The DataFrame columns the explanation was fitted on (None: fitted on an array); a
        DataFrame given to ``predict`` is matched by these names.
    decimals : int, default=None
        The decimal places a regression's values and a sum's numbers are rounded to
        (negative: a power of ten above one), so that the printed numbers are the
        predictions; None: chosen from the values' spread (4 significant digits of their
        range, or of a sum's total range; 6 of the largest value where they do not
        spread), probabilities of a sum to 4 places. In classification a list or a tree
        prints labels and has none.
    form : {"tree", "sum", "list"}, default=None
        "list": terms is one chain whose "then" branches are leaves (``RuleSet`` builds
        it from rules); None: "tree" without a base, "sum" with one.

    Attributes
    ----------
    form : {"list", "tree", "sum"}
        An ordered list, a tree of rules or a sum of trees.
    coarse : bool
        A sum whose numbers are so large against their spread that its decimals keep
        less than 4 significant digits of the spread (its integers of one unit stay below
        2**53); the fit does not choose such a sum unless asked to, and then warns.
    n_regions : int
        Regions of the input space with one prediction: the leaves (a list's rules and its
        default); for a sum, the combinations of one leaf of each term.
    n_conditions : int
        The comparisons the text prints, each once (an interval ``a < x <= b`` two).

    See Also
    --------
    RuleSet : Builds the ordered list of rules and a default.
    DefragModel : Fits a rule tree to a tree ensemble.

    Examples
    --------
    >>> import numpy as np
    >>> from defrag import Condition, RuleTree
    >>> from defrag.rules import Leaf, Node
    >>> root = Node([Condition(0, "age", lower=30.0)],
    ...             Node([Condition(1, "income", upper=2.0)], Leaf(2.0), Leaf(1.0)),
    ...             Leaf(0.0))
    >>> tree = RuleTree([root], feature_names=["age", "income"])
    >>> print(tree)
    if age > 30:
        if income <= 2: y = 2   (support 0)
        else: y = 1   (support 0)
    else: y = 0   (support 0)
    >>> tree.n_regions, tree.n_conditions
    (3, 2)
    >>> tree.predict(np.array([[45.0, 1.0], [45.0, 3.0], [20.0, 1.0]]))
    array([2., 1., 0.])
    """

    def __init__(self, terms, base=None, feature_names=None, classes=None, supports_missing=False,
                 encoding=None, feature_names_in=None, decimals=None, form=None):
        self.terms = list(terms)
        if not self.terms:
            raise ValueError("a rule tree has at least one term")
        self.base = None if base is None else float(base)
        if form not in (None, "tree", "sum", "list"):
            raise ValueError(f"form must be 'tree', 'sum', 'list' or None; got {form!r}")
        self.form = form or ("tree" if self.base is None else "sum")
        if (self.form == "sum") != (self.base is not None):
            raise ValueError("a sum of trees has a base; a list or a tree of rules none")
        if self.base is None and len(self.terms) != 1:
            raise ValueError("a tree of rules has one term; a sum of trees has a base")
        nodes = [n for root in self.terms for n in walk(root) if isinstance(n, Node)]
        if self.form == "list" and any(not isinstance(n.then, Leaf) for n in nodes):
            raise ValueError("an ordered list's 'then' branches are leaves (a rule's region)")
        if self.form != "list" and any(not n.conditions for n in nodes):
            raise ValueError("a node of a tree of rules tests at least one condition")
        self.decimals = None
        self.coarse = False
        leaves = [lf for root in self.terms for lf in walk(root) if isinstance(lf, Leaf)]
        values = [lf.prediction for lf in leaves]
        if self.base is not None:  # a sum: its numbers as decimals of one unit (sum_decimals)
            values = [self.base] + [float(v) for v in values]
            if decimals is None:  # the range of the total: each term's range added
                spread = sum(float(np.ptp([lf.prediction for lf in walk(root) if isinstance(lf, Leaf)]))
                             for root in self.terms)
                decimals, self.coarse = sum_decimals(values, classes is not None, spread)
            self.decimals = int(decimals)
            exact = from_units(to_units(values, self.decimals), self.decimals)
            self.base = float(exact[0])
            for lf, value in zip(leaves, exact[1:]):
                lf.prediction = float(value)
        elif classes is None and (self.form == "tree" or (
                all(isinstance(v, (float, np.floating)) for v in values) and all(lf.proba is None for lf in leaves))):
            # regression: the values rounded as printed (rules/tree_nodes.py, spread_decimals)
            values = [float(v) for v in values]
            self.decimals = int(spread_decimals(values) if decimals is None else decimals)
            for lf, value in zip(leaves, rounded(values, self.decimals)):
                lf.prediction = float(value)
        self.classes = None if classes is None else np.asarray(classes)
        if self.base is not None and self.classes is not None and len(self.classes) != 2:
            raise ValueError("a sum of trees classifies two classes (it sums the second one's probability)")
        self._read_as(feature_names, feature_names_in, encoding, supports_missing)

    # ------------------------------------------------------------ structure
    def nodes(self):
        """Return the inner nodes of every term, in reading order.

        Returns
        -------
        list of Node
            The nodes.
        """
        return [n for root in self.terms for n in walk(root) if isinstance(n, Node)]

    def leaves(self, term=None):
        """Return the leaves (regions) of one term, or of every term, in reading order.

        Parameters
        ----------
        term : int, default=None
            The term; None for every term.

        Returns
        -------
        list of Leaf
            The leaves.
        """
        roots = self.terms if term is None else [self.terms[term]]
        return [n for root in roots for n in walk(root) if isinstance(n, Leaf)]

    @property
    def n_regions(self):
        """Regions of the input space with one prediction: the leaves (a list's rules and its
        default); for a sum, the combinations of one leaf of each term."""
        counts = [len(self.leaves(t)) for t in range(len(self.terms))]
        return math.prod(counts) if self.form == "sum" else counts[0]  # (exact: int64 wraps past 63 parts)

    def __len__(self):
        """The regions (``n_regions``)."""
        return self.n_regions

    @functools.cached_property
    def _flat(self):
        """Routing arrays over every term's nodes and leaves: (box of each item, or -1 for
        a leaf; then / else item of a box; leaf number within its term of a leaf, or -1;
        the root item of each term)."""
        items, then, other, roots = [], [], [], []
        for root in self.terms:
            roots.append(len(items))
            order = list(walk(root))
            index = {id(x): len(items) + i for i, x in enumerate(order)}  # (within the term)
            then += [index[id(x.then)] if isinstance(x, Node) else -1 for x in order]
            other += [index[id(x.otherwise)] if isinstance(x, Node) else -1 for x in order]
            items += order
        is_node = np.array([isinstance(x, Node) for x in items], dtype=bool)
        is_leaf = ~is_node
        leaves_before = np.concatenate([[0], np.cumsum(is_leaf)])[roots]  # each term's first leaf
        term = np.repeat(np.arange(len(roots)), np.diff(roots + [len(items)]))
        leaf = np.where(is_leaf, np.cumsum(is_leaf) - 1 - leaves_before[term], -1)
        return (np.where(is_node, np.cumsum(is_node) - 1, -1).astype(np.int64), np.array(then, dtype=np.int64),
                np.array(other, dtype=np.int64), leaf.astype(np.int64), np.array(roots, dtype=np.int64))

    @property
    def _exports(self):
        return export if self.form == "list" else tree_export

    def _boxes(self):
        return [n.conditions for n in self.nodes()]

    # ------------------------------------------------------------ reading rows
    @shared_parameters
    def route(self, X_coded, n_threads=1):
        """Return the leaf each row reaches in each term.

        {Parameters: X_coded, n_threads}

        Returns
        -------
        ndarray of shape (n_samples, n_terms)
            The leaves' numbers in reading order (int64).
        """
        return self._read_coded(X_coded, n_threads, self._reading("route"))

    def _items(self):
        box, then, other, _, roots = self._flat
        return dict(box=box, then_item=then, else_item=other, roots=roots)

    def _item_units(self):
        """A sum's value of each item (``_flat``'s numbering) in integers of the unit
        10**-decimals (int64; 0 at a box)."""
        units = np.zeros(len(self._flat[0]), dtype=np.int64)
        units[self._flat[3] >= 0] = to_units([lf.prediction for lf in self.leaves()], self.decimals)
        return units

    def _reading(self, what):
        """How the reader of rows (rules/explanation.py, ``_blockwise``) makes what
        ("route", "apply", "predict" or "predict_proba") of each block's items: (what,
        result, dtype, width, labelled). A list's and a tree's read each row's leaf; a
        sum adds its base and the values of the items reached as integers of its unit
        10**-decimals."""
        name = f"RuleTree.{what}"
        if what == "predict_proba" and self.classes is None:
            raise AttributeError("class probabilities are for classification")
        if what == "route" or (what == "apply" and self.form == "sum"):
            return name, lambda leaves: leaves, np.int64, len(self.terms), True
        if what == "apply":
            return name, lambda leaves: leaves[:, 0], np.int64, None, True
        if self.form != "sum":
            values = self.predictions() if what == "predict" else self.probabilities()
            width = values.shape[1] if values.ndim > 1 else None
            return name, lambda leaves: values[leaves[:, 0]], values.dtype, width, True
        units, base = self._item_units(), to_units(self.base, self.decimals)

        def sums(items):
            return base + units[items].sum(axis=1, dtype=np.int64)

        if what == "predict_proba":
            def both(items):
                p = np.clip(from_units(sums(items), self.decimals), 0.0, 1.0)
                return np.column_stack([1.0 - p, p])

            return name, both, np.float64, 2, False
        if self.classes is None:
            return name, lambda items: from_units(sums(items), self.decimals), np.float64, None, False
        half = 10 ** self.decimals  # (twice the total against the unit count of 1)
        return name, lambda items: np.where(2 * sums(items) > half, self.classes[1], self.classes[0]), \
            self.classes.dtype, None, False

    def predictions(self):
        """Return the leaves' predictions in reading order.

        A list's are its rules', then its default's.

        Returns
        -------
        ndarray of shape (n_leaves,)
            The predictions (AttributeError for a sum).
        """
        if self.form == "sum":
            raise AttributeError("a sum of trees predicts the sum of its terms' values")
        return self._labels([lf.prediction for lf in self.leaves()])

    def probabilities(self):
        """Return the leaves' class probabilities in reading order (classification).

        Returns
        -------
        ndarray of shape (n_leaves, n_classes)
            The probabilities (AttributeError for a sum: see ``probabilities_coded``).
        """
        if self.form == "sum":
            raise AttributeError("a sum of trees gives the probability its terms' values add up to")
        return np.vstack([lf.proba for lf in self.leaves()])

    def _prediction_dtype(self):
        if self.form != "sum":
            return self.predictions().dtype
        return np.float64 if self.classes is None else self.classes.dtype

    @shared_parameters
    def probabilities_coded(self, X_coded, n_threads=1):
        """Return the class probabilities of the rows of X as the explanation reads it.

        A list and a tree give the class frequencies of the leaf a row reaches; a sum its
        second-class probability clipped to [0, 1]. AttributeError in regression.

        {Parameters: X_coded, n_threads}

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The probabilities.
        """
        return self._read_coded(X_coded, n_threads, self._reading("predict_proba"))

    @shared_parameters
    def key_counts(self, X_coded, n_threads=1):
        """Count the rows that pass through each node and leaf that has a key.

        {Parameters: X_coded, n_threads}

        Returns
        -------
        dict
            ``{(term, key): rows}``.
        """
        items = [(t, x) for t, root in enumerate(self.terms) for x in walk(root)]
        visits = np.zeros(len(items), dtype=np.int64)
        self._route(X_coded, n_threads, items=False, visits=visits)
        return {(t, x.key): int(v) for (t, x), v in zip(items, visits) if x.key is not None}

    # ------------------------------------------------------------ JSON
    def _document(self):
        return document.ruleset_to_dict(self) if self.form == "list" else document.tree_to_dict(self)

    @classmethod
    def _from_document(cls, d):
        if not (isinstance(d, dict) and "nodes" in d):  # a list's document (schema 1)
            fields = document_reader.ruleset_fields(d)
            rules = [Rule([Condition(**c) for c in r.pop("conditions")], **r) for r in fields.pop("rules")]
            default = fields.pop("default_prediction"), fields.pop("default_proba")
            return cls([rule_chain(rules, *default)], form="list", **fields)
        fields = document_reader.tree_fields(d)

        def built(item):
            if "conditions" in item:
                return Node([Condition(**c) for c in item["conditions"]], built(item["then"]), built(item["else"]))
            return Leaf(item["prediction"], item["proba"], item["support"], item["share"])

        return cls([built(t) for t in fields.pop("terms")], **fields)

    # ------------------------------------------------------------ printing
    def _on_training_rows(self, X, printed, n_threads):
        if self.form == "list":
            covered, first = self.cover_counts(X, n_threads) if X.shape[0] else (None, None)
            return self.printed_list(printed, covered, first, X.shape[0])
        printed = dict(zip(map(id, self._conditions()), printed))
        leaves = self.route(X, n_threads)
        counts = [np.bincount(leaves[:, t], minlength=len(self.leaves(t))) for t in range(len(self.terms))]
        return self.printed(printed, counts, X.shape[0])

    def printed(self, conditions, leaf_counts, n_rows):
        """Return a copy of a tree or a sum printed for training rows.

        Parameters
        ----------
        conditions : dict
            Maps ``id(c)`` of a condition c of the tree to its replacement (printed for the
            rows); each box's conditions are sorted by their share, the one most rows fail
            first.
        leaf_counts : sequence of array-like
            Per term, the rows each leaf holds, in reading order: the leaves' supports.
        n_rows : int
            The rows, for the leaves' shares.

        Returns
        -------
        RuleTree
            The copy.
        """
        if self.form == "list":
            raise AttributeError("a list is printed for training rows by printed_list")
        new = self._copy()

        def copied(item):
            if isinstance(item, Leaf):
                return Leaf(item.prediction, item.proba, item.support, item.share, item.key)
            conds = sorted((conditions.get(id(c), c) for c in item.conditions),
                           key=lambda c: 1.0 if c.train_share is None else c.train_share)
            return Node(conds, copied(item.then), copied(item.otherwise), item.key)

        new.terms = [copied(root) for root in self.terms]
        for t, counts in enumerate(leaf_counts):
            for lf, count in zip(new.leaves(t), counts):
                lf.support = int(count)
                lf.share = float(count / n_rows) if n_rows else None
        return new


class _ListForm(type):
    """RuleSet's type: isinstance(x, RuleSet) says whether x is an ordered list."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, RuleTree) and obj.form == "list"


class RuleSet(metaclass=_ListForm):
    """An ordered list of rules and a default: the RuleTree of form "list".

    RuleSet builds it and has no instances of its own. ``predict`` uses the rules as written: a row takes the prediction of the first rule
    that covers it, else the default. Rows are read in C, only the columns the rules name.
    The list is saved as JSON (``to_json``; ``RuleTree.from_json`` reads it back) and
    exported to SQL, Python, pandas queries and tables. ``isinstance(x, RuleSet)`` tells
    whether a RuleTree is such a list.

    Parameters
    ----------
    rules : iterable of Rule
        The rules, in order.
    default_prediction : object
        The prediction where no rule covers a row.
    default_proba : array-like of shape (n_classes,), default=None
        The default's class probabilities (classification only).
    feature_names : sequence of str, default=None
        As RuleTree's.
    classes : array-like, default=None
        The class labels (classification).
    supports_missing : bool, default=False
        As RuleTree's.
    encoding : InputEncoding, default=None
        As RuleTree's.
    feature_names_in : sequence of str, default=None
        As RuleTree's.
    decimals : int, default=None
        Regression: the decimal places the values are rounded to (negative: a power of
        ten above one), so that the printed numbers are the predictions; None: 4
        significant digits of the values' range (6 of the largest where they do not
        spread). Ignored in classification.

    Returns
    -------
    RuleTree
        The list (``form`` "list"): its ``rules``, ``default_prediction``,
        ``default_proba``, ``default_support`` and ``default_share``.

    See Also
    --------
    Rule : One rule of the list.
    RuleTree : The class of every explanation.
    DefragModel : Fits an explanation to a tree ensemble.

    Examples
    --------
    >>> import numpy as np
    >>> from defrag import Condition, Rule, RuleSet
    >>> rules = RuleSet([Rule([Condition(0, "age", lower=30.0)], 1.5, support=12),
    ...                  Rule([Condition(1, "income", upper=2.0)], 0.5, support=8)],
    ...                 default_prediction=0.0, feature_names=["age", "income"])
    >>> print(rules)
    [1] if age > 30 then y = 1.5   (support 12, weight 0.000)
    [2] if income <= 2 then y = 0.5   (support 8, weight 0.000)
    [*] otherwise y = 0
    >>> rules.predict(np.array([[45.0, 1.0], [20.0, 1.0], [20.0, 3.0]]))
    array([1.5, 0.5, 0. ])
    >>> rules.apply(np.array([[45.0, 1.0], [20.0, 3.0]]))
    array([0, 2])
    """

    def __new__(cls, rules, default_prediction, default_proba=None, feature_names=None, classes=None,
                supports_missing=False, encoding=None, feature_names_in=None, decimals=None):
        return RuleTree([rule_chain(rules, default_prediction, default_proba)], None, feature_names, classes,
                        supports_missing, encoding, feature_names_in, decimals, form="list")


def from_json(text):
    """The explanation of a JSON document that ``to_json`` wrote (``RuleTree.from_json``:
    a list's document, schema 1, or a tree's or a sum's, schema 2)."""
    return RuleTree.from_json(text)
