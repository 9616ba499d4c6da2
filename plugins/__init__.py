"""graphflow's first-party plugins, installed as ``graphflow_plugins``.

Each subpackage is one plugin, registered through the entry-point group ``graphflow`` in
``pyproject.toml`` exactly as a third-party plugin would be.
"""
