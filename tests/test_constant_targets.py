"""A constant prints with every digit of its integer part where a double holds them all
(rules/tree_nodes.py's spread_decimals): the printed number is predict's, and it is the
model's."""
import numpy as np
from sklearn.ensemble import RandomForestRegressor

from defrag import DefragModel
from defrag.rules.tree_nodes import spread_decimals


def test_a_constant_keeps_the_digits_of_its_integer_part_where_a_double_holds_them():
    assert spread_decimals([123456789.0]) == 0
    assert spread_decimals([1.23456789]) == 5  # six significant digits below 10
    assert spread_decimals([1.5e14]) == 0  # every digit of the integer part, a double holds them
    assert spread_decimals([1.5e25]) == -20  # beyond: six significant digits
    assert spread_decimals([1.7976931348623157e308]) == -303  # (fifteen would round up to inf)
    X = np.random.default_rng(4).normal(size=(200, 3))
    forest = RandomForestRegressor(10, random_state=0).fit(X, np.full(200, 123456789.0))
    model = DefragModel(forest, random_state=0).fit(X)
    np.testing.assert_array_equal(model.predict(X), 123456789.0)
    assert str(model).splitlines()[-1].startswith("y = 123456789 ")

