"""Telemetry beside the driver: measured power, server metrics, and the client's own integrity.

sources/nvml/amd/rapl/ipmi/redfish -> sampler (thread) -> series -> integrate -> energy;
prometheus + scraper (server /metrics); integrity (loop lag, scheduling lag, CPU); session ties
them to a run; annotate merges them into summary rows. calibrate/emitter measure the client's
envelope; workers/ray_workers/scaleout run a point on several client processes or Ray nodes.
"""
