"""The *Parameters* sections of ``ratings.fit`` and of its specs are written from the option
table: each option is documented once, where it lives, with the default the code itself has
(read from the signature and the dataclass fields, not from the table)."""

from __future__ import annotations

import dataclasses
import inspect
import pydoc
import re

import pytest

import ratings
from ratings.api import specs
from ratings.api.options import OPTIONS

SPECS = (specs.BT, specs.CrowdBT, specs.Bootstrap, specs.Read, specs.Adjust, specs.Solver,
         specs.Style)  # fmt: skip
#: A numpydoc parameter line: ``name : type[, default=value | , optional]``.
_ENTRY = re.compile(r"^(?P<name>\*{0,2}\w+)(?: : (?P<type>.*?))?"
                    r"(?:, default=(?P<default>.+)|, (?P<optional>optional))?$")


def _parameters(obj) -> dict[str, list[dict]]:
    """Each documented parameter of ``obj``'s docstring (its *Parameters* section as numpydoc
    lays it out: names at the margin, descriptions indented), by name."""
    doc = inspect.getdoc(obj)
    lines = doc.splitlines()
    start = lines.index("Parameters") + 2
    assert set(lines[start - 1]) == {"-"}
    out: dict[str, list[dict]] = {}
    name = ""
    for line in lines[start:]:
        if not line.strip():
            break
        if line.startswith(" "):
            out[name][-1]["text"] += " " + line.strip()
            continue
        m = _ENTRY.match(line)
        assert m is not None, line
        name = m["name"]
        out.setdefault(name, []).append({**m.groupdict(), "text": ""})
    return out


def _written(default: object) -> str:
    return f'"{default}"' if isinstance(default, str) else repr(default)


def test_fits_parameters_are_its_signature_each_with_its_default():
    documented = _parameters(ratings.fit)
    params = inspect.signature(ratings.fit).parameters
    keywords = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY]
    assert list(documented) == ["verdicts", *keywords, "**legacy"]
    for name, p in params.items():
        if p.kind is p.VAR_KEYWORD or name == "verdicts":
            continue
        (entry,) = documented[name]
        assert entry["text"], name
        if p.default is None:
            assert entry["optional"], name
        else:
            assert entry["default"] == _written(p.default), name


@pytest.mark.parametrize("cls", SPECS, ids=lambda c: c.__name__)
def test_each_specs_parameters_are_its_fields_each_with_its_default(cls):
    documented = _parameters(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    assert list(documented) == list(fields)
    for name, f in fields.items():
        (entry,) = documented[name]
        assert entry["text"] and entry["type"], name
        if f.default is dataclasses.MISSING:  # required: no default written
            assert entry["default"] is None and entry["optional"] is None, name
        elif f.default is None:
            assert entry["optional"], name
        else:
            assert entry["default"] == _written(f.default), name


def test_every_option_is_documented_once_with_its_description():
    sections = {"fit": _parameters(ratings.fit)} | {c.__name__: _parameters(c) for c in SPECS}
    for o in OPTIONS:
        entries = [e for spec, params in sections.items() for name, es in params.items()
                   for e in es if (spec, name) == (o.spec, o.field)]  # fmt: skip
        assert len(entries) == 1, o.name
        assert " ".join(o.doc.split()) == entries[0]["text"].strip(), o.name


def test_help_renders_the_generated_sections():
    text = pydoc.render_doc(ratings.fit, renderer=pydoc.plaintext)
    assert "level : float, default=0.95" in text and "**legacy" in text
    bt = pydoc.render_doc(ratings.BT, renderer=pydoc.plaintext)
    assert 'ties : {"half", "davidson", "rao-kupper"}, default="half"' in bt
