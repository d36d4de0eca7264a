"""Telemetry beside the driver: measured power, server metrics, and their merge into rows.

sources/nvml/amd/rapl/ipmi/redfish -> sampler (thread) -> series -> integrate -> energy;
prometheus + scraper (server /metrics); session ties them (and the client monitor from
`client/selftest/`) to a run; annotate merges them into summary rows.
"""
