"""The default's choice among the searched trees (search/tree_path.py's choose): a tree of
boxes reads at most READING_SLACK times the comparisons per row of the plain tree of as many
regions; else it is read against the plain tree a reader would need to say as much: where no
plain tree comes within one standard error of it (an XOR, whose first split pays nothing
alone), the plain tree that comes closest; where some do, the one of fewest regions among
them, which it must beat on regions and not lose to on comparisons per row."""
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


def _path(box_rate, plain_rates, n=2000, seed=0, box_reads=1.6):
    rng = np.random.default_rng(seed)
    plain = [_candidate(math.inf, k, _losses(rng, n, r), 1.0 + 0.5 * k) for k, r in enumerate(plain_rates, 2)]
    # the box tree of 3 regions: reads box_reads times the plain 3-region tree's comparisons
    box = _candidate(0.1, 3, _losses(rng, n, box_rate), box_reads * plain[1].checks)
    return plain + [box]


def test_a_box_tree_no_plain_tree_comes_near_is_read_against_the_closest():
    # an XOR: plain trees stay far worse at every size; the 3-region box tree is printed
    candidates = _path(0.01, [0.45, 0.40, 0.30, 0.20, 0.10])
    chosen = candidates[tree_path.choose(candidates)]
    assert chosen.price == 0.1 and chosen.n_regions == 3
    assert chosen.checks > tree_path.READING_SLACK * candidates[1].checks


def test_a_box_tree_that_reads_more_than_the_plain_tree_that_matches_it_is_not_printed():
    # the 6-region plain tree (4.0 comparisons a row) comes as near as noise; the box tree
    # reads 4.5, too many for its 3 regions (2.5 for the plain 3-region tree): the plain tree
    candidates = _path(0.05, [0.45, 0.40, 0.30, 0.20, 0.05], box_reads=1.8)
    chosen = candidates[tree_path.choose(candidates)]
    assert chosen.price == math.inf and chosen.n_regions == 6


def test_a_box_tree_with_fewer_regions_and_reads_than_the_plain_tree_that_matches_it_is_printed():
    # the same path, the box tree reading 3.75 a row: fewer regions and fewer comparisons
    # than the simplest plain tree as good (6 regions, 4.0 a row), though 1.5 times the
    # plain 3-region tree's (an XOR with noise: Synthetic1 under a boosted model)
    candidates = _path(0.05, [0.45, 0.40, 0.30, 0.20, 0.05], box_reads=1.5)
    chosen = candidates[tree_path.choose(candidates)]
    assert chosen.price == 0.1 and chosen.n_regions == 3
    assert chosen.checks > tree_path.READING_SLACK * candidates[1].checks


def test_better_each_is_the_paired_one_standard_error_test_row_by_row():
    # the plain NumPy form of the test, pair by pair: a beats b where the mean of b - a
    # exceeds the standard error of that paired difference
    rng = np.random.default_rng(3)
    n = 400
    a = _candidate(math.inf, 2, _losses(rng, n, 0.2), 1.0)
    others = [_candidate(math.inf, k, _losses(rng, n, r), 1.0) for k, r in enumerate([0.15, 0.2, 0.24, 0.3, 0.5], 3)]
    others.append(Candidate("tree", math.inf, 9))  # no losses: never beaten
    got = tree_path._better_each(a, tree_path._loss_rows(others))
    want = []
    for b in others:
        if b.losses is None:
            want.append(False)
            continue
        diff = b.losses - a.losses
        want.append(diff.mean() > np.std(diff, ddof=1) / math.sqrt(n) + 1e-12 * abs(a.validation_error))
    assert got.tolist() == want
    assert want[:-1] == [False, False, True, True, True]  # the data above span both answers
    no_losses = Candidate("tree", math.inf, 2)
    assert not tree_path._better_each(no_losses, tree_path._loss_rows(others)).any()
