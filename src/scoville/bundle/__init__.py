"""Run bundles on disk, one schema for writing and reading: `files` (run directory, spec,
manifest, JSON), `summary` (summary.json: schema, rows, labels), `run` (a bundle read back),
`export` (CSV). Sits below analysis and report, which read bundles through it."""
