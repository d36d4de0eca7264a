"""Analysis: frontiers, iso-interactivity comparison, power boundaries, cost and the claim audit.

Sits after metrics in the pipeline: pure functions over point ROWs (the flat dicts of a run's
`summary.json`), plus loaders/importers that take a path. Nothing here measures anything.
"""
