"""The core stages every run has: demo (when the input is the demo web), ingest, parse."""
