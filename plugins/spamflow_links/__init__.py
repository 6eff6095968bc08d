"""Built-in plugin ``links``: the host link graph of each snapshot, the Web Spam Challenge
link features (Becchetti et al.), PageRank/CheiRank/2DRank (Eom et al.), and the temporal link
features of Erdélyi et al. (IDR/IGR/ODR/OGR, CRCC, XJaccard and PSimRank along time) with
change(u) (Göbölös-Szabó & Benczúr) between consecutive snapshots.

The graph and feature modules use numpy/scipy only (no spamflow imports), so they can be
shipped to a worker as they are.
"""

__version__ = "1.0.0"
