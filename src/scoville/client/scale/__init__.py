"""Client scale-out: one point's requests sharded over local worker processes or Ray tasks,
and the choice of how many (`--workers`)."""
