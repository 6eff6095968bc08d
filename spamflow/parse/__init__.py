"""The ingest and parse stages' work: archive files (WARC, ARC, gzipped either way) read record
by record, each HTML response turned into one row of the page table, every skip counted.

Reading: ``warc_records`` (with ``warc_lengths``, ``arc_records``, ``gzip_stream``,
``content_encoding``, ``warc_dates``).  One record to one row: ``pages`` (with ``charset``,
``legacy_charset``, ``html_text``, ``payload_digest``).  One file: ``warc_file``; revisits
across files: ``revisits``.  The Luigi tasks that run them are in ``spamflow.stages``; the
word rule (``spamflow.words``) and hosts and domains (``spamflow.domains``) stay at the top,
since detectors and the crawler use them too.  See ``docs/architecture.md``.
"""
