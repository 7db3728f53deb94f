"""Summary and output of ``validate_coverage.py``: the rows of a cell's results table (coverage,
Monte-Carlo standard error, relative width per target and variant), the atomic file writer and
the Markdown report built from a results table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from coverage_cells import (
    CELLS,
    SPARSE_PER_TASK,
    SPARSE_STRENGTH,
    TARGETS,
    VARIANT_NAMES,
    VARIANTS,
    Cell,
)
from coverage_ranks import rank_markdown, rank_rows

from ratings.io import write_atomic as io_write_atomic

__all__ = ["BAND", "META", "markdown", "summarise", "write_atomic"]


# ----------------------------------------------------------------------------------------------
# Summary and output
# ----------------------------------------------------------------------------------------------


def summarise(cell_name: str, boards: list[dict]) -> list[dict]:
    cell = CELLS[cell_name]
    size = cell.dims
    ok = [b for b in boards if "failed" not in b]
    failed = pd.Series([b["failed"] for b in boards if "failed" in b], dtype=object)
    rows = []
    for target in TARGETS:
        for v in VARIANTS:
            have = [b for b in ok if v in b and target in b[v]]
            if not have:
                continue
            per_board = np.array([b[v][target].mean() for b in have])
            pooled = float(np.concatenate([b[v][target] for b in have]).mean())
            # Width relative to cr1_z on the same boards and intervals.
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.concatenate(
                    [b[v]["w_" + target] / b["cr1_z"]["w_" + target] for b in have]
                )
            rows.append({
                "cell": cell_name, "model": cell.model, "size": cell.size,
                "n_models": size.n_models, "n_verdicts": size.n_verdicts,
                "n_tasks": size.n_tasks, "rho": cell.rho, "task_sd": cell.task_sd,
                "judges": ",".join(f"{k}={e:g}" for k, e in cell.judges.items()) or "exact",
                "target": target, "variant": v, "coverage": pooled,
                "mcse": float(per_board.std(ddof=1) / np.sqrt(len(have))) if len(have) > 1
                else float("nan"),
                "rel_width": float(np.nanmedian(rel)), "n_boards": len(have),
                "n_failed": len(boards) - len(ok),
                "failures": "; ".join(f"{k}: {v}" for k, v in failed.value_counts().items()),
                "eta_boundary_share": float(np.mean([b["eta_boundary"] for b in ok])),
                "n_intervals": int(sum(b[v][target].size for b in have)),
                "tie_share": float(np.mean([b["ties"] for b in ok])),
                "clusters": float(np.mean([b["g"] for b in ok])),
                "max_check": float(max(b["check"] for b in ok)),
            })  # fmt: skip
    for row in rank_rows(cell_name, ok):
        rows.append({**rows[0], **row, "rel_width": np.nan} if rows else row)
    return rows


def write_atomic(text: str, path: Path) -> None:
    """:func:`ratings.io.write_atomic`, creating the results folder first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    io_write_atomic(text, path)


def _describe(cell: Cell) -> str:
    size = cell.dims
    dep = (
        f"copula rho={cell.rho:g}"
        if cell.rho
        else f"task_sd={cell.task_sd:g} (pseudo-true)"
        if cell.task_sd
        else "independent"
    )
    judges = "3 noisy judges" if cell.judges else "exact judge"
    name = "BT" if cell.model == "bt" else "Crowd-BT"
    extra = ""
    if cell.sparse_tasks is not None:
        extra = (f"; model m{size.n_models - 1:02d} (strength {SPARSE_STRENGTH}) only on "
                 f"{cell.sparse_tasks} tasks, {SPARSE_PER_TASK} verdicts on each")
    if cell.equal:
        extra = "; all models equally strong"
    return (
        f"{name}, {size.n_verdicts // 1000}k verdicts / {size.n_tasks} tasks / "
        f"{size.n_models} models, {dep}, {judges}{extra}"
    )


#: Run settings stored in every CSV row, so that ``--render`` can rebuild the Markdown.
META = ("seed", "n_boot", "simulator", "jobs", "seconds")
BAND = (0.93, 0.97)


def _inside(c: float) -> bool:
    return BAND[0] <= c <= BAND[1]


def _by_cell_and_target(table: pd.DataFrame):
    """(cell, target, its rows indexed by variant) in the table's cell order, skipping empty."""
    for cell_name in dict.fromkeys(table["cell"]):
        for target in TARGETS:
            sub = table[(table["cell"] == cell_name) & (table["target"] == target)]
            if not sub.empty:
                yield cell_name, target, sub.set_index("variant")


def markdown(table: pd.DataFrame) -> str:
    """The Markdown report of a results table (as written to the CSV)."""
    full = table
    table = table[table["target"].isin(TARGETS)]
    present = [v for v in VARIANTS if v in set(table["variant"])]
    meta = table.iloc[0]
    size = table["size"]
    n_small = table.loc[size == "small", "n_boards"].max()
    n_large = table.loc[size == "large", "n_boards"].max()
    n_sparse = table.loc[size == "sparse", "n_boards"].max()
    boot = table[table["variant"] == "boot"]
    exact = table[table["variant"] == "cr3x_t"]
    lines = [
        "# Coverage of 95 % intervals (`benchmarks_perf/validate_coverage.py`)",
        "",
        f"Seed {meta['seed']}; up to {n_small} boards per small cell, {n_large} per large cell"
        + (f" and {n_sparse} per sparse-model cell" if n_sparse == n_sparse else "")
        + (f"; cluster bootstrap (`boot`, {meta['n_boot']} resamples) on the first "
           f"{boot['n_boards'].max()} boards of the cells listed with it" if len(boot) else "")
        + (f"; exact-refit jackknife (`cr3x_t`) on the first {exact['n_boards'].max()} boards of "
           "the cells listed with it" if len(exact) else "")
        + f"; simulator `{meta['simulator']}`; {meta['seconds'] / 60:.1f} min with "
        f"{meta['jobs']} jobs.",
        "",
        "Each entry: empirical coverage of the 95 % interval (Monte-Carlo standard error in units "
        "of 0.001, from the per-board coverage fractions, as the intervals of one board are "
        "dependent). `anchor`: every model vs the mid-board anchor; `pairs`: every pairwise "
        "difference; `sparse`: the sparse model vs the anchor (one interval per board); "
        "`sparse_pairs`: its differences to every other model. Entries outside "
        f"[{BAND[0]}, {BAND[1]}] are in bold.",
        "",
        "| cell | target | " + " | ".join(f"`{v}`" for v in present) + " | boards | ties |",
        "|---|---|" + "---:|" * len(present) + "---:|---:|",
    ]  # fmt: skip
    for cell_name, target, sub in _by_cell_and_target(table):
        cells = []
        for v in present:
            if v not in sub.index:
                cells.append("")
                continue
            c, e = sub.at[v, "coverage"], sub.at[v, "mcse"]
            txt = f"{c:.3f} ({1000 * e:.0f})"
            cells.append(txt if _inside(c) else f"**{txt}**")
        nb = sub["n_boards"]
        extra = [f"{sub.at[v, 'n_boards']} {v}" for v in ("cr3x_t", "boot") if v in sub.index]
        boards = f"{nb.max()}" + (f" ({', '.join(extra)})" if extra else "")
        if sub["n_failed"].iloc[0]:
            boards += f", {sub['n_failed'].iloc[0]} failed"
        label = f"`{cell_name}`" if target == "anchor" else ""
        lines.append(f"| {label} | {target} | " + " | ".join(cells)
                     + f" | {boards} | {sub['tie_share'].iloc[0]:.3f} |")  # fmt: skip
    n_cells = table.groupby("variant")["cell"].nunique()
    all_cells = table["cell"].nunique()
    worst = table.groupby("variant")["coverage"].agg(["min", "max"])
    good = [v for v in present if n_cells[v] == all_cells
            and _inside(worst.at[v, "min"]) and _inside(worst.at[v, "max"])]  # fmt: skip
    lines += ["", "Coverage range of each variant over the cells it was run on:", ""]
    for v in present:
        tag = (f" -- every entry inside [{BAND[0]:.2f}, {BAND[1]:.2f}]" if v in good else "")
        part = "" if n_cells[v] == all_cells else f" ({n_cells[v]} of {all_cells} cells)"
        lines.append(f"- `{v}`{part}: {worst.at[v, 'min']:.3f} to {worst.at[v, 'max']:.3f}{tag}")
    default = table[table["variant"] == "cr2_t"]
    if len(default):
        lo, hi = default["coverage"].min(), default["coverage"].max()
        inside = default["coverage"].between(0.94, 0.96)
        lines += ["", f"The default (`cr2_t`) covers {lo:.3f} to {hi:.3f} over every cell and "
                  f"target; {int(inside.sum())} of {len(default)} entries in [0.94, 0.96] "
                  "(compared unrounded)"
                  + ("." if inside.all() else "; outside: " + ", ".join(
                      f"`{r.cell}` {r.target} {r.coverage:.4f} ({1000 * r.mcse:.0f})"
                      for r in default[~inside].itertuples()) + ".")]  # fmt: skip
    lines += rank_markdown(full)
    lines += ["", "Cells:", ""]
    for cell_name in dict.fromkeys(table["cell"]):
        row = table[table["cell"] == cell_name].iloc[0]
        text = f"- `{cell_name}`: {_describe(CELLS[cell_name])}"
        if row["model"] != "bt":
            share = row["eta_boundary_share"]
            text += f"; a judge's eta estimated on its bound on {share:.0%} of boards"
        if row["n_failed"]:
            text += f"; failed boards: {row['failures']}"
        lines.append(text)
    lines += ["", "Variants:", ""]
    for v in present:
        lines.append(f"- `{v}`: {VARIANT_NAMES[v]}")
    lines += [
        "",
        "Median interval width relative to `cr1_z` (same intervals):",
        "",
        "| cell | target | " + " | ".join(f"`{v}`" for v in present) + " |",
        "|---|---|" + "---:|" * len(present),
    ]
    for cell_name, target, sub in _by_cell_and_target(table):
        vals = [f"{sub.at[v, 'rel_width']:.3f}" if v in sub.index else "" for v in present]
        label = f"`{cell_name}`" if target == "anchor" else ""
        lines.append(f"| {label} | {target} | " + " | ".join(vals) + " |")
    return "\n".join(lines) + "\n"
