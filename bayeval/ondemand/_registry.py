"""Book-keeping of on-demand evaluation: instance ids, systems, their draws and the labels."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from bayeval._core.joint_is import Draws

UNKNOWN, FALSE, TRUE = -1, 0, 1


@dataclass
class System:
    """One submitted system: its predictions (as codes), ``p_i`` over them, and its draws."""

    name: str
    codes: np.ndarray
    probs: np.ndarray
    planned: int
    new_labels: int
    planned_se: float
    draws: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))


class Registry:
    """Map instance ids to integer codes and hold every system, draw and label.

    Labels are kept per instance (``label[code]`` is -1, 0 or 1); instances of the exhaustive
    sample are true. A system's draws count once all of them are labelled.
    """

    def __init__(self, exhaustive: list) -> None:
        self._code: dict[Any, int] = {}
        self._ids: list = []
        self.label = np.empty(0, dtype=np.int8)
        self.systems: list[System] = []
        self.exhaustive = self.encode(exhaustive)
        self.label[self.exhaustive] = TRUE
        self.pending: dict[int, None] = {}  # insertion-ordered set of codes awaiting a label
        self._matrix: sp.csr_array | None = None

    # -- ids and codes ---------------------------------------------------------------------------
    def encode(self, ids: list) -> np.ndarray:
        """Return the codes of ``ids``, registering new ones."""
        codes = np.empty(len(ids), dtype=np.int64)
        known = len(self._ids)
        for k, x in enumerate(ids):
            code = self._code.get(x)
            if code is None:
                code = self._code[x] = len(self._ids)
                self._ids.append(x)
            codes[k] = code
        if len(self._ids) > known:
            grown = np.full(len(self._ids) - known, UNKNOWN, dtype=np.int8)
            self.label = np.append(self.label, grown)
        return codes

    def lookup(self, ids: list) -> np.ndarray:
        """Return the codes of known ids (-1 for unknown ones)."""
        return np.array([self._code.get(x, -1) for x in ids], dtype=np.int64)

    def ids(self, codes: np.ndarray) -> list:
        """Return the ids of ``codes``."""
        return [self._ids[c] for c in codes]

    @property
    def size(self) -> int:
        """Distinct instances seen (predictions and the exhaustive sample)."""
        return len(self._ids)

    # -- systems ---------------------------------------------------------------------------------
    def add(self, system: System) -> None:
        """Register a submitted system."""
        self.systems.append(system)
        self._matrix = None

    def matrix(self) -> sp.csr_array:
        """Return the (systems x instances) sparse matrix of ``p_i(x)``."""
        if not self.systems:
            return sp.csr_array((0, self.size))
        if self._matrix is None or self._matrix.shape[1] != self.size:
            rows = np.concatenate([np.full(s.codes.size, i) for i, s in enumerate(self.systems)])
            cols = np.concatenate([s.codes for s in self.systems])
            vals = np.concatenate([s.probs for s in self.systems])
            shape = (len(self.systems), self.size)
            self._matrix = sp.csr_array((vals, (rows, cols)), shape=shape)
        return self._matrix

    def complete(self, system: System) -> int:
        """Return the number of ``system``'s draws the estimators may use: all or none.

        A sample counts once every draw is labelled. Using the labelled draws so far instead
        would be biased: a draw of an instance labelled earlier is labelled at once, so the
        draws answered first over-represent what other systems predict.
        """
        labelled = bool(np.all(self.label[system.draws] != UNKNOWN))
        return int(system.draws.size) if labelled else 0

    def draws(self, systems: list[System] | None = None) -> Draws:
        """Return the labelled draws of ``systems`` (default all) for the estimators."""
        systems = self.systems if systems is None else systems
        used = [s.draws[: self.complete(s)] for s in systems]
        codes = np.concatenate([np.empty(0, dtype=np.int64), *used])
        group = np.repeat(np.arange(len(used)), [c.size for c in used]).astype(np.int64)
        matrix = self.matrix()[: len(systems)]
        member0 = (matrix[:, self.exhaustive] > 0).toarray().T
        return Draws(
            p=matrix[:, codes].toarray(),
            group=group,
            f=self.label[codes].astype(float),
            n0=int(self.exhaustive.size),
            member0=member0,
        )

    def queue(self, codes: np.ndarray) -> int:
        """Add the unlabelled, not yet pending instances among ``codes``; return how many."""
        before = len(self.pending)
        for c in codes[self.label[codes] == UNKNOWN].tolist():
            self.pending.setdefault(c, None)
        return len(self.pending) - before


def system_stream(seed: int, name: str) -> np.random.Generator:
    """Return the reproducible random stream of the system called ``name``.

    Each system draws from its own stream, so a system's draws do not depend on the order of
    submission: resubmitting it elsewhere in the order draws a prefix or an extension of the
    same sequence, and reuses the labels already bought.
    """
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    return np.random.default_rng([seed, key])


def draw(rng: np.random.Generator, probs: np.ndarray, n: int) -> np.ndarray:
    """Return ``n`` i.i.d. positions drawn from ``probs`` by inverting its CDF.

    Inversion of one uniform per draw keeps the prefix property: the first ``n`` of ``n' > n``
    draws from the same stream are the ``n`` draws.
    """
    cdf = np.cumsum(probs)
    positions = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
    return np.minimum(positions, probs.size - 1)
