"""A fixed set of command-line runs over the bundled example and their committed outputs.

Every number the package writes for these runs is kept under ``tests/data/golden/`` and
``tests/test_golden.py`` reruns the commands and compares every number to 1e-8: a change that
moves code must leave them as they are. Regenerate (only when a result is meant to change, and
say why in the commit) with ``python tests/golden_runs.py --update``.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
ANCHOR = "GPT-5.5 (medium)=1000"
JUDGES = "judge-alpha,judge-beta,judge-gamma"


@dataclass(frozen=True)
class Run:
    """One command: its arguments (``{ex}`` is the bundled example's folder, ``{golden}`` this
    folder's inputs, ``{out}`` the run's own output folder) and the files it writes there."""

    name: str
    argv: tuple[str, ...]
    outputs: tuple[str, ...]


def _fit(name: str, *extra: str, outputs: tuple[str, ...] = ("ratings.csv",)) -> Run:
    argv = ("fit", "{ex}/verdicts.csv", "--scope", "analytical", "--anchor", ANCHOR,
            "--out", "{out}/ratings.csv", *extra)  # fmt: skip
    return Run(name, argv, outputs)


RUNS: tuple[Run, ...] = (
    _fit("fit-sandwich", "--pairs", "{out}/pairs.csv", outputs=("ratings.csv", "pairs.csv")),
    _fit("fit-sandwich-z", "--ci", "sandwich-z"),
    _fit("fit-model", "--ci", "model"),
    _fit("fit-bootstrap", "--ci", "bootstrap", "--n-boot", "200", "--seed", "1"),
    _fit("fit-hc0-90", "--no-cluster", "--level", "0.9"),
    _fit("fit-crowd", "--model", "crowd-bt", "--judges-out", "{out}/judges.csv",
         "--pairs", "{out}/pairs.csv", outputs=("ratings.csv", "judges.csv", "pairs.csv")),
    _fit("fit-crowd-file", "--model", "crowd-bt", "--judge-quality", "{ex}/judges_analytical.json",
         "--judges-out", "{out}/judges.csv", outputs=("ratings.csv", "judges.csv")),
    _fit("fit-crowd-file-known", "--judge-quality", "{ex}/judges_analytical.json",
         "--eta-known"),
    _fit("fit-firth", "--firth"),
    _fit("fit-adjust", "--adjust", "position,self-preference",
         "--families", "{golden}/families.csv"),
    Run("judges", ("judges", "{ex}/verdicts.csv", "--scope", "presentation",
                   "--out", "{out}/judges.json"), ("judges.json",)),
    Run("fit-by-scope", ("fit", "{ex}/verdicts.csv", "--by", "scope", "--anchor", ANCHOR,
                         "--out", "{out}/scopes.csv"), ("scopes.csv",)),
    Run("rubric", ("rubric", "{ex}/rubric.csv", "--out", "{out}/matches.csv"), ("matches.csv",)),
    Run("combine", ("combine", "{ex}/verdicts.csv", "--rubric", "{ex}/rubric.csv",
                    "--anchor", ANCHOR, "--judge-quality",
                    "analytical={ex}/judges_analytical.json,"
                    "presentation={ex}/judges_presentation.json",
                    "--out", "{out}/board.csv"), ("board.csv",)),
    Run("freeze", ("freeze", "{golden}/combine/board.csv", "--registry", "{out}/registry.csv",
                   "--date", "2026-01-01"), ("registry.csv",)),
    Run("audit", ("audit", "{ex}/verdicts.csv", "--scope", "analytical", "--families",
                  "{golden}/families.csv", "--n-boot", "200", "--seed", "3",
                  "--out", "{out}/audit.json"), ("audit.json",)),
    Run("assign-judges", ("assign-judges", "{ex}/rubric.csv", "--judges", JUDGES, "--seed", "2",
                          "--out", "{out}/check_judges.csv"), ("check_judges.csv",)),
    Run("next", ("next", "{ex}/verdicts.csv", "--scope", "analytical", "--judges", JUDGES,
                 "--n", "40", "--seed", "7", "--out", "{out}/next.csv"), ("next.csv",)),
    Run("next-active", ("next", "{ex}/verdicts.csv", "--scope", "analytical", "--judges", JUDGES,
                        "--n", "40", "--seed", "7", "--phase", "active",
                        "--out", "{out}/next.csv"), ("next.csv",)),
)

#: Keys of written JSON, and columns of written tables, that record when, where or by which
#: version a file was made, not a result.
VOLATILE = frozenset({"created", "ratings_version", "source"})
#: Outputs larger than this are kept gzipped.
GZIP_FROM = 200_000


def argv_of(run: Run, out: Path) -> list[str]:
    """The run's arguments with its folders filled in."""
    from ratings.datasets.example import example_path

    ex = example_path().parent
    return [a.format(ex=ex, golden=GOLDEN, out=out) for a in run.argv]


def golden_file(run: Run, name: str) -> Path:
    """The committed copy of one output (gzipped when large)."""
    path = GOLDEN / run.name / name
    return path if path.exists() else path.with_name(f"{name}.gz")


def execute(run: Run, out: Path) -> tuple[int, str]:
    """Run one command in this process; its exit status and what it printed."""
    from ratings.cli.app import main

    out.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        status = main(argv_of(run, out))
    return status, buffer.getvalue()


def update() -> None:
    """Rewrite every run's committed outputs."""
    for run in RUNS:
        target = GOLDEN / run.name
        shutil.rmtree(target, ignore_errors=True)
        status, _ = execute(run, target)
        if status != 0:
            raise SystemExit(f"{run.name}: exit status {status}")
        written = sorted(p.name for p in target.iterdir())
        if written != sorted(run.outputs):
            raise SystemExit(f"{run.name}: wrote {written}, declared {sorted(run.outputs)}")
        root = f"{GOLDEN.parents[2]}/"  # no machine path in a committed file
        for name in run.outputs:
            path = target / name
            path.write_text(path.read_text(encoding="utf-8").replace(root, ""), encoding="utf-8")
            if name.endswith(".json"):
                data = json.loads(path.read_text(encoding="utf-8"))
                path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n",
                                encoding="utf-8")
            if path.stat().st_size > GZIP_FROM:
                with path.open("rb") as src, open(f"{path}.gz", "wb") as raw:
                    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as dst:
                        shutil.copyfileobj(src, dst)
                path.unlink()
        print(f"{run.name}: {', '.join(run.outputs)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit("usage: python tests/golden_runs.py --update")
    update()
