"""Built-in plugin ``obvious``: the Web Spam Challenge's two "obvious" host features.

Castillo et al. released them beside the link and content features of WEBSPAM-UK2006/2007:
``number_of_pages`` (pages of the host in the crawl) and ``length_of_hostname``
(characters of the host name).  Weak alone (AUC ~0.6), cheap, and a baseline for the
classifier.
"""

__version__ = "1.0.0"
