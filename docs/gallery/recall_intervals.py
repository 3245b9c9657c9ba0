"""Webber's worked example: the recall intervals of a stratified sample."""

import bayeval as be
from bayeval.plots import plot_intervals

sample = be.StratifiedSample.two_segments(N1=2000, n1=100, r1=50, N0=100000, n0=100, r0=3)
plot_intervals(be.recall_interval(sample))
