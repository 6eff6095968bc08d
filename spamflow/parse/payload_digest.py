"""``WARC-Payload-Digest`` values in one spelling, so a revisit's digest and its original's
compare equal whichever tool wrote them.

Heritrix, wget and warcio write ``sha1:`` + base32; some tools write the algorithm as
``SHA-1`` or the value in hex.  :func:`normalize_digest` gives ``sha1:BASE32`` for all of
them (other algorithms: lower-case name, value as written, upper-cased if base32).
"""

from __future__ import annotations

import base64
import binascii
import re

_HEX = re.compile(r"[0-9a-fA-F]+")
_HEX_LENGTHS = {"sha1": 40, "sha256": 64, "sha512": 128, "md5": 32}


def normalize_digest(value: str | None) -> str | None:
    """``algorithm:value`` with the algorithm lower-cased without dashes and a hex value
    re-encoded in base32; None for a missing or malformed digest.

    >>> normalize_digest("SHA-1:" + "00" * 20)
    'sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
    >>> normalize_digest(" sha1:skavwvvb6hypsty3yNQJVM2C4FZRWBSG ")
    'sha1:SKAVWVVB6HYPSTY3YNQJVM2C4FZRWBSG'
    """
    if not value or ":" not in value:
        return None
    algorithm, _, digest = value.strip().partition(":")
    algorithm = algorithm.strip().lower().replace("-", "")
    digest = digest.strip()
    if not algorithm or not digest:
        return None
    if len(digest) == _HEX_LENGTHS.get(algorithm) and _HEX.fullmatch(digest):
        try:
            digest = base64.b32encode(binascii.unhexlify(digest)).decode("ascii")
        except binascii.Error:
            return None
    return f"{algorithm}:{digest.upper()}"
