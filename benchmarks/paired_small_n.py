"""Benchmark: two systems on a few items, paired: coverage error of the difference's intervals.

Bowyer, Aitchison & Ivanova's (2025) paired simulation: per repeat, accuracies ``theta_A,
theta_B ~ Uniform(0, 1)`` and ``rho ~ 2 Beta(4, 2) - 1``; each of ``N`` items is right for a
system when its coordinate of a bivariate normal (correlation ``rho``) falls below
``Phi^-1(theta)``. The *coverage error* of a method at ``N`` is the mean over 100 ``alpha`` in
[0.005, 0.2] of ``|coverage - (1 - alpha)|``, coverage the share of repeats whose ``1 - alpha``
interval holds ``theta_A - theta_B``. Methods: ``paired_difference``'s posterior
(Dirichlet(1/2 + counts), and ``prior="copula"``, the generator's model on a grid) and design
interval (Agresti & Min), and the paired CLT interval
(``mean(d) +- z sd(d) / sqrt(N)``, ``d`` the per-item difference; Miller 2024), the percentile
bootstrap of the items (``--draws`` resamples), and the paired
Bayes of Bowyer et al. re-implemented from their description: the generator's own prior
(a bivariate-probit model) by importance sampling with ``--draws`` prior draws as proposals
(shared by all repeats of an ``N``), its intervals the weighted quantiles (the limit of their
resampling). The coverage error of one study is noisy (the coverages at the 100 ``alpha`` move
together): ``--seeds`` repeats the study and reports the mean and standard deviation over seeds.
``--correlation`` changes how the simulation correlates the two systems' errors, to see the
copula prior where its assumption (shared errors) fails.

Run from the repository root::

    .venv/bin/python benchmarks/paired_small_n.py --repeats 10000
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import special, stats

from bayeval._core.paired_copula import outcome_shares
from bayeval.comparison.paired import agresti_min_interval, paired_difference

ALPHAS = np.linspace(0.005, 0.2, 100)


#: How the simulation draws the correlation of the two systems' errors: Bowyer et al.'s
#: (shared errors, mean 1/3), its mirror image (errors on different items, mean -1/3), uniform.
CORRELATIONS = {
    "shared": lambda rng, size: 2 * rng.beta(4, 2, size) - 1,
    "opposite": lambda rng, size: 1 - 2 * rng.beta(4, 2, size),
    "uniform": lambda rng, size: rng.uniform(-1, 1, size),
}


def simulate(n: int, repeats: int, rng: np.random.Generator, correlation: str = "shared"):
    """Return the true differences and the four outcome counts ``(repeats, 4)``."""
    theta = rng.random((repeats, 2))
    rho = CORRELATIONS[correlation](rng, repeats)
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
    return theta[:, 0] - theta[:, 1], outcome_shares(theta[:, 0], theta[:, 1], rho)


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
    parser.add_argument(
        "--seeds", type=int, default=1, help="independent studies, seeds 42, 43, ..."
    )
    parser.add_argument(
        "--correlation",
        choices=sorted(CORRELATIONS),
        default="shared",
        help="the simulation's correlation of the two systems' errors (Bowyer et al.'s: shared)",
    )
    args = parser.parse_args(argv)
    results = {}  # (n, method) -> [(coverage error, median width)] over seeds
    for seed in range(42, 42 + args.seeds):
        study(args, np.random.default_rng(seed), results)
    print(
        "| N | method | coverage error (mean +- sd over seeds) | median width of the 95% interval |"
    )
    print("|---|---|---|---|")
    for (n, name), values in results.items():
        errors, widths = np.array(values).T
        spread = f" +- {errors.std(ddof=1):.4f}" if len(errors) > 1 else ""
        print(f"| {n} | {name} | {errors.mean():.4f}{spread} | {widths.mean():.3f} |")


def study(args, rng: np.random.Generator, results: dict) -> None:
    """One study: every size, every method; appends to ``results``."""
    for n in (int(v) for v in args.sizes.split(",")):
        truth, counts = simulate(n, args.repeats, rng, args.correlation)
        inside = {
            "posterior": [],
            "posterior (copula)": [],
            "design": [],
            "paired CLT": [],
            "paired bootstrap": [],
            "Bowyer et al. (IS)": [],
        }
        width = {name: [] for name in inside}
        # the bootstrap's own generator, so adding it left every other method's draws unchanged
        resampling = np.random.default_rng(rng.bit_generator.seed_seq.spawn(1)[0])
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
        for start in range(0, args.repeats, 100):  # 100 repeats x draws at a time
            part = slice(start, start + 100)
            c, t = counts[part], truth[part]
            g = rng.standard_gamma(c[:, None, :] + 0.5, size=(c.shape[0], args.draws, 4))
            d = (g[..., 1] - g[..., 2]) / g.sum(axis=-1)  # Dirichlet(1/2 + counts) draws
            lo = np.quantile(d, ALPHAS / 2, axis=1).T
            hi = np.quantile(d, 1 - ALPHAS / 2, axis=1).T
            inside["posterior"].extend((lo <= t[:, None]) & (t[:, None] <= hi))
            width["posterior"].extend(np.subtract(*np.quantile(d, [0.975, 0.025], axis=1)))
            lo, hi = agresti_min_interval(c[:, None, :], 1 - ALPHAS)
            inside["design"].extend((lo <= t[:, None]) & (t[:, None] <= hi))
            lo, hi = agresti_min_interval(c, 0.95)
            width["design"].extend(hi - lo)
            # paired CLT on the per-item differences (1, -1 or 0)
            mean = (c[:, 1] - c[:, 2]) / n
            var = (c[:, 1] + c[:, 2] - n * mean**2) / (n - 1)
            sd = np.sqrt(np.maximum(var, 0.0) / n)
            z = stats.norm.ppf(1 - ALPHAS / 2)
            inside["paired CLT"].extend(np.abs(t[:, None] - mean[:, None]) <= z * sd[:, None])
            width["paired CLT"].extend(2 * 1.959964 * sd)
            # percentile bootstrap: the items resampled with replacement, ``draws`` times
            resampled = resampling.multinomial(n, c / n, size=(args.draws, c.shape[0]))
            d = (resampled[..., 1] - resampled[..., 2]) / n
            lo = np.quantile(d, ALPHAS / 2, axis=0).T
            hi = np.quantile(d, 1 - ALPHAS / 2, axis=0).T
            inside["paired bootstrap"].extend((lo <= t[:, None]) & (t[:, None] <= hi))
            width["paired bootstrap"].extend(np.subtract(*np.quantile(d, [0.975, 0.025], axis=0)))
        copula_intervals(counts, truth, args.draws, rng, inside, width)
        for name in inside:
            error = coverage_error(np.array(inside[name]))
            results.setdefault((n, name), []).append((error, np.median(width[name])))


def copula_intervals(counts, truth, draws, rng, inside, width) -> None:
    """``paired_difference(prior="copula")``'s intervals, computed once per distinct counts."""
    ends = {}
    for key in {tuple(row) for row in counts.tolist()}:
        first = np.repeat([1, 1, 0, 0], key)
        second = np.repeat([1, 0, 1, 0], key)
        result = paired_difference(first, second, prior="copula", draws=draws, rng=rng)
        d = result.posterior["posterior"]["difference"].values.ravel()
        ends[key] = np.quantile(d, np.concatenate([ALPHAS / 2, 1 - ALPHAS / 2, [0.025, 0.975]]))
    table = np.array([ends[tuple(row)] for row in counts.tolist()])
    k = ALPHAS.size
    lo, hi = table[:, :k], table[:, k : 2 * k]
    inside["posterior (copula)"].extend((lo <= truth[:, None]) & (truth[:, None] <= hi))
    width["posterior (copula)"].extend(table[:, -1] - table[:, -2])


if __name__ == "__main__":
    main()
