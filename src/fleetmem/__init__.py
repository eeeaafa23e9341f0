"""fleetmem: governed, local-first memory for fleets of AI coding agents."""

from fleetmem import dataclass_cache, pattern_cache

__version__ = "0.1.0"

# Before any of fleetmem's dataclasses is defined: their generated methods come compiled from
# the user's cache (see the module), which is most of what importing fleetmem costs a hook.
dataclass_cache.install()
# Likewise the code of compiled regular expressions: the capture rules alone cost a hook that
# sees a request to remember about 50 ms to compile.
pattern_cache.install()


def save_compiled() -> None:
    """Keep what this process compiled (dataclass methods, patterns): for the entry points
    that leave by ``os._exit`` and so skip the exit handlers that would."""
    dataclass_cache.save()
    pattern_cache.save()
