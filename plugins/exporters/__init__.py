"""Plugin "exporters": Exporters of artifacts to files."""
