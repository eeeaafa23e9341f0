"""Persistence: the Store protocol and its implementations."""
