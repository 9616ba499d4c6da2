"""Plugin "samplers": Neighbor samplers."""
