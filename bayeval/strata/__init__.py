"""Strata from classifier scores, and trees whose leaves are the ordered strata.

A pool of ``M`` scored items is cut into ``K`` strata: sub-intervals of the score range, so that
an item's stratum depends on its score alone and strata are ordered by score. Four rules place the
cuts (Marchant & Rubinstein 2021, Appendix I): the cumulative square-root frequency rule of
Dalenius & Hodges (``"csf"``), the geometric rule of Gunning & Horgan (``"geometric"``),
``"equal-width"`` and ``"quantile"`` (equal counts). A hierarchical model of the oracle response
(the Dirichlet tree of Section 4) then needs a tree over the strata: :func:`tree_over_strata`
fills one breadth-first and associates its leaves with the ordered strata.

Everything here is vectorised and streams over the scores in chunks: besides the scores, the
only array of pool size that is ever held is the stratum ids, in the smallest integer type that
fits, so pools of ``10**8`` items stratify in seconds.
"""

from bayeval.strata.partition import METHODS, Method, Strata, stratify
from bayeval.strata.tree import StrataTree, tree_over_strata

__all__ = ["METHODS", "Method", "Strata", "StrataTree", "stratify", "tree_over_strata"]
