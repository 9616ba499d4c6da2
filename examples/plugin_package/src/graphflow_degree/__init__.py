"""An example third-party graphflow plugin."""
