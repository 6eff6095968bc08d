"""``spamflow export``: a finished run's per-host and per-URL verdicts in files that data-set
pipelines read (Parquet, JSONL, dolma attribute files), in a versioned schema
(:data:`spamflow.export.rows.SCHEMA_VERSION`, docs/pipelines.md)."""
