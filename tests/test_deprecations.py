"""Names of earlier releases: old module paths are proxies that warn and leave the new module as
it is (so ``importlib.reload`` works), and every name of 0.1.0 imports or is listed as removed."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import ratings
from ratings._moved import MOVED
from ratings.core.deprecation import REMOVED_IN

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT / "tests" / "data" / "release_0.1.0_names.txt"


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)  # fmt: skip


def test_reload_of_the_new_module_reloads_after_the_old_path_was_imported():
    # in a fresh process: reloading a module replaces its classes and functions
    done = _run("""
        import importlib, warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import ratings.slots
        import ratings.data.slots as new
        assert new.__spec__.name == "ratings.data.slots", new.__spec__.name
        assert ratings.slots is not new
        before = new.slot_counts
        again = importlib.reload(new)
        assert again is new and new.slot_counts is not before, "reload did not run the module"
        assert ratings.slots.slot_counts is new.slot_counts  # the proxy follows
        print("reloaded")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "reloaded"


def test_the_old_reload_failure_would_be_caught():
    # the check itself: a path that hands back the module object (as the old shim did) makes
    # the reload a no-op, which the test above sees
    done = _run("""
        import importlib, importlib.util, sys
        import ratings.data.slots as new
        spec = importlib.util.spec_from_loader("old_slots", loader=None)
        new.__spec__ = spec  # what returning the module from create_module did
        before = new.slot_counts
        try:
            importlib.reload(new)
        except Exception as err:
            print("failed:", type(err).__name__)
        else:
            print("same" if new.slot_counts is before else "reloaded")
    """)
    assert done.stdout.strip() != "reloaded", done.stdout + done.stderr


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_naming_the_release_and_forwards(old):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=rf"`{re.escape(old)}` moved to .*removed in "
                      rf"ratings {re.escape(REMOVED_IN)}"):  # fmt: skip
        proxy = importlib.import_module(old)
    new = MOVED[old]
    targets = [new] if isinstance(new, str) else list(new)
    first = importlib.import_module(targets[0])
    assert proxy is not first and first.__spec__.name == targets[0]
    for name in getattr(first, "__all__", [])[:5]:
        assert getattr(proxy, name) is getattr(first, name)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        proxy.no_such_name  # noqa: B018


def _removed_names() -> set[str]:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    unreleased = text.split("## [Unreleased]", 1)[1].split("\n## [", 1)[0]
    removed = unreleased.split("### Removed", 1)[1].split("\n### ", 1)[0]
    found = set(re.findall(r"`([\w.]+)`", removed))
    for line in re.findall(r"`([\w.]+)` and `([\w.]+)`", removed):
        found.update(line)
    return found


def _released() -> list[tuple[str, str]]:
    rows = []
    for line in RELEASED.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            module, name = line.split()
            rows.append((module, name))
    return rows


def test_every_name_of_the_last_release_imports_or_is_listed_as_removed():
    removed = _removed_names()
    missing = []
    for module, name in _released():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                found = importlib.import_module(module)
                if name != "-":
                    getattr(found, name)
            except (ImportError, AttributeError):
                if f"{module}.{name}" not in removed and module not in removed:
                    missing.append(f"{module}.{name}")
    assert missing == [], "gone without a deprecation or a line in CHANGELOG's Removed list"


def test_the_release_check_would_catch_a_vanished_name(monkeypatch):
    # the check itself: a name of 0.1.0 removed silently fails it
    import ratings.cli

    monkeypatch.delattr(ratings.cli, "__getattr__")
    with pytest.raises(AssertionError, match="gone without"):
        test_every_name_of_the_last_release_imports_or_is_listed_as_removed()


@pytest.mark.parametrize("name", ["load_log", "load_comparisons", "is_counts_source",
                                  "parse_anchor", "check_fit_options"])  # fmt: skip
def test_the_vanished_api_names_are_back_as_deprecations(name):
    import ratings.api

    with pytest.warns(DeprecationWarning, match=rf"ratings\.api\.{name}.*{REMOVED_IN}"):
        value = getattr(ratings.api, name)
    assert callable(value)


def test_check_fit_options_still_refuses_what_it_refused():
    from ratings.api.compat import check_fit_options

    check_fit_options(ci="sandwich", penalty=0.5, level=0.9)
    for bad in ({"ci": "nope"}, {"level": 1.5}, {"n_boot": 1}, {"model": "crowd-bt",
                                                                "penalty": 1.0}):  # fmt: skip
        with pytest.raises(ValueError):
            check_fit_options(**bad)


def test_exit_data_is_the_command_lines_exit_status():
    from ratings.cli import EXIT_DATA

    assert EXIT_DATA == 2 and ratings.cli.main(["fit", "no-such-file.csv"]) == EXIT_DATA
