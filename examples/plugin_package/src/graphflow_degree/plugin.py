"""Plugin "degree": a transform that appends degree features, and a run-end hook.

Registered through the entry-point group ``graphflow`` in this package's pyproject.toml, exactly
like graphflow's own plugins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from graphflow.api import Transform, hookimpl, option, write_text


class DegreeFeatures(Transform):
    """Append ``scale * log(1 + degree)`` to the node features (creating them if absent).

    Degree is a strong structural signal that message passing with symmetric normalisation
    partly washes out; appending it is a classic cheap feature for node classification.
    """

    name = "log_degree"
    summary = "append log(1 + degree) to the node features"

    @dataclass
    class Options:
        direction: Literal["in", "out", "both"] = option("in", "Which degree(s) to append.")
        scale: float = option(1.0, "Multiplier of the appended column(s).")

    def apply(self, data, ctx):
        g = data.graph
        columns = []
        if self.options.direction in ("in", "both"):
            columns.append(g.in_degrees())
        if self.options.direction in ("out", "both"):
            columns.append(g.out_degrees())
        extra = self.options.scale * torch.log1p(torch.stack(columns, 1).float())  # (N, 1 or 2)
        feat = g.ndata.get("feat")
        g.ndata["feat"] = extra if feat is None else torch.cat([feat, extra], 1)
        return data


@hookimpl
def graphflow_register_transforms(register):
    register(DegreeFeatures)


@hookimpl
def graphflow_pipeline_end(ctx, record):
    """Write the run's stage timings as CSV beside run.json."""
    rows = "".join(f"{s['section']},{s['type']},{s['plugin']},{s['seconds']}\n"
                   for s in record["stages"])
    path = write_text(ctx.out_dir / "stage_timings.csv", "section,type,plugin,seconds\n" + rows)
    ctx.info(f"degree plugin: wrote {path}")
