"""Running real agents with fleetmem: the supervisor behind ``fleetmem run``, the adapters that
read each agent's machine-readable output, and the Claude Code and Codex integrations.

See docs/agents.md. Nothing here reaches the store directly: every write goes through the
services of :mod:`fleetmem.service.bootstrap`.
"""
