"""Built-in plugin ``content``: the Web Spam Challenge content features of a host, BM25 host
vectors and their change over snapshots (Erdélyi et al., *The classification power of Web
features*, section 3.2; the per-page measures of Ntoulas et al. 2006 as Castillo et al.
released them for WEBSPAM-UK2006/2007).  ``docs/content.md`` documents every definition."""

__version__ = "1.0.0"
