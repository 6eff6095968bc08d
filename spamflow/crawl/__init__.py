"""A polite crawler that writes WARC files, after BUbiNG (Boldi et al.).

URLs pass the filters and the sieve (each normalised URL once), wait in per-host FIFO
queues grouped by IP (the workbench), and are fetched so that two requests to one host,
or to one IP, are never closer than the host delay or the IP delay.  Every response is
written to WARC/1.1; a journal lets a killed crawl resume.  See ``docs/crawl.md``.

``spamflow.crawl.crawler.crawl`` runs one crawl; the modules import nothing heavy here so
that the config schema (``settings``) loads without the HTTP client.
"""
