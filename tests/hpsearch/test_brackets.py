"""Hyperband's bracket table (Li et al. 2018, Algorithm 1), in integers."""

import pytest

from hpsearch.brackets import format_plan, hyperband_brackets, plan_budget, single_rung_bracket
from tftk.user_input import UserInputError


def table(max_resource, eta):
    return {b.s: [(r.n, r.resource) for r in b.rungs] for b in hyperband_brackets(max_resource, eta)}


def test_paper_table_r81_eta3():
    assert table(81, 3) == {
        4: [(81, 1), (27, 3), (9, 9), (3, 27), (1, 81)],
        3: [(34, 3), (11, 9), (3, 27), (1, 81)],
        2: [(15, 9), (5, 27), (1, 81)],
        1: [(8, 27), (2, 81)],
        0: [(5, 81)],
    }


@pytest.mark.parametrize("max_resource, eta, expected", [
    (9, 3, {2: [(9, 1), (3, 3), (1, 9)], 1: [(5, 3), (1, 9)], 0: [(3, 9)]}),
    (8, 2, {3: [(8, 1), (4, 2), (2, 4), (1, 8)], 2: [(6, 2), (3, 4), (1, 8)], 1: [(4, 4), (2, 8)], 0: [(4, 8)]}),
    (1, 3, {0: [(1, 1)]}),
    (2, 3, {0: [(1, 2)]}),
    # R not a power of eta: s_max = 4, resources floor(100 * 3^i / 81)
    (100, 3, {4: [(81, 1), (27, 3), (9, 11), (3, 33), (1, 100)], 3: [(34, 3), (11, 11), (3, 33), (1, 100)],
              2: [(15, 11), (5, 33), (1, 100)], 1: [(8, 33), (2, 100)], 0: [(5, 100)]}),
])
def test_other_tables(max_resource, eta, expected):
    assert table(max_resource, eta) == expected


@pytest.mark.parametrize("max_resource, eta, s_max", [(243, 3, 5), (1000, 10, 3), (999, 10, 2), (125, 5, 3), (4096, 2, 12)])
def test_s_max_is_exact_where_float_log_is_not(max_resource, eta, s_max):
    brackets = hyperband_brackets(max_resource, eta)
    assert brackets[0].s == s_max and brackets[0].rungs[-1].resource == max_resource
    assert [b.s for b in brackets] == list(range(s_max, -1, -1))


def test_budget_counts_continued_training_once():
    # s=4 of R=81: 81*1 + 27*(3-1) + 9*(9-3) + 3*(27-9) + 1*(81-27)
    brackets = hyperband_brackets(81, 3)
    assert brackets[0].iterations == 81 + 54 + 54 + 54 + 54
    assert plan_budget(brackets) == (81 + 34 + 15 + 8 + 5, 297 + 276 + 279 + 324 + 405)
    plan = format_plan(brackets, "plan")
    assert "bracket s=3: 34 x 3  11 x 9  3 x 27  1 x 81  (276 iterations)" in plan
    assert plan.splitlines()[-1] == "budget: 5 bracket(s), 143 trials, 1581 training iterations"


def test_random_search_is_one_bracket():
    bracket = single_rung_bracket(7, 50)
    assert [(r.n, r.resource) for r in bracket.rungs] == [(7, 50)] and bracket.iterations == 350


@pytest.mark.parametrize("max_resource, eta, message", [
    (0, 3, "max_resource must be a positive integer"), (81.0, 3, "max_resource must be a positive integer"),
    (81, 1, "eta must be an integer >= 2"),
])
def test_bad_input(max_resource, eta, message):
    with pytest.raises(UserInputError, match=message):
        hyperband_brackets(max_resource, eta)
