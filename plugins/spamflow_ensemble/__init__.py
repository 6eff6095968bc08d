"""Built-in plugin ``ensemble``: the ``classify`` stage and ``spamflow train|score|evaluate``.

A library of diverse scikit-learn models, each trained on one feature group (one per detector
plugin, plus all features together), combined by ensemble selection (Caruana et al. 2004/2006)
as in *The classification power of Web features* (sections 4-5).  Every detector's per-host
table becomes one spam score per host, with the evidence behind it.
"""

__version__ = "1.0.0"
