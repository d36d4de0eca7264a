"""scoville: claims about LLM-inference systems as frozen test matrices, measured and audited.

The pipeline is spec -> workload -> client -> records -> metrics -> bundle -> analysis -> report;
`scoville.pipeline` wires it, `scoville.cli` is the thin command line on top.
"""

__version__ = "0.1.0"
