"""What a plugin imports: the ``hookimpl`` marker and the project name.

    from graphflow.plugin import hookimpl

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
