pytest_plugins = ["graphflow.testing"]
