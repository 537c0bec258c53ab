"""The search of printed forms over the ensemble's splits, from the boxes of every
restart's components: a rule list (``list_search``, grown at every size and its size
cross-validated in ``list_path``), a tree of boxes or a sum of small trees (``tree_search``,
``additive_search``; the cross-validated choice among them in ``tree_path``), a warm start
from earlier rules (``warm_start``), and the searched path printed for the training rows
(``path_readout``). The searches run in C (``_list_search``, ``_tree_search``,
``_additive_search``). Imports ``rules``, ``splits`` and ``utils``; the representation
(``rules``) knows nothing of the search, and the fit (``fit``) calls it."""
