"""dag area."""
