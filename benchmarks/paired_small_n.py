"""Benchmark: two systems on a few items, paired: coverage error of the difference's intervals.

Bowyer, Aitchison & Ivanova's (2025) paired simulation: per repeat, accuracies ``theta_A,
theta_B ~ Uniform(0, 1)`` and ``rho ~ 2 Beta(4, 2) - 1``; each of ``N`` items is right for a
system when its coordinate of a bivariate normal (correlation ``rho``) falls below
``Phi^-1(theta)``. The *coverage error* of a method at ``N`` is the mean over 100 ``alpha`` in
[0.005, 0.2] of ``|coverage - (1 - alpha)|``, coverage the share of repeats whose ``1 - alpha``
interval holds ``theta_A - theta_B``. Methods: ``paired_difference``'s posterior
(Dirichlet(1/2 + counts)) and design interval (Agresti & Min), and the paired CLT interval
(``mean(d) +- z sd(d) / sqrt(N)``, ``d`` the per-item difference; Miller 2024), and the paired
Bayes of Bowyer et al. re-implemented from their description: the generator's own prior
(a bivariate-probit model) by importance sampling with ``--draws`` prior draws as proposals
(shared by all repeats of an ``N``), its intervals the weighted quantiles (the limit of their
resampling). The noise floor:
a perfectly calibrated method scores about ``0.8 sqrt(0.1 / repeats)`` on average.

Run from the repository root::

    .venv/bin/python benchmarks/paired_small_n.py --repeats 10000
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import special, stats

from bayeval.comparison.paired import agresti_min_interval

ALPHAS = np.linspace(0.005, 0.2, 100)


def simulate(n: int, repeats: int, rng: np.random.Generator):
    """Return the true differences and the four outcome counts ``(repeats, 4)``."""
    theta = rng.random((repeats, 2))
    rho = 2 * rng.beta(4, 2, repeats) - 1
    z = rng.standard_normal((repeats, n, 2))
    second = rho[:, None] * z[..., 0] + np.sqrt(1 - rho[:, None] ** 2) * z[..., 1]
    a = z[..., 0] < special.ndtri(theta[:, :1])
    b = second < special.ndtri(theta[:, 1:])
    counts = np.stack([(a & b).sum(1), (a & ~b).sum(1), (~a & b).sum(1), (~a & ~b).sum(1)], 1)
    return theta[:, 0] - theta[:, 1], counts


def probit_prior_draws(draws: int, rng: np.random.Generator):
    """Prior draws of the generator's model: the difference and the four outcome shares."""
    theta = rng.random((draws, 2))
    rho = 2 * rng.beta(4, 2, draws) - 1
    mu = special.ndtri(theta)
    # both wrong: both normal coordinates above their thresholds, P(z_A > mu_A, z_B > mu_B)
    neither = np.array(
        [
            stats.multivariate_normal.cdf(-mu[i], cov=[[1.0, rho[i]], [rho[i], 1.0]])
            for i in range(draws)
        ]
    )
    shares = np.stack(
        [
            theta[:, 0] + theta[:, 1] + neither - 1,  # both right
            1 - theta[:, 1] - neither,  # first only
            1 - theta[:, 0] - neither,  # second only
            neither,
        ],
        axis=1,
    )
    return theta[:, 0] - theta[:, 1], np.clip(shares, 1e-300, 1.0)


def weighted_intervals(values: np.ndarray, log_weights: np.ndarray, alphas=ALPHAS) -> np.ndarray:
    """Equal-tailed intervals ``(repeats, alphas, 2)`` of ``values`` under each row's weights."""
    order = np.argsort(values)
    sorted_values = values[order]
    w = np.exp(log_weights[:, order] - log_weights.max(axis=1, keepdims=True))
    cdf = np.cumsum(w, axis=1)
    cdf /= cdf[:, -1:]
    out = np.empty((w.shape[0], len(alphas), 2))
    for j, alpha in enumerate(alphas):
        for side, level in enumerate((alpha / 2, 1 - alpha / 2)):
            index = (cdf < level).sum(axis=1)
            out[:, j, side] = sorted_values[np.minimum(index, values.size - 1)]
    return out


def coverage_error(inside: np.ndarray) -> float:
    """``inside`` is ``(repeats, alphas)``: mean over alphas of |coverage - (1 - alpha)|."""
    return float(np.mean(np.abs(inside.mean(axis=0) - (1 - ALPHAS))))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10_000)
    parser.add_argument("--draws", type=int, default=4_000)
    parser.add_argument("--sizes", default="3,10,30,100")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(42)
    print("| N | method | coverage error | median width of the 95% interval |")
    print("|---|---|---|---|")
    for n in (int(v) for v in args.sizes.split(",")):
        truth, counts = simulate(n, args.repeats, rng)
        inside = {"posterior": [], "design": [], "paired CLT": [], "Bowyer et al. (IS)": []}
        width = {name: [] for name in inside}
        difference, shares = probit_prior_draws(args.draws, rng)
        for start in range(0, args.repeats, 500):
            part = slice(start, start + 500)
            log_weights = counts[part] @ np.log(shares).T  # multinomial likelihood
            ends = weighted_intervals(difference, log_weights)
            inside["Bowyer et al. (IS)"].extend(
                (ends[..., 0] <= truth[part, None]) & (truth[part, None] <= ends[..., 1])
            )
            ends_95 = weighted_intervals(difference, log_weights, alphas=[0.05])[:, 0]
            width["Bowyer et al. (IS)"].extend(ends_95[:, 1] - ends_95[:, 0])
        for r in range(args.repeats):
            shares = rng.dirichlet(counts[r] + 0.5, size=args.draws)
            d = shares[:, 1] - shares[:, 2]
            lo, hi = np.quantile(d, ALPHAS / 2), np.quantile(d, 1 - ALPHAS / 2)
            inside["posterior"].append((lo <= truth[r]) & (truth[r] <= hi))
            width["posterior"].append(np.subtract(*np.quantile(d, [0.975, 0.025])))
            ends = np.array([agresti_min_interval(counts[r], 1 - al) for al in ALPHAS])
            inside["design"].append((ends[:, 0] <= truth[r]) & (truth[r] <= ends[:, 1]))
            width["design"].append(np.subtract(*agresti_min_interval(counts[r], 0.95)[::-1]))
            per_item = np.repeat([0.0, 1.0, -1.0, 0.0], counts[r])
            mean, sd = per_item.mean(), per_item.std(ddof=1) / np.sqrt(n)
            z = stats.norm.ppf(1 - ALPHAS / 2)
            inside["paired CLT"].append(np.abs(truth[r] - mean) <= z * sd)
            width["paired CLT"].append(2 * 1.959964 * sd)
        for name in inside:
            error = coverage_error(np.array(inside[name]))
            print(f"| {n} | {name} | {error:.4f} | {np.median(width[name]):.3f} |")
    print(f"noise floor at {args.repeats} repeats: about {0.8 * np.sqrt(0.1 / args.repeats):.4f}")


if __name__ == "__main__":
    main()
