"""The one verdict rule (hepkg.reference.verdict) and claims judged on several subjects."""
import math

import pytest

from hepkg.reference import Claim, evaluate, on_subjects, tally
from hepkg.reference import verdict as V


@pytest.mark.parametrize("ours, paper, want", [
    (V.ratio([1.10, 1.12, 1.14], [1.0, 1.0, 1.0]), V.stated(1.15, 0.02), "holds"),         # quartiles meet the std
    (V.ratio([0.98, 0.99, 1.00], [1.0, 1.0, 1.0]), V.stated(1.15, 0.02), "fails: below"),   # no speedup at all
    (V.ratio([1.5, 1.6, 1.7], [1.0, 1.0, 1.0]), V.stated(1.15, 0.02), "fails: above"),      # better reads 'above'
    (V.exact(3.2), V.stated(3.3), "holds"),                                                  # x/÷ 1.25 around 3.3
    (V.exact(2.6), V.stated(3.3), "fails: below"),                                           # under 3.3 / 1.25
    (V.exact(4.2), V.stated(3.3), "fails: above"),
    (V.once(4.57), V.stated_ratio(28.7, 0.1, 6.1, 0.1), "holds"),    # measured once: the tolerance is ours
    (V.exact(4.57), V.stated_ratio(28.7, 0.1, 6.1, 0.1), "fails: below"),   # a size: exact, the std binds
    (V.exact(44), V.exact(44), "holds"), (V.exact(45), V.exact(44), "fails: above"),
    (V.share(192, 200), V.share(1994, 2000), "fails: below"),      # 96.0% against 99.7% of 2000 pairs
    (V.share(183, 200), V.share(1805, 2000), "holds"),             # 91.5% against 90.2%
])
def test_a_stated_figure_holds_when_the_ranges_meet_else_fails_above_or_below(ours, paper, want):
    got = V.figure(ours, paper)
    assert got["verdict"] == want
    assert set(got) == {"verdict", "ours", "paper"} and len(got["paper"]["range"]) == 2


def test_the_tolerance_is_applied_once():
    """Neither side has a spread: the paper's is widened, ours is not (x/÷ 1.25, not 1.25^2)."""
    assert V.figure(V.once(1.3), V.stated(1.0))["verdict"] == "fails: above"
    assert V.figure(V.once(1.2), V.stated(1.0))["paper"]["range"] == [0.8, 1.25]


@pytest.mark.parametrize("sample, side, want", [([150, 155, 160], "below", "holds"), ([170, 185, 195], "below",
                                                "inconclusive"), ([185, 190, 200], "below", "fails: above"),
                                                ([30, 35], "above", "fails: below"), ([50, 60], "above", "holds")])
def test_a_limit_is_inconclusive_where_the_quartiles_straddle_it(sample, side, want):
    bound = 180 if side == "below" else 40
    assert V.limit(V.measured(sample), bound, side)["verdict"] == want


def test_a_direction_is_judged_on_direction_with_its_size_beside_it():
    got = V.direction([1.0, 1.1, 1.2], [2.0, 2.1, 2.2], "less")
    assert got["verdict"] == "holds" and got["seen"] == "less" and got["size"]["value"] == pytest.approx(2.1 / 1.1, rel=1e-3)
    assert V.direction([1.0, 1.1, 1.2], [2.0, 2.1, 2.2], "greater")["verdict"] == "fails"
    assert V.direction([1, 2, 3], [1.5, 2.5, 3.5])["verdict"] == "inconclusive"


def test_combine_and_bad_input():
    assert V.combine(["holds", "fails: below", "fails: below"]) == "fails: below"
    assert V.combine(["fails: above", "fails: below"]) == "fails"
    assert V.combine(["holds", "inconclusive"]) == "inconclusive"
    assert V.combine([True, None]) == "holds" and V.combine([]) == "not measured"
    assert V.combine(["not reproducible here"]) == "not reproducible here"
    for bad in (lambda: V.exact(math.nan), lambda: V.measured([]), lambda: V.share(3, 2),
                lambda: V.limit(V.exact(1), 2, "sideways"), lambda: V.direction([1], [2], "equal")):
        with pytest.raises(ValueError):
            bad()


def test_one_statement_on_several_subjects_is_one_row_tallied_once():
    """The authors' program holds, hepkg's code fails: one row, the first subject's status, both beside it."""
    claim = on_subjects("x.under", "under 3 minutes", "paper", {
        "the authors' program": lambda r: ("holds", "155 s"), "hepkg": lambda r: ("fails: above", "266 s")})
    table = evaluate([claim, Claim("x.y", "s", "paper", lambda r: ("fails: below", ""))], {})
    row = table.iloc[0]
    assert row.status == "holds" and row.subjects == {"the authors' program": "holds", "hepkg": "fails: above"}
    assert row.evidence == {"the authors' program": "155 s", "hepkg": "266 s"}
    assert tally(table.to_dict("records")) == {"holds": 1, "fails": 0, "fails: below": 1, "fails: above": 0,
                                                "inconclusive": 0, "not measured": 0, "not reproducible here": 0}
    with pytest.raises(ValueError, match="first subject"):
        Claim("x.z", "s", "paper", lambda r: ("holds", "", {"a": "fails", "b": "holds"})).evaluate({})
