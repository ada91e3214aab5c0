"""Example servers, shipped with the package so that ``wiremcp demo`` runs anywhere.

In a checkout they are also reachable as ``examples/`` at the top of the repository.
"""
