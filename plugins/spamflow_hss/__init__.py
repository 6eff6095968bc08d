"""spamflow_hss: Hidden Style Similarity (Urvoy, Lavergne, Filoche, AIRWeb 2006).

Pages built from one template share the "noise" of their HTML source (whitespace, tag
punctuation) whatever their words; min-sampling fingerprints of that noise with pre-hashing
(Procedure 1) and probe/check clustering (Procedure 2) group them, across domains.
The pure modules (``ngram_hash``, ``fingerprint``, ``probing``) import nothing of spamflow.
"""

__version__ = "0.1.0"
