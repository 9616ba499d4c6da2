"""The pluggy namespace: the ``hookimpl`` / ``hookspec`` markers and the project name.

Plugins import ``hookimpl`` (with the rest of the plugin API) from :mod:`graphflow.api`:

    from graphflow.api import hookimpl

    @hookimpl
    def graphflow_register_loaders(register):
        register(MyLoader)
"""

from __future__ import annotations

import pluggy

NAME = "graphflow"
"""The pluggy project name, which is also the entry-point group plugins register under."""

hookimpl = pluggy.HookimplMarker(NAME)
hookspec = pluggy.HookspecMarker(NAME)

__all__ = ["NAME", "hookimpl", "hookspec"]
