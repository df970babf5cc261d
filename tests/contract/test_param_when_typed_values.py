"""``Param(when={...})`` names values of another parameter; they are checked against that
parameter's type at declaration (``declare``), and must also be *compared* as that type: a
condition spelt as text (``{"mode": "1"}`` for an int, ``{"stem": "true"}`` for a bool) was
accepted yet never held, so the parameter was always dropped from the recorded configuration
and refused when given, though it applies."""

from __future__ import annotations

from statbench.contract.params import Param, applicable_params, inapplicable


def test_a_condition_spelt_as_text_holds_for_the_typed_value():
    declared = {"mode": 1, "stem": True,
                "window": Param(5, when={"mode": "1"}), "lang": Param("en", when={"stem": "true"})}
    values = {"mode": 1, "stem": True, "window": 7, "lang": "fr"}
    assert inapplicable(declared, values, None) == []
    assert applicable_params(values, declared, None, "m", given=("window", "lang")) == values


def test_a_condition_that_does_not_hold_still_drops_the_parameter():
    declared = {"mode": 1, "window": Param(5, when={"mode": "2"})}
    assert inapplicable(declared, {"mode": 1, "window": 5}, None) == ["window"]
