"""Analyses shared by every rule: import aliases, device inference, allowed regions, noqa."""
