"""Simulation studies of interval methods: Webber's (2013) scenarios and coverage evaluation.

- :class:`Scenario` and :func:`preset` (``"neutral"``, ``"legal"``, ``"small"``; Webber
  Tables 4.1.1-4.1.3): distributions over populations, retrievals and sample sizes, as data;
  :meth:`Scenario.realizations` draws populations.
- :func:`coverage_study`: coverage, balance and width of recall intervals over a scenario's
  populations (Webber §4.2, Tables 4.2.5-4.2.6, Figs. 9-13), optionally on a dask cluster.
- :func:`binomial_coverage`: coverage curves of the binomial proportion intervals (Webber
  Figs. 4-7).
- :func:`coverage_battery` (:mod:`bayeval.simulate.battery`): the honesty battery, coverage of
  the samplers' design-based and credible intervals on pools that break their assumptions.
"""

from bayeval.simulate.battery import BATTERY_POOLS, battery_pool, coverage_battery
from bayeval.simulate.binomial import binomial_coverage, plot_binomial_coverage
from bayeval.simulate.coverage import METHODS, CoverageStudy, coverage_study
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
    "BATTERY_POOLS",
    "METHODS",
    "PRESET_NOTES",
    "CoverageStudy",
    "Doubling",
    "Fraction",
    "LogUniform",
    "PowerUniform",
    "PrecisionBound",
    "Scenario",
    "Uniform",
    "UniformCapped",
    "battery_pool",
    "binomial_coverage",
    "coverage_battery",
    "coverage_study",
    "plot_binomial_coverage",
    "preset",
]
