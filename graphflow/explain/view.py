"""Static drawings of explanations: each target's top-k subgraph as inline SVG.

What ``graphflow report`` shows for a folder written by ``graphflow explain`` (or a run
folder with one under ``explain/``): for every explained node or graph, the edges of its
top-k subgraph (``edges.{parquet,csv}`` rows with ``top_k``), each a line whose width grows
with its importance (``0.5 + 5.5 · |importance| / max |importance|`` of that target's drawn
edges; a negative attribution is drawn red), and the edge's endpoints as labelled circles.

Layout (deterministic, no random state): a node target sits at the centre and the other
nodes on a circle, in order of their most important edge (then id); a graph target's nodes,
and a pair's (``target`` ``"src->dst"``, both endpoints in orange), are all on the circle. Both directions of an edge are one line, with the larger importance.
No JavaScript, no network: plain SVG elements with a ``<title>`` tooltip per edge and node.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

from graphflow.errors import ConfigError

EXPLAIN_RECORD = "explain.json"
SIZE = 320
"""Width and height of one drawing, in pixels."""
MAX_TARGETS = 200
"""At most this many targets are drawn (the first in the edges file's order)."""


def find_explanation(folder: Path) -> Path | None:
    """The explanation folder of ``folder``: itself when it holds ``explain.json``, else its
    ``explain/`` subfolder when that does (``graphflow explain``'s default ``--out``)."""
    for candidate in (folder, folder / "explain"):
        if (candidate / EXPLAIN_RECORD).is_file():
            return candidate
    return None


def read_top_edges(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``explain.json`` and the rows of the top-k edges (``target, src, dst, importance``)."""
    try:
        summary = json.loads((folder / EXPLAIN_RECORD).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{folder / EXPLAIN_RECORD}: unreadable ({type(exc).__name__}); "
                          f"run graphflow explain again") from None
    parquet, csv = folder / "edges.parquet", folder / "edges.csv"
    columns = ["target", "src", "dst", "importance", "top_k"]
    try:
        if parquet.is_file():
            import pyarrow.parquet as pq

            table = pq.read_table(parquet, columns=columns)
        elif csv.is_file():
            import pyarrow.csv as pcsv

            table = pcsv.read_csv(csv).select(columns)
        else:
            raise ConfigError(f"{folder}: {EXPLAIN_RECORD} but no edges.parquet or edges.csv; "
                              f"run graphflow explain again")
    except (OSError, KeyError, ValueError) as exc:  # pyarrow's errors derive from these
        raise ConfigError(f"{folder}: the edges file is unreadable or lacks the columns "
                          f"{', '.join(columns)} ({type(exc).__name__}); run graphflow "
                          f"explain again") from None
    import pyarrow.compute as pc

    table = table.filter(pc.equal(table["top_k"], True)).drop(["top_k"])
    return summary, table.to_pylist()


def _circle(count: int, radius: float) -> list[tuple[float, float]]:
    c = SIZE / 2
    return [(c + radius * math.cos(2 * math.pi * i / count - math.pi / 2),
             c + radius * math.sin(2 * math.pi * i / count - math.pi / 2))
            for i in range(count)]


def target_svg(target: Any, rows: list[dict[str, Any]], level: str) -> str:
    """One target's top-k subgraph as an ``<svg>`` element (rows: its top-k edges)."""
    best: dict[tuple[str, str], float] = {}  # both directions of an edge: one line
    for r in rows:
        u, v = str(r["src"]), str(r["dst"])
        key = (u, v) if u <= v else (v, u)
        imp = float(r["importance"])
        if key not in best or abs(imp) > abs(best[key]):
            best[key] = imp
    edges = sorted(best.items(), key=lambda kv: (-abs(kv[1]), kv[0]))
    centre = str(target) if level == "node" else None
    order: list[str] = []
    for (u, v), _ in edges:
        order.extend(n for n in (u, v) if n not in order and n != centre)
    pos: dict[str, tuple[float, float]] = dict(zip(order, _circle(len(order), SIZE * 0.38)))
    if centre is not None:
        pos[centre] = (SIZE / 2, SIZE / 2)
    top = max((abs(w) for _, w in edges), default=0.0) or 1.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="explanation" '
             f'data-target="{html.escape(str(target))}" width="{SIZE}" height="{SIZE}" '
             f'viewBox="0 0 {SIZE} {SIZE}">']
    for (u, v), w in edges:
        (x1, y1), (x2, y2) = pos[u], pos[v]
        width = 0.5 + 5.5 * abs(w) / top
        colour = "#c0392b" if w < 0 else "#2c3e50"
        parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                     f'stroke="{colour}" stroke-width="{width:.3f}" stroke-linecap="round" '
                     f'data-importance="{w:.6g}"><title>{html.escape(u)} – {html.escape(v)}: '
                     f'{w:.4g}</title></line>')
    marked = {centre} if centre is not None else \
        set(str(target).split("->")) if level == "link" else set()  # a pair's endpoints
    for node, (x, y) in pos.items():
        fill = "#e67e22" if node in marked else "#ecf0f1"
        label = html.escape(node if len(node) <= 8 else node[:7] + "…")
        parts.append(f'<g><title>{html.escape(node)}</title><circle cx="{x:.1f}" cy="{y:.1f}" '
                     f'r="11" fill="{fill}" stroke="#555"/><text x="{x:.1f}" y="{y + 3:.1f}" '
                     f'font-size="8" text-anchor="middle">{label}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def explanation_html(folder: Path) -> tuple[dict[str, Any], str]:
    """The explanation in ``folder``: its summary (``explain.json``'s method, level, targets,
    top-k and fidelity) and the HTML of its drawings."""
    summary, rows = read_top_edges(folder)
    level = str(summary.get("level", "node"))
    by_target: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:  # grouped in file order
        by_target.setdefault(r["target"], []).append(r)
    shown = list(by_target)[:MAX_TARGETS]
    figures = [f'<figure><figcaption>{level} {html.escape(str(t))}</figcaption>'
               f'{target_svg(t, by_target[t], level)}</figure>' for t in shown]
    note = ""
    if len(by_target) > len(shown):
        note = (f"<p>The first {len(shown)} of {len(by_target)} targets are drawn.</p>")
    info = {k: summary.get(k) for k in ("method", "level", "targets", "top_k",
                                        "fidelity_plus", "fidelity_minus",
                                        "characterization")}
    centre = {"node": "; the explained node in orange",
              "link": "; the pair's two nodes in orange"}.get(level, "")
    caption = (f"<p>Each drawing is a {level}'s {summary.get('top_k')} most important edges; "
               f"line width by importance{centre}.</p>")
    return (info, caption + note
            + '<div class="explanations">' + "".join(figures) + "</div>")
