"""The agent-facing MCP server (``fleetmem mcp`` over stdio, ``/mcp`` in ``fleetmem serve``).

Importing this package imports the MCP SDK (about a second): the CLI imports it lazily.
"""
