"""A synthetic universe of instances and systems with known precision, recall and overlap."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from bayeval._constraints import Array, Integer, Optional, Real, Seed, validate
from bayeval._validation import check_rng

__all__ = ["SyntheticUniverse", "synthetic_universe"]


@dataclass(frozen=True)
class SyntheticUniverse:
    """Instances ``0`` to ``size - 1`` with a latent truth, and the systems' predicted sets.

    Attributes
    ----------
    truth : numpy.ndarray of bool
        Whether each instance is correct.
    systems : dict of str to numpy.ndarray
        Each system's predicted instance ids, sorted.
    teams : dict of str to str
        The team of each system.
    """

    truth: np.ndarray
    systems: dict[str, np.ndarray]
    teams: dict[str, str]

    @property
    def size(self) -> int:
        """Number of instances."""
        return int(self.truth.size)

    def label(self, ids: Any) -> np.ndarray:
        """Return the true labels (0/1) of ``ids``: a perfect annotator."""
        return self.truth[np.asarray(ids, dtype=np.int64)].astype(np.int8)

    @validate(n=Integer(minimum=1), rng=Seed())
    def exhaustive(self, n: int, *, rng: Any = None) -> np.ndarray:
        """Return ``n`` true instances drawn uniformly with replacement: a sample ``Y_0``."""
        return check_rng(rng).choice(np.flatnonzero(self.truth), size=n)

    def scores(self) -> pd.DataFrame:
        """Return every system's true precision, recall and F1 (recall over all true instances)."""
        total = self.truth.sum()
        rows = {}
        for name, ids in self.systems.items():
            hits = self.truth[ids].sum()
            p, r = hits / ids.size, hits / total
            rows[name] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if hits else 0.0}
        frame = pd.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "system"
        return frame


@validate(
    n_systems=Integer(minimum=1),
    n_true=Integer(minimum=1),
    n_false=Integer(minimum=0),
    # a number, or one per system (how many systems is checked in the body, against n_systems)
    precision=Array(ndim=(0, 1), above=0, at_most=1),
    recall=Array(ndim=(0, 1), above=0, below=1),
    agreement=Array(ndim=(0, 1), at_least=0, at_most=1),
    n_teams=Optional(Integer(minimum=1)),
    team_agreement=Real(at_least=0, at_most=1),
    rng=Seed(),
)
def synthetic_universe(
    n_systems: int = 10,
    *,
    n_true: int = 2000,
    n_false: int = 8000,
    precision: Any = 0.6,
    recall: Any = 0.3,
    agreement: Any = 0.6,
    n_teams: int | None = None,
    team_agreement: float = 0.0,
    rng: Any = None,
) -> SyntheticUniverse:
    """Generate instances with a latent truth and systems with controlled overlap.

    System ``i`` predicts an instance when a latent score
    ``sqrt(a_i) z + sqrt(b) t + sqrt(1 - a_i - b) e`` exceeds a threshold. ``z`` is shared by all
    systems (an instance that is easy to find), ``t`` by the systems of one team, ``e`` is the
    system's own noise; ``a_i`` is ``agreement``, ``b`` is ``team_agreement``. Two systems'
    scores correlate by ``sqrt(a_i a_j)`` (plus ``b`` within a team), so ``agreement`` near 1
    gives nearly identical systems and 0 independent ones; a system with low agreement makes
    many unique predictions. Thresholds give each system, in expectation, recall ``recall`` and
    precision ``precision`` whatever the agreement.

    Parameters
    ----------
    n_systems : int, default 10
        Number of systems.
    n_true, n_false : int
        Correct and incorrect instances in the universe.
    precision, recall, agreement : float or array_like of shape (n_systems,)
        Expected precision and recall in (0, 1), and agreement in [0, 1].
    n_teams : int, optional
        Systems are split into this many teams of consecutive systems (default: one each).
    team_agreement : float, default 0
        The weight ``b`` of the team's shared latent; ``agreement + team_agreement <= 1``.
    rng : int, numpy.random.Generator or None
        Seed of the latent scores.

    Returns
    -------
    SyntheticUniverse

    Examples
    --------
    >>> import bayeval as be
    >>> uni = be.ondemand.synthetic_universe(3, precision=[0.4, 0.6, 0.8], rng=0)
    >>> uni.scores().round(2)
            precision  recall    f1
    system
    s00          0.39    0.29  0.34
    s01          0.61    0.29  0.39
    s02          0.80    0.28  0.42
    """
    precision = _per_system(precision, "precision", n_systems)
    recall = _per_system(recall, "recall", n_systems)
    agreement = _per_system(agreement, "agreement", n_systems)
    if np.any(agreement + team_agreement > 1):
        raise ValueError(
            f"`agreement` + `team_agreement` must be at most 1 for every system; got "
            f"{agreement.max()} + {team_agreement}."
        )
    n_teams = n_systems if n_teams is None else n_teams
    if n_teams > n_systems:
        raise ValueError(f"`n_teams` must be at most n_systems ({n_systems}); got {n_teams}.")
    false_rate = n_true * recall * (1 - precision) / precision / max(n_false, 1)
    if np.any(false_rate > 1) or (n_false == 0 and np.any(precision < 1)):
        raise ValueError(
            "`n_false` is too small for the requested precision and recall: a system with "
            "recall r and precision p predicts n_true * r * (1 - p) / p incorrect instances; "
            f"increase n_false (got {n_false})."
        )
    rng = check_rng(rng)
    team_of = np.repeat(
        np.arange(n_teams), [len(a) for a in np.array_split(np.arange(n_systems), n_teams)]
    )
    chosen = np.zeros((n_systems, n_true + n_false), dtype=bool)
    for block, rate in ((slice(0, n_true), recall), (slice(n_true, None), false_rate)):
        size = chosen[:, block].shape[1]
        shared = rng.standard_normal(size)
        team = rng.standard_normal((n_teams, size))[team_of]
        own = rng.standard_normal((n_systems, size))
        score = (
            np.sqrt(agreement)[:, None] * shared
            + np.sqrt(team_agreement) * team
            + np.sqrt(1 - agreement - team_agreement)[:, None] * own
        )
        chosen[:, block] = score > stats.norm.isf(rate)[:, None]
    truth = np.r_[np.ones(n_true, dtype=bool), np.zeros(n_false, dtype=bool)]
    names = [f"s{i:02d}" for i in range(n_systems)]
    width = max(2, len(str(n_teams - 1)))
    systems, teams = {}, {}
    for i, name in enumerate(names):
        ids = np.flatnonzero(chosen[i])
        if ids.size == 0:  # keep every system non-empty: give it one random true instance
            ids = rng.integers(n_true, size=1)
        systems[name] = ids
        teams[name] = f"t{team_of[i]:0{width}d}"
    return SyntheticUniverse(truth, systems, teams)


def _per_system(value: Any, name: str, n: int) -> np.ndarray:
    """Broadcast a checked number or 1-d array to ``n`` floats, one per system."""
    arr = np.asarray(value, dtype=float)  # a default is not normalised
    if arr.ndim == 1 and arr.size != n:
        raise ValueError(
            f"`{name}` must be a number or have one entry per system ({n}); got {arr.size} entries."
        )
    return np.broadcast_to(arr, (n,)).copy()
