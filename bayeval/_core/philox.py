"""Counter-based uniforms: Philox4x32-10 (Salmon et al. 2011), vectorised over counters.

A uniform for item ``i`` is a pure function of ``(key, stream, i)``, so labels of huge lazy lists
and per-item noise can be drawn at any position, in any order or batch, reproducibly.

References
----------
J. K. Salmon, M. A. Moraes, R. O. Dror, D. E. Shaw, "Parallel random numbers: as easy as 1, 2,
3", SC 2011.
"""

from __future__ import annotations

import numpy as np

__all__ = ["philox4x32", "position_uniforms"]

_PHILOX_M0 = 0xD2511F53
_PHILOX_M1 = 0xCD9E8D57
_PHILOX_W0 = 0x9E3779B9
_PHILOX_W1 = 0xBB67AE85
_MASK32 = 0xFFFFFFFF


def philox4x32(
    counter: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    key: tuple[int, int],
    rounds: int = 10,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Philox4x32 block function of Salmon et al. (2011), vectorised over counters.

    ``counter`` holds four uint64 arrays of 32-bit words, ``key`` two 32-bit ints; returns the
    four 32-bit output words as uint64 arrays. Every 32 x 32-bit product fits in 64 bits, so
    numpy's uint64 arithmetic is exact here.
    """
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) for c in counter)
    k0, k1 = int(key[0]) & _MASK32, int(key[1]) & _MASK32
    for r in range(rounds):
        if r:
            k0 = (k0 + _PHILOX_W0) & _MASK32
            k1 = (k1 + _PHILOX_W1) & _MASK32
        p0 = c0 * np.uint64(_PHILOX_M0)
        p1 = c2 * np.uint64(_PHILOX_M1)
        c0, c1, c2, c3 = (
            (p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0),
            p1 & np.uint64(_MASK32),
            (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1),
            p0 & np.uint64(_MASK32),
        )
    return c0, c1, c2, c3


def position_uniforms(positions: np.ndarray, key: tuple[int, int], stream: int) -> np.ndarray:
    """Uniforms in [0, 1), one per position, a pure function of ``(key, stream, position)``.

    The Philox4x32-10 counter is ``(position mod 2**32, position // 2**32, stream, 0)``; the
    first two output words give a 53-bit uniform ``(w0 * 2**21 + w1 // 2**11) / 2**53``.
    """
    pos = np.asarray(positions, dtype=np.uint64).reshape(-1)
    zeros = np.zeros_like(pos)
    w0, w1, _, _ = philox4x32(
        (pos & np.uint64(_MASK32), pos >> np.uint64(32), zeros + np.uint64(stream), zeros), key
    )
    bits = (w0 << np.uint64(21)) | (w1 >> np.uint64(11))
    return bits.astype(np.float64) * 2.0**-53
