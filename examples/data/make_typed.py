"""Write the small typed graph that ``examples/typed_tables.toml`` reads.

    python examples/data/make_typed.py

Three node types and four relations, in ``examples/data/typed/``:

* ``papers.csv``: ``id`` (``p000``...), ``f0``..``f5`` (a noisy topic signature), ``topic``
  (the label: databases, learning or theory) and ``split`` (train / val / test);
* ``authors.parquet``: ``id`` (``a00``...), ``feat`` (4 floats: the author's topic mix);
* venues have no table: their ids (``v0``...) come from the edges;
* ``writes.csv`` (author -> paper), ``cites.csv`` (paper -> paper, mostly within a topic),
  ``published_in.csv`` (paper -> venue, a venue per topic plus a general one) and
  ``coauthor.parquet`` (author -> author, with a ``weight``: papers written together).

Seeded NumPy draws, so the files are the same on every machine; a few kilobytes each.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

OUT = Path(__file__).resolve().parent / "typed"
TOPICS = ["databases", "learning", "theory"]
PAPERS, AUTHORS, VENUES = 120, 30, 4


def main() -> None:
    rng = np.random.default_rng(7)
    OUT.mkdir(exist_ok=True)
    topic = rng.integers(0, len(TOPICS), PAPERS)
    signature = rng.normal(0.0, 1.0, (len(TOPICS), 6))
    feat = signature[topic] * 0.6 + rng.normal(0.0, 1.0, (PAPERS, 6))
    split = np.array(["train"] * 60 + ["val"] * 30 + ["test"] * 30)[rng.permutation(PAPERS)]
    papers = {"id": [f"p{i:03d}" for i in range(PAPERS)]}
    papers.update({f"f{j}": np.round(feat[:, j], 3) for j in range(6)})
    papers.update(topic=[TOPICS[t] for t in topic], split=split)
    pacsv.write_csv(pa.table(papers), OUT / "papers.csv")

    author_topic = rng.integers(0, len(TOPICS), AUTHORS)
    mix = np.eye(len(TOPICS) + 1)[author_topic] * 0.7 + rng.uniform(0, 0.3, (AUTHORS, 4))
    pq.write_table(pa.table({"id": [f"a{i:02d}" for i in range(AUTHORS)],
                             "feat": pa.FixedSizeListArray.from_arrays(
                                 pa.array(mix.astype(np.float32).reshape(-1)), 4)}),
                   OUT / "authors.parquet")

    # each paper: two authors, mostly of its topic
    src, dst = [], []
    for p in range(PAPERS):  # a generator script, not a hot path
        same = np.flatnonzero(author_topic == topic[p])
        pool = same if rng.random() < 0.85 else np.arange(AUTHORS)
        for a in rng.choice(pool, 2, replace=False):
            src.append(f"a{a:02d}")
            dst.append(f"p{p:03d}")
    pacsv.write_csv(pa.table({"author": src, "paper": dst}), OUT / "writes.csv")

    cites_s, cites_d = [], []
    for p in range(PAPERS):
        same = np.flatnonzero(topic == topic[p])
        pool = same if rng.random() < 0.8 else np.arange(PAPERS)
        for q in rng.choice(pool, 2, replace=False):
            if q != p:
                cites_s.append(f"p{p:03d}")
                cites_d.append(f"p{q:03d}")
    pacsv.write_csv(pa.table({"src": cites_s, "dst": cites_d}), OUT / "cites.csv")

    venue = np.where(rng.random(PAPERS) < 0.75, topic, len(TOPICS))
    pacsv.write_csv(pa.table({"src": [f"p{i:03d}" for i in range(PAPERS)],
                              "dst": [f"v{v}" for v in venue]}), OUT / "published_in.csv")

    pairs: dict[tuple[str, str], int] = {}
    written = np.array(dst).reshape(PAPERS, 2)
    by = np.array(src).reshape(PAPERS, 2)
    for a, b in by:
        key = (min(a, b), max(a, b))
        pairs[key] = pairs.get(key, 0) + 1
    del written
    keys = sorted(pairs)
    pq.write_table(pa.table({"src": [k[0] for k in keys], "dst": [k[1] for k in keys],
                             "weight": pa.array([float(pairs[k]) for k in keys],
                                                pa.float32())}), OUT / "coauthor.parquet")


if __name__ == "__main__":
    main()
