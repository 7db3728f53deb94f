"""Tests of ``ratings.plot.bands``: artists, positions, colours and labels (never pixels)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import itertools
import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from helpers import simulate_verdicts
from matplotlib.colors import to_rgba

import ratings
from ratings.io import write_atomic
from ratings.plot import bands as rplot

NAMES = ["Alpha 1", "Beta (large)", "Gamma-2", "Delta mini", "Epsilon", "Zeta 70B"]
STRENGTHS = [0.0, 0.6, -0.4, 1.1, -0.9, 0.3]
ANCHOR = "Alpha 1"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _board(seed: int, strengths=STRENGTHS, names=NAMES, n: int = 700) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return simulate_verdicts(rng, strengths, n, 50, tie_fraction=0.1, task_sd=0.3, names=names,
                             tie_ring=True)  # fmt: skip


@pytest.fixture(scope="module")
def fitted() -> ratings.Ratings:
    return ratings.fit(_board(1), anchor=f"{ANCHOR}=1000")


@pytest.fixture(scope="module")
def scoped() -> dict[str, ratings.Ratings]:
    log = pd.concat([_board(2).assign(scope="analytical"), _board(3).assign(scope="presentation")],
                    ignore_index=True)  # fmt: skip
    return {s: ratings.fit(log, scope=s, anchor=f"{ANCHOR}=1000")
            for s in ("analytical", "presentation")}  # fmt: skip


def _by_gid(ax, gid):
    found = [a for a in itertools.chain(ax.collections, ax.lines, ax.texts) if a.get_gid() == gid]
    assert len(found) == 1, f"expected one artist with gid {gid!r}, found {len(found)}"
    return found[0]


def _ytick_positions(ax) -> dict[str, float]:
    return {t.get_text(): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks(), strict=True)}


def _legend_texts(ax) -> list[str]:
    legend = ax.get_legend()
    return [] if legend is None else [t.get_text() for t in legend.get_texts()]


# ----------------------------------------------------------------------------------------------
# plot_ratings
# ----------------------------------------------------------------------------------------------


def test_one_band_per_model_ordered_by_elo(fitted):
    table = fitted.to_frame().set_index("model")
    ax = rplot.plot_ratings(fitted)
    segments = _by_gid(ax, "ratings-bands").get_segments()
    assert len(segments) == len(fitted.models)

    ypos = _ytick_positions(ax)
    assert set(ypos) == set(NAMES)
    top_down = sorted(ypos, key=ypos.get, reverse=True)
    assert top_down == table.sort_values("elo", ascending=False).index.tolist()
    for seg in segments:  # each band spans its model's interval, at its model's row
        (x0, y0), (x1, y1) = seg
        assert y0 == y1
        model = next(m for m, y in ypos.items() if y == y0)
        assert (x0, x1) == pytest.approx((table.loc[model, "lower"], table.loc[model, "upper"]))
    assert ax.get_xlabel() == "Elo (95% CI)"


def test_anchor_marker_at_anchor_row(fitted):
    ax = rplot.plot_ratings(fitted)
    marker = _by_gid(ax, "ratings-anchor")
    assert marker.get_marker() == "D"
    assert list(marker.get_ydata()) == [_ytick_positions(ax)[ANCHOR]]
    assert marker.get_xdata()[0] == pytest.approx(1000.0)
    assert f"{ANCHOR} (anchor)" in _legend_texts(ax)
    points = _by_gid(ax, "ratings-points").get_offsets()
    assert len(points) == len(NAMES) - 1  # the anchor is the diamond, not a dot


def test_frame_input_finds_anchor_and_level(fitted):
    frame = fitted.to_frame()
    ax = rplot.plot_ratings(frame)
    assert _by_gid(ax, "ratings-anchor").get_ydata()[0] == _ytick_positions(ax)[ANCHOR]
    assert ax.get_xlabel() == "Elo (95% CI)"
    # a table's normal intervals are redrawn at another level, like the fit's
    ax90 = rplot.plot_ratings(frame, level=0.9)
    ref = fitted.to_frame(0.9).set_index("model")
    ypos = _ytick_positions(ax90)
    for (x0, y0), (x1, _) in _by_gid(ax90, "ratings-bands").get_segments():
        model = next(m for m, y in ypos.items() if y == y0)
        assert (x0, x1) == pytest.approx((ref.loc[model, "lower"], ref.loc[model, "upper"]))
    assert ax90.get_xlabel() == "Elo (90% CI)"
    assert rplot.plot_ratings(fitted, level=0.8).get_xlabel() == "Elo (80% CI)"


def test_explicit_anchor_and_centred_fit():
    centred = ratings.fit(_board(4))
    ax = rplot.plot_ratings(centred)
    assert not [a for a in ax.lines if a.get_gid() == "ratings-anchor"]
    assert ax.get_legend() is None
    ax = rplot.plot_ratings(centred, anchor="Gamma-2")
    assert _by_gid(ax, "ratings-anchor").get_ydata()[0] == _ytick_positions(ax)["Gamma-2"]
    with pytest.raises(ValueError, match=r"`anchor` names model\(s\) not in the ratings"):
        rplot.plot_ratings(centred, anchor="Gamma 2")


def test_highlight_colours(fitted):
    chosen = ["Beta (large)", "Epsilon"]
    ax = rplot.plot_ratings(fitted, highlight=chosen)
    model_at = {y: m for m, y in _ytick_positions(ax).items()}
    bands = _by_gid(ax, "ratings-bands")
    colors = bands.get_colors()
    assert len(colors) == len(NAMES)
    for seg, color in zip(bands.get_segments(), colors, strict=True):
        want = "C3" if model_at[seg[0][1]] in chosen else "C0"
        assert tuple(color[:3]) == pytest.approx(to_rgba(want)[:3])
    for label in ax.get_yticklabels():
        is_chosen = to_rgba(label.get_color()) == to_rgba("C3")
        assert is_chosen == (label.get_text() in chosen)
    assert "highlighted" in _legend_texts(ax)
    with pytest.raises(ValueError, match=r"Did you mean \['Epsilon'\]"):
        rplot.plot_ratings(fitted, highlight="Epsilonn")


@pytest.fixture(scope="module")
def many() -> ratings.Ratings:
    """150 models with long names."""
    m = 150
    rng = np.random.default_rng(5)
    names = [f"Vendor {k % 9} model {k:03d} (preview)" for k in range(m)]
    board = simulate_verdicts(rng, rng.normal(0.0, 1.0, m), 4000, 200, tie_fraction=0.1,
                              names=names, tie_ring=True)  # fmt: skip
    return ratings.fit(board, anchor=f"{names[0]}=1000")


def _assert_labels_apart(ax) -> None:
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.get_yticklabels() if t.get_text()]
    for a, b in itertools.combinations(boxes, 2):
        disjoint = a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0
        assert disjoint, f"tick labels overlap: {a} and {b}"
    page = fig.bbox
    assert all(b.x0 >= page.x0 and b.y0 >= page.y0 and b.y1 <= page.y1 for b in boxes)


def test_many_models_tick_labels_do_not_overlap(many):
    m = len(many.models)
    ax = rplot.plot_ratings(many)
    assert ax.figure.get_figheight() >= 0.22 * m
    assert len(_by_gid(ax, "ratings-bands").get_segments()) == m
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == many.to_frame()["model"].tolist()  # every model labelled
    _assert_labels_apart(ax)


@pytest.mark.parametrize("height", [4.8, 14.0])
def test_many_models_in_a_small_given_axes(many, height):
    fig, ax = plt.subplots(figsize=(7.0, height), layout="constrained")
    rplot.plot_ratings(many, ax=ax)
    assert fig.get_figheight() == height  # a caller's figure is never resized
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == many.to_frame()["model"].iloc[0]
    _assert_labels_apart(ax)  # labels shrink, then only every k-th row is labelled


def test_top_k_shows_best_and_notes_rest(fitted):
    ax = rplot.plot_ratings(fitted, top=3)
    best = fitted.to_frame()["model"].tolist()
    assert len(_by_gid(ax, "ratings-bands").get_segments()) == 3
    assert [t.get_text() for t in ax.get_yticklabels()] == best[:3]
    note = _by_gid(ax, "ratings-note").get_text()
    assert note.startswith("+ 3 more models not shown")
    assert len(_by_gid(rplot.plot_ratings(fitted, top=50), "ratings-bands").get_segments()) == 6
    with pytest.raises(ValueError, match="`top` must be a positive integer"):
        rplot.plot_ratings(fitted, top=0)


def test_multi_scope_table_points_to_plot_scopes(scoped):
    both = pd.concat([r.to_frame() for r in scoped.values()], ignore_index=True)
    with pytest.raises(ValueError, match="plot_scopes"):
        rplot.plot_ratings(both)


def test_wrong_input_type_is_a_type_error():
    with pytest.raises(TypeError, match="got dict"):
        rplot.plot_ratings({"a": 1.0})
    with pytest.raises(ValueError, match=r"Column\(s\) \['lower', 'upper'\] not found"):
        rplot.plot_ratings(pd.DataFrame({"model": ["a"], "elo": [1.0]}))


# ----------------------------------------------------------------------------------------------
# plot_scopes
# ----------------------------------------------------------------------------------------------


def test_plot_scopes_legend_and_order(scoped, fitted):
    ax = rplot.plot_scopes(scoped)
    assert _legend_texts(ax) == ["analytical", "presentation"]
    mean = pd.concat([r.elo for r in scoped.values()], axis=1).mean(axis=1)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == mean.sort_values(ascending=False).index.tolist()
    for scope, r in scoped.items():  # every scope draws one interval per model, in its colour
        assert len(_by_gid(ax, f"scope-bands:{scope}").get_segments()) == len(r.models)

    ax = rplot.plot_scopes(scoped, combined=fitted)
    assert _legend_texts(ax) == ["combined", "analytical", "presentation"]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == fitted.to_frame()["model"].tolist()
    combined = _by_gid(ax, "scope-points:combined")
    assert to_rgba(combined.get_color()) == to_rgba("black")


def test_plot_scopes_accepts_a_table_with_scope_column(scoped):
    both = pd.concat([r.to_frame() for r in scoped.values()], ignore_index=True)
    ax = rplot.plot_scopes(both, top=4)
    assert _legend_texts(ax) == ["analytical", "presentation"]
    assert len(ax.get_yticklabels()) == 4
    assert _by_gid(ax, "ratings-note").get_text() == "+ 2 more models not shown"
    with pytest.raises(ValueError, match="needs a `scope` column"):
        rplot.plot_scopes(both.drop(columns="scope"))


# ----------------------------------------------------------------------------------------------
# plot_win_matrix
# ----------------------------------------------------------------------------------------------


def test_win_matrix_matches_elo_differences(fitted):
    frame = fitted.to_frame().sort_values("elo", ascending=False)
    elo = frame["elo"].to_numpy()
    expected = 1.0 / (1.0 + 10.0 ** (-(elo[:, None] - elo[None, :]) / 400.0))
    ax = rplot.plot_win_matrix(fitted)
    values = np.asarray(ax.images[0].get_array())
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    assert [t.get_text() for t in ax.get_yticklabels()] == frame["model"].tolist()
    assert [t.get_text() for t in ax.get_xticklabels()] == frame["model"].tolist()
    assert len(ax.texts) == len(NAMES) ** 2  # annotated: at most 15 models
    assert len(ax.figure.axes) == 2  # the colourbar
    # a P(row beats column) cell agrees with the fit's own win probability
    i, j = 0, 3
    p = fitted.win_probability(frame["model"].iloc[i], frame["model"].iloc[j])["probability"]
    assert values[i, j] == pytest.approx(p, rel=1e-12)


def test_win_matrix_subset_and_no_annotation(fitted):
    subset = ["Epsilon", "Beta (large)", "Alpha 1"]
    ax = rplot.plot_win_matrix(fitted, models=subset, annotate=False)
    assert np.asarray(ax.images[0].get_array()).shape == (3, 3)
    order = fitted.elo[subset].sort_values(ascending=False).index.tolist()
    assert [t.get_text() for t in ax.get_yticklabels()] == order
    assert not ax.texts


# ----------------------------------------------------------------------------------------------
# plot_judges and plot_convergence
# ----------------------------------------------------------------------------------------------


@pytest.fixture
def judges() -> pd.DataFrame:
    eta = np.array([0.93, 0.71, 0.86])
    se = np.array([0.02, 0.06, 0.03])
    return pd.DataFrame({"judge": ["judge-a", "judge-b", "judge-c"], "eta": eta, "se": se,
                         "lower": eta - 1.959963984540054 * se,
                         "upper": eta + 1.959963984540054 * se,
                         "n": [400, 380, 410]})  # fmt: skip


@pytest.mark.parametrize("as_index", [False, True])
def test_plot_judges_reference_lines_and_order(judges, as_index):
    ax = rplot.plot_judges(judges.set_index("judge") if as_index else judges)
    refs = {a.get_gid(): a for a in ax.lines if str(a.get_gid()).startswith("judge-ref")}
    assert set(refs) == {"judge-ref-0.5", "judge-ref-1.0"}
    assert list(refs["judge-ref-0.5"].get_xdata()) == [0.5, 0.5]
    assert list(refs["judge-ref-1.0"].get_xdata()) == [1.0, 1.0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["judge-a (n=400)", "judge-c (n=410)", "judge-b (n=380)"]
    assert len(_by_gid(ax, "judge-bands").get_segments()) == 3
    assert ax.get_xlabel() == "judge quality η (95% CI)"


def test_plot_judges_needs_eta(judges):
    with pytest.raises(ValueError, match=r"Column\(s\) \['eta'\] not found"):
        rplot.plot_judges(judges.drop(columns="eta"))


def test_plot_judges_rejects_a_plain_bt_fit(fitted):
    with pytest.raises(ValueError, match="no judge qualities"):
        rplot.plot_judges(fitted)


@pytest.fixture
def history() -> pd.DataFrame:
    rows = [(s, rep, n, 250.0 / np.sqrt(n) * (0.8 if s == "active" else 1.0) + 0.1 * rep)
            for s in ("active", "uniform") for rep in range(3) for n in range(100, 1100, 100)]
    return pd.DataFrame(rows, columns=["strategy", "rep", "n_verdicts", "mean_halfwidth"])


def test_plot_convergence_one_line_per_hue_and_target(history):
    ax = rplot.plot_convergence(history, hue="strategy", target=9.0)
    lines = {a.get_gid(): a for a in ax.lines}
    assert set(lines) == {"convergence:active", "convergence:uniform", "convergence-target"}
    active = lines["convergence:active"]
    assert list(active.get_xdata()) == list(range(100, 1100, 100))
    want = history[history["strategy"] == "active"].groupby("n_verdicts")["mean_halfwidth"].mean()
    np.testing.assert_allclose(active.get_ydata(), want.to_numpy())
    assert list(lines["convergence-target"].get_ydata()) == [9.0, 9.0]
    assert _legend_texts(ax) == ["active", "uniform", "target (9)"]
    assert ax.get_xlabel() == "verdicts collected"


def test_plot_convergence_without_hue(history):
    ax = rplot.plot_convergence(history[history["strategy"] == "uniform"])
    assert len(ax.lines) == 1
    with pytest.raises(ValueError, match=r"Column\(s\) \['halfwidth'\] not found"):
        rplot.plot_convergence(history, y="halfwidth")


# ----------------------------------------------------------------------------------------------
# Axes contract, module hygiene
# ----------------------------------------------------------------------------------------------


def test_every_function_draws_into_the_given_axes(fitted, scoped, judges, history):
    calls = [
        lambda ax: rplot.plot_ratings(fitted, ax=ax),
        lambda ax: rplot.plot_ratings(fitted.to_frame(), ax, top=2),
        lambda ax: rplot.plot_scopes(scoped, ax=ax, combined=fitted),
        lambda ax: rplot.plot_win_matrix(fitted, ax=ax),
        lambda ax: rplot.plot_judges(judges, ax=ax),
        lambda ax: rplot.plot_convergence(history, ax=ax, hue="strategy"),
    ]
    for call in calls:
        plt.close("all")
        fig, ax = plt.subplots()
        assert call(ax) is ax
        assert plt.get_fignums() == [fig.number]


def test_new_figure_when_no_axes_and_rcparams_untouched(fitted):
    before = dict(matplotlib.rcParams)
    ax = rplot.plot_ratings(fitted)
    assert plt.get_fignums() == [ax.figure.number]
    assert dict(matplotlib.rcParams) == before


def test_not_imported_by_the_package():
    code = ("import sys, ratings; "
            "assert 'ratings.plot.bands' not in sys.modules, 'ratings.plot.bands'; "
            "assert 'matplotlib' not in sys.modules, 'matplotlib'")  # fmt: skip
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------------

MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-"}


@pytest.mark.parametrize("ext", [".png", ".svg", ".pdf", ".PNG"])
def test_save_figure_formats(fitted, tmp_path, ext):
    ax = rplot.plot_ratings(fitted)
    path = tmp_path / f"bands{ext}"
    rplot.save_figure(ax, path)
    data = path.read_bytes()
    if ext.lower() == ".svg":
        assert b"<svg" in data[:1000]
    else:
        assert data.startswith(MAGIC[ext.lower()])
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_save_figure_rejects_other_extensions(fitted, tmp_path):
    fig = rplot.plot_ratings(fitted).figure
    with pytest.raises(ValueError, match=r"one of \.png, \.svg, \.pdf; got '\.gif'"):
        rplot.save_figure(fig, tmp_path / "bands.gif")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        rplot.save_figure(fig, tmp_path / "missing" / "bands.png")
    assert not list(tmp_path.iterdir())


def test_save_figure_failure_keeps_old_file_and_removes_temp(fitted, tmp_path, monkeypatch):
    fig = rplot.plot_ratings(fitted).figure
    path = tmp_path / "bands.png"
    path.write_bytes(b"old")

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(fig, "savefig", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        rplot.save_figure(fig, path)
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["bands.png"]


def test_plot_cli_from_fitted_csv(fitted, tmp_path, monkeypatch):
    csv = tmp_path / "r.csv"
    write_atomic(fitted.to_frame(), csv)  # what `ratings fit --out r.csv` writes
    drawn = []
    save = rplot.save_figure
    monkeypatch.setattr(rplot, "save_figure", lambda ax, path: (drawn.append(ax), save(ax, path)))
    out = tmp_path / "bands.png"
    rplot.plot_table(str(csv), str(out), top=4, highlight=["Epsilon"], title="bands")
    assert out.read_bytes().startswith(MAGIC[".png"])
    (ax,) = drawn
    assert ax.get_title() == "bands"
    assert len(_by_gid(ax, "ratings-bands").get_segments()) == 4
    assert plt.get_fignums() == []  # the CLI figure is not left in pyplot


def test_plot_cli_overlays_scopes(scoped, tmp_path, monkeypatch):
    csv = tmp_path / "scopes.csv"
    write_atomic(pd.concat([r.to_frame() for r in scoped.values()], ignore_index=True), csv)
    drawn = []
    save = rplot.save_figure
    monkeypatch.setattr(rplot, "save_figure", lambda ax, path: (drawn.append(ax), save(ax, path)))
    out = tmp_path / "scopes.svg"
    rplot.plot_table(csv, out)
    assert b"<svg" in out.read_bytes()[:1000]
    assert _legend_texts(drawn[0]) == ["analytical", "presentation"]


def test_plot_cli_refuses_to_overwrite_input(fitted, tmp_path):
    csv = tmp_path / "r.csv"
    write_atomic(fitted.to_frame(), csv)
    before = csv.read_bytes()
    with pytest.raises(ValueError, match="must be one of"):
        rplot.plot_table(csv, csv)  # .csv is not an image format either
    png = tmp_path / "r.png"
    png.write_bytes(before)
    with pytest.raises(ValueError, match="it is the input file"):
        rplot.plot_table(png, tmp_path / "." / "r.png")
    assert png.read_bytes() == before and csv.read_bytes() == before


def test_rank_intervals_label_the_rows_on_the_right(fitted):
    ax = rplot.plot_ratings(fitted)
    (side,) = [a for a in ax.child_axes if a.get_gid() == "ratings-ranks"]
    table = fitted.to_frame().set_index("model")
    labels = [t.get_text() for t in side.get_yticklabels()]
    ypos = _ytick_positions(ax)
    for label, y in zip(labels, side.get_yticks(), strict=True):
        model = next(m for m, yy in ypos.items() if yy == y)
        lo, hi = table.loc[model, ["rank_lower", "rank_upper"]]
        assert label == (f"{lo}" if lo == hi else f"{lo}\u2013{hi}")
    assert "simultaneous" in side.get_ylabel()
    assert not rplot.plot_ratings(fitted, ranks=False).child_axes
    # a table redrawn at another level has no rank intervals at that level: none shown
    assert not rplot.plot_ratings(fitted.to_frame(), level=0.8).child_axes
    assert rplot.plot_ratings(fitted.to_frame()).child_axes
