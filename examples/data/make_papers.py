"""Write the small citation graph that ``examples/edgelist_gcn.toml`` reads.

    python examples/data/make_papers.py

* ``papers.tsv``: one undirected citation per line, ``citing<TAB>cited``, string ids
  (``paper-0001``...), with a comment header.
* ``papers_nodes.parquet``: one row per paper: ``id``, ``feat`` (8 floats: a noisy topic
  signature) and ``label`` (the topic's name).

The graph is a seeded stochastic block model (graphflow.io.synthetic.sbm), so the files are the
same on every machine. A few kilobytes each.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from graphflow.io.synthetic import sbm

HERE = Path(__file__).resolve().parent
TOPICS = ["databases", "learning", "theory"]


def main() -> None:
    gen = sbm(150, len(TOPICS), 8, p_in=0.06, p_out=0.004, seed=42, signal=1.0)
    names = np.array([f"paper-{i:04d}" for i in range(gen.num_nodes)])
    once = (gen.src < gen.dst).numpy()  # each undirected edge once
    citing, cited = names[gen.src.numpy()[once]], names[gen.dst.numpy()[once]]
    lines = np.char.add(np.char.add(citing, "\t"), cited)
    text = "# citing\tcited (undirected)\n" + "\n".join(lines) + "\n"
    (HERE / "papers.tsv").write_text(text)
    feat = pa.FixedSizeListArray.from_arrays(pa.array(gen.feat.numpy().round(3).reshape(-1)), 8)
    labels = pa.array(np.array(TOPICS)[gen.label.numpy()])
    pq.write_table(pa.table({"id": names, "feat": feat, "label": labels}),
                   HERE / "papers_nodes.parquet")


if __name__ == "__main__":
    main()
