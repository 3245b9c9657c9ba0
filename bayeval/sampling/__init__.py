"""Samplers that choose which items to label, under one ask/tell protocol.

=================  =====================================================================
``Passive``        uniform draws with replacement
``Stratified``     strata by score, proportional or Neyman allocation, without replacement
``ActiveStratified`` a multiclass pool's cells, Neyman allocation re-learnt from the posterior
``StaticIS``       importance sampling from Proposition 4's proposal built from the scores
``OASIS``          stratified adaptive importance sampling (Marchant & Rubinstein 2017)
``AIS``            adaptive importance sampling with a Dirichlet-tree oracle model (2021)
``StochasticAIS``  the same for a stochastic oracle: every draw is a new question (App. H)
``ModelSelection`` labels that tell which of several systems is best, with a stopping rule
``CurveSampler``   the ranks a precision-curve method needs (LogStrat, PAULA, AdaStrat)
=================  =====================================================================

Every sampler has ``ask(n)`` (ids of ``n`` new items to label), ``tell(ids, labels)`` and
``estimate()`` (an :class:`Estimate`). :func:`bayeval.evaluate` drives the loop with an oracle.
"""

from bayeval.sampling.active_stratified import ActiveStratified
from bayeval.sampling.ais import AIS
from bayeval.sampling.base import Sampler
from bayeval.sampling.curve import CurveSampler
from bayeval.sampling.estimate import Estimate
from bayeval.sampling.model_selection import ModelSelection
from bayeval.sampling.oasis import OASIS
from bayeval.sampling.passive import Passive
from bayeval.sampling.run import Run, evaluate
from bayeval.sampling.static import StaticIS
from bayeval.sampling.stochastic import StochasticAIS
from bayeval.sampling.stratified import Stratified

__all__ = [
    "AIS",
    "ActiveStratified",
    "CurveSampler",
    "Estimate",
    "ModelSelection",
    "OASIS",
    "Passive",
    "Run",
    "Sampler",
    "StaticIS",
    "StochasticAIS",
    "Stratified",
    "evaluate",
]
