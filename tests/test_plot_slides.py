"""Plots fit for slides (legends outside the data, titles inside the figure, ``size``/``dpi``) and
the style-control plots: properties of the drawn figures, never pixels."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import itertools
import struct

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from helpers import simulate_verdicts

import ratings
from ratings.cli.app import main
from ratings.core.schema import ELO_SCALE
from ratings.io import write_atomic
from ratings.plot import bands as rplot

LONG = ("A long title for the slides: style-controlled ratings of a simulated board, every "
        "interval at 95% with CR2 by task and Satterthwaite degrees of freedom")  # fmt: skip


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _styled_log(m: int = 8, n: int = 3000, seed: int = 1) -> pd.DataFrame:
    """Judges favour longer answers; models differ in length, so control reorders some."""
    rng = np.random.default_rng(seed)
    names = np.array([f"model-{k}" for k in range(m)])
    s = np.linspace(0.8, -0.8, m)
    verbosity = rng.normal(0.0, 0.6, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    ta = np.round(np.exp(6 + verbosity[a] + rng.normal(0, 0.3, n)))
    tb = np.round(np.exp(6 + verbosity[b] + rng.normal(0, 0.3, n)))
    ha, hb = rng.poisson(2, n), rng.poisson(2, n)
    p = 1 / (1 + np.exp(-(s[a] - s[b] + 2.0 * (ta - tb) / (ta + tb))))
    winner = np.where(rng.random(n) < 0.1, "tie", np.where(rng.random(n) < p, "A", "B"))
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                         "task_id": rng.integers(0, 120, n), "tokens_a": ta, "tokens_b": tb,
                         "headers_a": ha, "headers_b": hb})  # fmt: skip


@pytest.fixture(scope="module")
def fits() -> tuple[ratings.Ratings, ratings.Ratings]:
    log = _styled_log()
    controlled = ratings.fit(log, style=["tokens", "headers"], anchor="model-3=1000")
    raw = ratings.fit(log, anchor="model-3=1000")
    return controlled, raw


@pytest.fixture(scope="module")
def board() -> ratings.Ratings:
    names = [f"Vendor {k % 5} model {k:02d}" for k in range(8)]
    rng = np.random.default_rng(2)
    log = simulate_verdicts(rng, np.linspace(1, -1, 8), 600, 40, tie_fraction=0.1, names=names,
                            tie_ring=True)  # fmt: skip
    return ratings.fit(log, anchor=f"{names[2]}=1000")


def _drawn(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _overlap(a, b) -> bool:
    return not (a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0)


def _inside(inner, outer, tol: float = 0.5) -> bool:
    return (inner.x0 >= outer.x0 - tol and inner.y0 >= outer.y0 - tol
            and inner.x1 <= outer.x1 + tol and inner.y1 <= outer.y1 + tol)  # fmt: skip


def _png_size(path) -> tuple[int, int]:
    with open(path, "rb") as f:
        data = f.read(24)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def _ytick_models(ax) -> dict[str, float]:
    return {t.get_text(): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks(), strict=True)
            if t.get_text()}  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Legends outside the data area, titles inside the figure
# ----------------------------------------------------------------------------------------------


def _audit():
    from ratings.datasets.simulate import random_matches
    from ratings.datasets.simulate import simulate_verdicts as simulate

    fam = {"m0": "red", "m1": "red", "m2": "blue", "J1": "red", "J2": "blue"}
    models = [f"m{i}" for i in range(6)]
    matches = random_matches(models, 2000, n_tasks=60, judges=["J1", "J2"], seed=4)
    log = simulate(matches, pd.Series(np.linspace(-1, 1, 6), index=models),
                   position_bias={"J1": 0.5}, families=fam, tie_rate=0.1, seed=5)  # fmt: skip
    return ratings.audit(log, families=fam, n_boot=20, seed=1)


@pytest.fixture(scope="module")
def audit():
    return _audit()


def _every_plot(board, fits, audit):
    controlled, _raw = fits
    hist = pd.DataFrame({"n_verdicts": np.arange(1, 11) * 100.0,
                         "mean_halfwidth": 300 / np.sqrt(np.arange(1, 11)), "s": "active"})
    judges = pd.DataFrame({"judge": ["j1", "j2"], "eta": [0.9, 0.7], "lower": [0.8, 0.55],
                           "upper": [0.97, 0.85]})  # fmt: skip
    scopes = {"a": board, "b": board}
    return {
        "bands": lambda **kw: rplot.plot_ratings(board, highlight=board.models[0], **kw),
        "scopes": lambda **kw: rplot.plot_scopes(scopes, **kw),
        "audit": lambda **kw: rplot.plot_audit(audit, style=controlled, **kw),
        "judges": lambda **kw: rplot.plot_judges(judges, **kw),
        "convergence": lambda **kw: rplot.plot_convergence(hist, hue="s", target=80.0, **kw),
        "win": lambda **kw: rplot.plot_win_matrix(board, **kw),
    }


@pytest.mark.parametrize("size", [None, (6.0, 4.0), (16.0, 9.0)])
def test_legend_outside_data_and_title_inside_figure(board, fits, audit, size):
    for kind, draw in _every_plot(board, fits, audit).items():
        ax = draw(title=LONG, size=size)
        fig = ax.figure
        renderer = _drawn(fig)
        data = ax.get_window_extent(renderer)
        legend = ax.get_legend()
        if kind != "win":
            assert legend is not None, kind
            assert not _overlap(legend.get_window_extent(renderer), data), kind
            assert legend.get_window_extent(renderer).y0 >= data.y1 - 0.5, kind  # above
        title = ax.title.get_window_extent(renderer)
        assert _inside(title, fig.bbox), (kind, title, fig.bbox)
        if size is None or size[0] < 10:  # too long for one line: wrapped, not clipped
            assert "\n" in ax.get_title(), kind
        assert ax.get_title().replace("\n", " ") == LONG
        if legend is not None:
            assert title.y0 >= legend.get_window_extent(renderer).y1 - 0.5, kind  # no overlap
        if size is not None:
            assert tuple(fig.get_size_inches()) == size
        plt.close(fig)


def test_short_title_stays_on_one_line(board):
    ax = rplot.plot_ratings(board, title="Board")
    assert ax.get_title() == "Board"


def test_many_models_in_a_slide_size(board):
    """150 models in 10 x 5.6 in: labels shrink and thin out but never overlap; the highlighted
    model keeps its label."""
    m = 150
    names = [f"Vendor {k % 9} model {k:03d} (preview)" for k in range(m)]
    rng = np.random.default_rng(5)
    log = simulate_verdicts(rng, rng.normal(0.0, 1.0, m), 4000, 200, tie_fraction=0.1,
                            names=names, tie_ring=True)  # fmt: skip
    r = ratings.fit(log, anchor=f"{names[0]}=1000")
    chosen = r.to_frame()["model"].iloc[41]
    ax = rplot.plot_ratings(r, highlight=chosen, size=(10, 5.6), dpi=150)
    renderer = _drawn(ax.figure)
    labels = [t for t in ax.get_yticklabels() if t.get_text()]
    assert 10 < len(labels) < m
    assert chosen in {t.get_text() for t in labels}
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert not any(_overlap(a, b) for a, b in itertools.pairwise(boxes))
    assert all(_inside(b, ax.figure.bbox) for b in boxes)


def test_size_and_dpi_only_for_a_new_figure(board):
    _fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="`size` and `dpi` are for the figure a plot makes"):
        rplot.plot_ratings(board, ax=ax, size=(4, 3))
    with pytest.raises(ValueError, match="`size` must be two numbers"):
        rplot.plot_ratings(board, size="4x3")
    with pytest.raises(ValueError, match=r"between 0\.5 and 200 inches"):
        rplot.plot_ratings(board, size=(0.1, 3))
    with pytest.raises(ValueError, match="`dpi` must be a number from 10"):
        rplot.plot_ratings(board, dpi=0)
    assert rplot.plot_ratings(board, size="7,3.5", dpi=50).figure.get_size_inches().tolist() == [
        7.0, 3.5]


# ----------------------------------------------------------------------------------------------
# Saved images: size and dpi
# ----------------------------------------------------------------------------------------------


def test_plot_cli_size_and_dpi_set_the_png(board, tmp_path):
    csv = tmp_path / "r.csv"
    write_atomic(board.to_frame(), csv)
    out = tmp_path / "bands.png"
    rplot.plot_table(csv, out, size=(8, 4.5), dpi=120, title=LONG)
    assert _png_size(out) == (960, 540)
    assert main(["plot", str(csv), "-o", str(out), "--size", "6,3", "--dpi", "50"]) == 0
    assert _png_size(out) == (300, 150)
    assert main(["plot", str(csv), "-o", str(out)]) == 0  # default: fitted to the rows, 100 dpi
    w, h = _png_size(out)
    assert w >= 600 and h >= 100 * (0.22 * len(board.models))


def test_cli_bad_size_names_the_flag(board, tmp_path, capsys):
    csv = tmp_path / "r.csv"
    write_atomic(board.to_frame(), csv)
    out = tmp_path / "bands.png"
    assert main(["plot", str(csv), "-o", str(out), "--size", "wide"]) != 0
    assert "`--size`" in capsys.readouterr().err
    assert not out.exists()


# ----------------------------------------------------------------------------------------------
# Style control
# ----------------------------------------------------------------------------------------------


def test_style_side_by_side_same_rows(fits):
    controlled, raw = fits
    left, right = rplot.plot_style(controlled, raw, title=LONG)
    assert left.get_title() == "raw"
    assert right.get_title() == "style-controlled (tokens, headers)"
    rows = _ytick_models(left)
    order = controlled.to_frame()["model"].tolist()
    assert sorted(rows, key=rows.get, reverse=True) == order  # controlled order, best on top
    assert not any(t.get_text() for t in right.get_yticklabels())  # names once, on the left
    assert left.get_ylim() == right.get_ylim() and left.get_xlim() == right.get_xlim()
    # each panel's points are its own fit's Elo in those rows
    for ax, fit in ((left, raw), (right, controlled)):
        elo = fit.to_frame().set_index("model")["elo"]
        points = next(c for c in ax.collections if c.get_gid() == "ratings-points")
        anchor = next(a for a in ax.lines if a.get_gid() == "ratings-anchor")
        drawn = {float(y): float(x) for x, y in points.get_offsets()}
        drawn[float(anchor.get_ydata()[0])] = float(anchor.get_xdata()[0])
        for model, y in rows.items():
            assert drawn[y] == pytest.approx(elo[model])
    # rank change: raw rank minus controlled rank, from the two fits' own tables
    (side,) = [a for a in right.child_axes if a.get_gid() == "style-rank-change"]
    raw_rank = raw.to_frame().set_index("model")["rank"]
    ctl_rank = controlled.to_frame().set_index("model")["rank"]
    by_y = {y: m for m, y in rows.items()}
    moved = 0
    for t, y in zip(side.get_yticklabels(), side.get_yticks(), strict=True):
        change = int(raw_rank[by_y[y]] - ctl_rank[by_y[y]])
        moved += change != 0
        assert t.get_text() == ("0" if change == 0 else f"{change:+d}")
    assert moved > 0  # the planted length bias reorders the board
    fig = left.figure
    renderer = _drawn(fig)
    assert _inside(fig._suptitle.get_window_extent(renderer), fig.bbox)
    (legend,) = fig.legends
    for ax in (left, right):
        assert not _overlap(legend.get_window_extent(renderer), ax.get_window_extent(renderer))


def test_style_side_by_side_needs_the_same_models(fits):
    controlled, raw = fits
    fewer = raw.to_frame().iloc[:-1]
    with pytest.raises(ValueError, match="must rate the same models"):
        rplot.plot_style(controlled, fewer)


def test_audit_gains_the_style_coefficients(fits, audit):
    controlled, _ = fits
    ax = rplot.plot_audit(audit, style=controlled)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-2:] == ["style: tokens", "style: headers"]
    assert len(labels) == len(audit.judges) + 2
    points = next(a for a in ax.lines if a.get_gid() == "style-points")
    bars = next(c for c in ax.collections if c.get_gid() == "style-bands")
    coef = controlled.style.set_index("feature")
    np.testing.assert_allclose(points.get_xdata(), coef["coef"] * ELO_SCALE)
    ends = np.array([seg[:, 0] for seg in bars.get_segments()])
    np.testing.assert_allclose(ends[:, 0], coef["lower"] * ELO_SCALE)
    np.testing.assert_allclose(ends[:, 1], coef["upper"] * ELO_SCALE)
    # the coefficients sit below the judges, in their own rows
    ticks = dict(zip(labels, ax.get_yticks(), strict=True))
    assert max(ticks["style: tokens"], ticks["style: headers"]) < min(
        v for k, v in ticks.items() if not k.startswith("style:"))
    assert "style coefficient (per RMS of x)" in [t.get_text() for t in ax.get_legend().texts]
    alone = rplot.plot_audit(None, style=controlled.style, unit="log-odds")
    np.testing.assert_allclose(
        next(a for a in alone.lines if a.get_gid() == "style-points").get_xdata(), coef["coef"])
    with pytest.raises(ValueError, match="Nothing to draw"):
        rplot.plot_audit(None)
    with pytest.raises(ValueError, match="no style coefficients"):
        rplot.plot_audit(audit, style=fits[1])


def test_cli_style_plots(fits, audit, tmp_path):
    controlled, raw = fits
    paths = {k: tmp_path / f"{k}.csv" for k in ("styled", "raw", "coefs", "audit")}
    write_atomic(controlled.to_frame(), paths["styled"])
    write_atomic(raw.to_frame(), paths["raw"])
    write_atomic(controlled.style, paths["coefs"])
    write_atomic(audit.judges, paths["audit"])
    out = tmp_path / "style.png"
    assert main(["plot", str(paths["styled"]), "--raw", str(paths["raw"]), "-o", str(out),
                 "--size", "10,4", "--dpi", "80"]) == 0  # fmt: skip
    assert _png_size(out) == (800, 320)
    assert main(["plot", str(paths["audit"]), "--style-table", str(paths["coefs"]),
                 "-o", str(tmp_path / "audit.png")]) == 0  # fmt: skip
    assert main(["plot", str(paths["coefs"]), "-o", str(tmp_path / "coefs.svg")]) == 0
    assert main(["plot", str(paths["styled"]), "--style-table", str(paths["coefs"]),
                 "-o", str(tmp_path / "x.png")]) != 0  # fmt: skip
    assert not (tmp_path / "x.png").exists()


def test_long_names_are_shortened_but_stay_distinct():
    names = [f"Vendor {k % 3} extremely-long-model-name-{k:03d} instruct preview 2026-05-01 "
             "(thinking, max)" for k in range(12)]  # fmt: skip
    frame = pd.DataFrame({"model": names, "elo": np.linspace(1200, 900, 12), "se": 20.0})
    frame["lower"], frame["upper"] = frame["elo"] - 40, frame["elo"] + 40
    ax = rplot.plot_ratings(frame)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(set(labels)) == len(names)  # still tells every model apart
    assert all("\u2026" in t and len(t) < len(n) for t, n in zip(labels, names, strict=True))
    for t, n in zip(labels, names, strict=True):  # the start and the end of each name are kept
        head, tail = t.split("\u2026")
        assert n.startswith(head) and n.endswith(tail)
    assert ax.figure.get_figwidth() < 12.0
    short = pd.DataFrame({"model": ["a", "b"], "elo": [1.0, 0.0], "lower": [0.0, -1.0],
                          "upper": [2.0, 1.0]})  # fmt: skip
    assert [t.get_text() for t in rplot.plot_ratings(short).get_yticklabels()] == ["a", "b"]


def test_audit_flags_read_back_from_csv(audit, tmp_path):
    """A saved audit's flags come back as text; "False" must stay an unflagged (hollow) point."""
    path = tmp_path / "audit.csv"
    write_atomic(audit.judges, path)
    saved = rplot.read_ratings_table(path)
    for frame in (audit.judges, saved):
        ax = rplot.plot_audit(frame)
        hollow = next(a for a in ax.lines if a.get_gid() == "audit-points-position_bias")
        filled = next(a for a in ax.lines if a.get_gid() == "audit-flagged-position_bias")
        flags = audit.judges["position_flagged"].to_numpy(dtype=bool)
        assert len(filled.get_xdata()) == flags.sum()
        assert len(hollow.get_xdata()) == (~flags).sum()
