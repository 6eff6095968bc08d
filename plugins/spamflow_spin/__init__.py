"""Built-in plugin ``spin``: automatically spun articles after DSpin (Zhang, Wang, Voelker,
NDSS 2014): immutables, the mutable verifier and spam campaigns."""

__version__ = "1.0.0"
