"""Molecules: RDKit featurisation (OGB's ``smiles2graph`` features), Bemis-Murcko scaffolds and
the molecule splits. RDKit is an optional extra (``pip install 'graphflow[chem]'``), imported
only when a molecule is read."""

from __future__ import annotations

from graphflow.errors import ConfigError


def require_rdkit() -> None:
    """Import RDKit, or stop in one line naming the extra that installs it."""
    try:
        import rdkit  # noqa: F401
    except ImportError:
        raise ConfigError("reading SMILES needs RDKit: pip install 'graphflow[chem]'") from None
