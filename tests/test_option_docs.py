"""``fit``'s docstring lists every option of the table with its default and constraint, and the
checks the specs apply are the table's: each bound and value the table declares is accepted,
and a value just past it refused, naming the option."""

from __future__ import annotations

import inspect

import pytest

import ratings
from ratings.api import specs
from ratings.api.options import OPTIONS, constraint, option_named

#: Options checked elsewhere than in a spec's constructor (at the fit, or by the reader).
_FIT_TIME = {"scope", "anchor", "cluster", "adjust", "style", "columns", "winner_map",
             "judge_quality", "families", "max_memory"}  # fmt: skip


def _make(name: str, value: object):
    """Build what holds option ``name`` with ``value``: its spec, or fit's resolved options."""
    o = option_named(name)
    if o.spec == "Style":
        return specs.Style("tokens", **{o.field: value})
    if o.spec == "fit":
        return specs.options_of(**{name: value})
    return getattr(specs, o.spec)(**{o.field: value})


def test_every_option_is_in_fits_docstring_with_its_default_and_constraint():
    doc = inspect.getdoc(ratings.fit)
    listed = doc[doc.index("Every option"):doc.index("Examples")]
    for o in OPTIONS:
        where = f"``{o.name}=``" if o.spec == "fit" else f"``ratings.{o.spec}({o.field}=)``"
        line = next((ln for ln in listed.splitlines() if ln.startswith(f"- {where}")), None)
        assert line is not None, o.name
        if o.default is not None:
            assert f"default ``{o.default!r}``" in line, o.name
        if constraint(o) is not None:
            assert constraint(o) in line, o.name
        if o.flag is not None:
            assert f"``{o.flag}``" in line, o.name
    # written out, not only generated: the constraints say what the checks do
    assert "- ``ratings.BT(penalty=)``, ``--penalty``: default ``0.0``; a number >= 0 and " \
           "<= 1e+06." in listed
    assert "- ``ratings.Bootstrap(n=)``, ``--n-boot``: default ``1000``; an integer >= 2 " \
           "and <= 1e+07." in listed


@pytest.mark.parametrize("o", [o for o in OPTIONS if o.bounds], ids=lambda o: o.name)
def test_a_spec_checks_the_tables_bounds(o):
    b = o.bounds
    low = b.get("minimum", b.get("above"))
    inside = [v for v in (low, b.get("maximum")) if v is not None and v != b.get("above")]
    if "above" in b:
        inside.append(b["above"] + 1e-9 if b.get("maximum", 1) <= 1 else b["above"] + 1)
    for value in inside:
        _make(o.name, int(value) if b.get("integer") else float(value))
    outside = []
    if "minimum" in b:
        outside.append(b["minimum"] - (1 if b.get("integer") else 1e-6))
    if "above" in b:
        outside.append(b["above"])
    if "maximum" in b:
        outside.append(b["maximum"] * 2 + 1)
    if b.get("integer"):
        outside.append(low + 0.5)
    for value in outside:
        with pytest.raises(ValueError, match=o.name if o.spec != "Style" else "ridge"):
            _make(o.name, value)


@pytest.mark.parametrize("o", [o for o in OPTIONS if (o.values or o.switch)
                               and o.name not in _FIT_TIME], ids=lambda o: o.name)  # fmt: skip
def test_a_spec_accepts_the_tables_values_and_nothing_else(o):
    for value in o.accepted:
        _make(o.name, value)
    with pytest.raises(ValueError, match=o.name if o.spec != "Style" else "transform"):
        _make(o.name, "nope")


def test_level_is_checked_as_the_table_says():
    assert constraint(option_named("level")) == "strictly between 0 and 1"
    for value in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="level"):
            _make("level", value)
    _make("level", 0.9)



def test_prior_is_checked_as_the_table_says():
    assert "agree, flip >= 0 and sd > 0" in constraint(option_named("prior"))
    for value in ("default", "none", (0.0, 0.0, 1.0)):
        _make("prior", value)
    for value in ((-1.0, 1.0, 1.0), (1.0, -1.0, 1.0), (1.0, 1.0, 0.0), "flat"):
        with pytest.raises(ValueError, match="prior"):
            _make("prior", value)
