"""The client checking itself: event-loop lag and CPU beside the driver (integrity), and the
stream rate it can be trusted to (calibration against a reference emitter)."""
