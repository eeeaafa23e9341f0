"""fleetmem: governed, local-first memory for fleets of AI coding agents."""

__version__ = "0.1.0"
