"""``fleetmem tui``: the operator's terminal (agents, briefings, episodes, review, status)."""
