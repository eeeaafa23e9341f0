"""fleetmem: governed, local-first memory for fleets of AI coding agents."""

from fleetmem import dataclass_cache

__version__ = "0.1.0"

# Before any of fleetmem's dataclasses is defined: their generated methods come compiled from
# the user's cache (see the module), which is most of what importing fleetmem costs a hook.
dataclass_cache.install()
