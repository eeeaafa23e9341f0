"""What the services hand to the surfaces: their own frozen records, never the store's rows.

The store's rows (``fleetmem.store``) follow its columns; a surface that formatted them would
change its JSON, its pages and its MCP answers whenever a column did. Each module here holds
the records of one domain (facts, files, runs, episodes) with the fields the surfaces show,
and the one function per record that builds it from its row at the service boundary. The
surfaces import these; ``tests/core/test_layers.py`` fails if one imports ``fleetmem.store``.
"""
