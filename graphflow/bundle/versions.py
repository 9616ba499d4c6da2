"""Which version differences between a bundle and this environment matter.

``bundle.json`` records the versions a model was trained with (``package_versions()``).
Loading compares them with the installed ones, package by package:

=============  =================================  ==========================================
package        a change of                        means
=============  =================================  ==========================================
graphflow      major (minor while 0.x)            error: the bundle layout and the models'
                                                  parameter names may differ; predict with
                                                  the version that trained it, or retrain
torch          major                              warning: state dicts load, but kernels and
                                                  numerics may differ; check predictions
dgl            major                              warning: DGL only builds the graph here
any            minor / patch                      note: harmless, reported for the record
=============  =================================  ==========================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Severity = Literal["note", "warning", "error"]

WATCHED = ("graphflow", "torch", "dgl")


@dataclass(frozen=True)
class Difference:
    """One package whose version differs between the bundle and this environment."""

    package: str
    saved: str | None
    now: str | None
    severity: Severity
    why: str

    def line(self) -> str:
        return f"{self.package} {self.saved} -> {self.now} ({self.severity}: {self.why})"


def _release(version: str | None) -> tuple[int, ...]:
    if not version:
        return ()
    found = re.match(r"(\d+(?:\.\d+)*)", version)
    return tuple(int(p) for p in found.group(1).split(".")) if found else ()


def _breaking_part(package: str, release: tuple[int, ...]) -> tuple[int, ...]:
    """The part of a version whose change may break compatibility (semver: the major, or
    the minor while the major is 0)."""
    if package == "graphflow" and release[:1] == (0,):
        return release[:2]
    return release[:1]


def compare(saved: dict[str, str | None], now: dict[str, str | None]) -> list[Difference]:
    """The differences of the watched packages (graphflow, torch, DGL), worst first."""
    found: list[Difference] = []
    for package in WATCHED:
        a, b = saved.get(package), now.get(package)
        if a == b:
            continue
        ra, rb = _release(a), _release(b)
        if _breaking_part(package, ra) != _breaking_part(package, rb):
            if package == "graphflow":
                found.append(Difference(package, a, b, "error",
                                        "the bundle layout and model parameters may have "
                                        f"changed; install graphflow {a} or retrain"))
            elif package == "torch":
                found.append(Difference(package, a, b, "warning",
                                        "the weights load, but kernels and numerics may "
                                        "differ; check a few predictions"))
            else:
                found.append(Difference(package, a, b, "warning",
                                        "it only builds the graph here; the weights do not "
                                        "depend on it"))
        else:
            found.append(Difference(package, a, b, "note", "same major version: harmless"))
    order = {"error": 0, "warning": 1, "note": 2}
    return sorted(found, key=lambda d: order[d.severity])
