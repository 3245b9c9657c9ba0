"""The precision-curve methods one batch of questions at a time, for labels people give.

:func:`~bayeval.curves.logstrat`, :func:`~bayeval.curves.paula`,
:func:`~bayeval.curves.adastrat` and :func:`~bayeval.curves.random_baseline` ask an oracle
for labels as they go. :class:`CurveQuestions` runs one of them without one: :meth:`ask` returns
the ranks whose labels the method needs next, :meth:`tell` records them, and once the method has
every label it needs, :attr:`result` is its curve, the same as a run with an oracle that knows
those labels. Each :meth:`ask` replays the method from the start with the labels told so far
(its seed fixed), up to the first ranks it lacks: a method asks for what it needs one batch at
a time (a prefix, a stratum's sample, a window), so the batches are those of the method itself,
AdaStrat's chosen by the labels before them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval.curves.adastrat import adastrat
from bayeval.curves.logstrat import logstrat
from bayeval.curves.paula import paula
from bayeval.curves.random_baseline import random_baseline
from bayeval.oracles import Oracle

__all__ = ["METHODS", "CurveQuestions"]

#: The methods :class:`CurveQuestions` runs, by name.
METHODS = {"logstrat": logstrat, "paula": paula, "adastrat": adastrat, "random": random_baseline}


class _Unknown(Exception):
    """Raised by the replay when the method asks for ranks not labelled yet."""

    def __init__(self, positions: np.ndarray):
        super().__init__(f"{positions.size} rank(s) not labelled yet")
        self.positions = positions


class _Replay(Oracle):
    """An oracle of the labels told so far that stops the method at the first it lacks."""

    def __init__(self, n_items: int, known: dict[int, int]):
        super().__init__(n_items=n_items)
        self.known = known

    def _lookup(self, positions: np.ndarray) -> np.ndarray:
        missing = np.array([p for p in positions.tolist() if p not in self.known], np.int64)
        if missing.size:
            raise _Unknown(missing)
        return np.array([self.known[p] for p in positions.tolist()], dtype=np.int8)


class CurveQuestions:
    """Run a precision-curve method by ask and tell: the ranks it needs, their labels, its curve.

    Parameters
    ----------
    method : {"logstrat", "paula", "adastrat", "random"}
        :func:`~bayeval.curves.logstrat`, :func:`~bayeval.curves.paula`,
        :func:`~bayeval.curves.adastrat` or :func:`~bayeval.curves.random_baseline`.
    n_items : int
        Length of the ranked list.
    **options
        The method's own keyword arguments (``epsilon``, ``delta``, ...). Its ``rng``, where
        it has one, must be an int seed (default 0): each :meth:`ask` replays the method with
        that seed.

    Attributes
    ----------
    labels : dict of int to int
        The labels told, by 0-based rank.

    Examples
    --------
    A person labels what LogStrat asks, one batch at a time (here the truth plays the person):

    >>> import numpy as np
    >>> from bayeval import curves
    >>> truth = (np.arange(10**5) % 4 != 3).astype(int)  # precision 0.75 at every rank
    >>> questions = curves.CurveQuestions("logstrat", 10**5, epsilon=0.3)
    >>> batches = 0
    >>> while len(ranks := questions.ask()):
    ...     questions.tell(ranks, truth[ranks])
    ...     batches += 1
    >>> batches > 1, questions.done, len(questions.labels) == questions.result.annotations
    (True, True, True)
    """

    def __init__(self, method: str, n_items: int, **options: Any):
        if method not in METHODS:
            raise ValueError(
                f"`method` must be one of {', '.join(map(repr, METHODS))}; got {method!r}."
            )
        seed = options.get("rng", 0)
        if method != "paula" and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(
                f"`rng` must be an int seed (each ask replays the method with it); got {seed!r}."
            )
        self.method, self.n_items, self.options = method, n_items, options
        self.labels: dict[int, int] = {}
        self._result = None
        self._asked = np.zeros(0, np.int64)
        self._run()  # the options are checked here, and the first ranks found

    def _run(self) -> None:
        replay = _Replay(self.n_items, self.labels)
        try:
            self._result = METHODS[self.method](replay, self.n_items, **self.options)
            self._asked = np.zeros(0, np.int64)
        except _Unknown as unknown:
            self._asked = unknown.positions

    @property
    def done(self) -> bool:
        """Whether the method has every label it needs."""
        return self._result is not None

    @property
    def pending(self) -> np.ndarray:
        """The ranks asked for and not yet told (0-based)."""
        return self._asked.copy()

    @property
    def result(self):
        """The method's curve (:class:`~bayeval.curves.CurveResult`), once :attr:`done`."""
        if self._result is None:
            raise ValueError(
                f"the curve is not finished: {self._asked.size} asked rank(s) wait for labels "
                "(ask, then tell)."
            )
        return self._result

    def ask(self) -> np.ndarray:
        """Return the 0-based ranks whose labels the method needs next (empty when done)."""
        return self.pending

    def tell(self, ranks: Any, labels: Any) -> None:
        """Record the 0/1 ``labels`` of ``ranks`` (asked ones), then find the next ranks.

        Raises
        ------
        ValueError
            For ranks never asked, labels other than 0/1, or lengths that differ; nothing is
            recorded then.
        """
        ranks = np.atleast_1d(np.asarray(ranks))
        values = np.atleast_1d(np.asarray(labels))
        if ranks.shape != values.shape:
            raise ValueError(
                f"`labels` must give one label per rank ({ranks.size}); got {values.size}."
            )
        asked = set(self._asked.tolist())
        stray = [r for r in ranks.tolist() if r not in asked]
        if stray:
            raise ValueError(f"`ranks` must be ranks asked for; {stray[:5]} were not.")
        bad = [v for v in values.tolist() if v not in (0, 1)]
        if bad:
            raise ValueError(f"`labels` must be 0 or 1; got {bad[:5]}.")
        self.labels.update(zip(ranks.tolist(), (int(v) for v in values.tolist()), strict=True))
        if asked <= self.labels.keys():  # the whole batch told: run on to the next
            self._run()
        else:
            self._asked = np.array([r for r in self._asked.tolist() if r not in self.labels])
