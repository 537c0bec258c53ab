"""The default's choice among the searched trees (search/tree_path.py's choose): a tree of
boxes reads at most READING_SLACK times the comparisons per row of the plain tree of as many
regions, unless no plain tree comes within one standard error of it (an XOR, whose first
split pays nothing alone): then it is read against the plain tree that comes closest."""
import math

import numpy as np

from defrag.search import tree_path
from defrag.search.tree_path import Candidate


def _candidate(price, size, losses, checks):
    c = Candidate("tree", price, size, validation_error=float(np.mean(losses)), checks=checks,
                  losses=np.asarray(losses, dtype=np.float64), n_conditions=size - 1 if price == math.inf else 2 * size,
                  n_regions=size)
    return c


def _losses(rng, n, rate):
    return (rng.random(n) < rate).astype(np.float64)


def _path(box_rate, plain_rates, n=2000, seed=0):
    rng = np.random.default_rng(seed)
    plain = [_candidate(math.inf, k, _losses(rng, n, r), 1.0 + 0.5 * k) for k, r in enumerate(plain_rates, 2)]
    # the box tree of 3 regions: reads 1.6 times the plain 3-region tree's comparisons
    box = _candidate(0.1, 3, _losses(rng, n, box_rate), 1.6 * plain[1].checks)
    return plain + [box]


def test_a_box_tree_no_plain_tree_comes_near_is_read_against_the_closest():
    # an XOR: plain trees stay far worse at every size; the 3-region box tree is printed
    candidates = _path(0.01, [0.45, 0.40, 0.30, 0.20, 0.10])
    chosen = candidates[tree_path.choose(candidates)]
    assert chosen.price == 0.1 and chosen.n_regions == 3
    assert chosen.checks > tree_path.READING_SLACK * candidates[1].checks


def test_a_box_tree_a_plain_tree_matches_is_read_against_its_own_size():
    # the largest plain tree comes as near as noise: the box tree reads too many comparisons
    # for its regions, and a plain tree is printed
    candidates = _path(0.05, [0.45, 0.40, 0.30, 0.20, 0.05])
    chosen = candidates[tree_path.choose(candidates)]
    assert chosen.price == math.inf
