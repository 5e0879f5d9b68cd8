"""memory area."""
