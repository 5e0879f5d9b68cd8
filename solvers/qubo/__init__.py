"""qubo area."""
