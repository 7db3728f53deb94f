"""The fit's options are declared once (:mod:`ratings.api.options`): the flags of ``ratings fit``,
the flag map of messages and the flat keywords of earlier releases come from that table, and the
table agrees with what ``fit`` and the specs document."""

from __future__ import annotations

import argparse
import inspect

import pytest

import ratings
from ratings.api import specs
from ratings.api.options import OPTIONS, add_option, flags, legacy, option_named, switches
from ratings.cli.fitting import add_fit_options
from ratings.cli.flags import _SETTINGS, FLAGS, render_option


def _fit_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    add_fit_options(p)
    return p


def test_every_flag_of_the_fit_groups_is_in_the_table():
    declared = {o.flag for o in OPTIONS if o.declared_here}
    groups = [g for g in _fit_parser()._action_groups
              if g.title in ("the fit", "judge quality (Crowd-BT)", "judge effects and style")]
    seen = {s for g in groups for a in g._group_actions for s in a.option_strings}
    assert seen == declared


def test_the_flags_take_the_declared_defaults_and_choices():
    args = _fit_parser().parse_args([])
    for o in OPTIONS:
        if o.declared_here and o.name != "model":
            assert getattr(args, o.name) == o.default, o.name
    with pytest.raises(SystemExit):
        _fit_parser().parse_args(["--style-transform", "cube"])


def test_messages_name_the_tables_flags():
    assert flags().items() <= FLAGS.items()
    assert switches().items() <= _SETTINGS.items()
    assert render_option("style_ridge", 2) == "`--style-ridge 2`"
    assert render_option("firth", True) == "`--firth`"


def test_flat_keywords_are_the_tables_spec_options():
    assert specs.LEGACY == legacy()
    for name, (spec, fld) in legacy().items():
        assert fld in getattr(specs, spec).__dataclass_fields__, name
    with pytest.warns(DeprecationWarning, match=r"penalty= -> ratings.BT\(penalty=\)"):
        specs.options_of(legacy={"penalty": 1.0})


def test_the_table_agrees_with_the_documentation():
    """Each option of ``fit`` itself is a documented parameter of ``fit``, with the table's
    default; each spec option a field its spec declares, its default declared there only."""
    doc = inspect.getdoc(ratings.fit)
    params = inspect.signature(ratings.fit).parameters
    for o in OPTIONS:
        if o.spec == "fit":
            assert o.name in params and f"{o.name} :" in doc, o.name
            if o.default is not None:
                assert params[o.name].default == o.default, o.name
        else:
            assert o.field in getattr(specs, o.spec).__dataclass_fields__, o.name
            assert o.fit_default is None, o.name  # the spec's field holds the default


def test_add_option_refuses_an_unknown_name():
    with pytest.raises(KeyError):
        option_named("nope")
    with pytest.raises(KeyError):
        add_option(argparse.ArgumentParser(), "nope")
