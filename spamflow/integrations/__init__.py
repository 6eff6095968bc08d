"""spamflow inside other tools' pipelines (optional extras: each module imports its tool)."""
