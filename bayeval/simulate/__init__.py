"""Simulation studies of interval methods: Webber's (2013) scenarios and coverage evaluation.

- :class:`Scenario` and :func:`preset` (``"neutral"``, ``"legal"``, ``"small"``; Webber
  Tables 4.1.1-4.1.3): distributions over populations, retrievals and sample sizes, as data;
  :meth:`Scenario.realizations` draws populations.
- :func:`binomial_coverage`: coverage curves of the binomial proportion intervals (Webber
  Figs. 4-7).
"""

from bayeval.simulate.scenarios import (
    PRESET_NOTES,
    Doubling,
    Fraction,
    LogUniform,
    PowerUniform,
    PrecisionBound,
    Scenario,
    Uniform,
    UniformCapped,
    preset,
)

__all__ = [
    "PRESET_NOTES",
    "Doubling",
    "Fraction",
    "LogUniform",
    "PowerUniform",
    "PrecisionBound",
    "Scenario",
    "Uniform",
    "UniformCapped",
    "preset",
]
