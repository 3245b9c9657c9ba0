"""The prior of :class:`~bayeval.models.ClassCalibration`'s cells and its posterior draws.

A cell's mix of true classes is its accuracy on its predicted class ``j`` and the rest, the
system's errors, spread over the other classes. The accuracies are pooled in two levels
(:meth:`CellPrior.hyper_draws`); the errors follow each predicted class's allocation over the
other classes, and with a judge the errors where the judge disagrees are of the judge's class
with a probability learnt from the labels (:meth:`CellPrior.error_draws`). Model card:
``models/class_calibration/spec.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

__all__ = ["CellDraws", "CellPrior", "categorical", "dirichlet"]


@dataclass(frozen=True)
class CellDraws:
    """Posterior draws of what the cells' mixes are drawn from, one row per draw.

    ``mu`` and ``kappa``: each accuracy group's typical accuracy and concentration (indices on
    :attr:`CellPrior.MU` and :attr:`CellPrior.KAPPA`, shape ``(n, groups)``); ``gamma``: the
    slope of the disagreeing cells' accuracy in the cell's odds ``w_jk`` (index on
    :attr:`CellPrior.GAMMA`, ``(n,)``); ``caught``: for each class ``k``, the share of the
    system's errors that are of class ``k`` where the judge says ``k`` and disagrees (``(n,
    C)``, zero without a judge); ``errors``: each predicted class's allocation of its other
    errors over the other classes (``(n, C, C)``, rows summing to one).
    """

    mu: np.ndarray
    kappa: np.ndarray
    gamma: np.ndarray
    caught: np.ndarray
    errors: np.ndarray

    def __len__(self) -> int:
        return self.mu.shape[0]

    def __getitem__(self, index) -> CellDraws:
        """Return the draws ``index`` (a slice or an array of rows)."""
        return CellDraws(
            self.mu[index],
            self.kappa[index],
            self.gamma[index],
            self.caught[index],
            self.errors[index],
        )


class CellPrior:
    """The cells' prior, in two levels, and the posterior draws of the cells' mixes.

    **Accuracies** are pooled in *groups*: the cells of predicted class ``j`` (with a judge,
    two groups: the cells where the judge agrees with the system and those where it does not,
    whose accuracies the labels must not be pooled across). The cells of group ``g`` draw
    theirs from ``Beta(kappa_g m, kappa_g (1 - m))`` with ``m = mu_g``, or where the judge
    disagrees and says ``k``, ``logit m = logit mu_g + gamma w_jk`` with ``w_jk = log(n_jk +
    1) - log(n_kk + 1)`` less its mean over the pairs ``j != k``: ``n_jk`` the items the system
    predicts ``j`` and the judge calls ``k``. (If the two were independent given the truth, the
    system's errors in cell ``(j, k)`` would be mostly class-``k`` items it missed, as many as
    ``n_kk`` times its rate of missing ``k`` for ``j``, so a cell large against ``n_kk`` holds
    mostly the system's right answers and the judge's errors; this needs no label, and a judge
    drawn to one class makes those cells large. ``gamma`` is learnt from the labels, so a judge
    for which this does not hold costs the slope.) The groups' typical accuracies ``mu_g`` come
    from ``Beta(lam_t nu_g, lam_t (1 - nu_g))`` around a regression on the group's size,
    ``logit nu_g = alpha_t + beta_t z_g`` with ``z_g`` the log of its items (plus one) less the
    mean over its level's groups. There is one ``(alpha_t, beta_t, lam_t)`` for all the
    groups, or with a judge one for the agreeing groups and one (with ``gamma``) for the
    others. The priors: ``expit(alpha_t)`` uniform, ``beta_t ~ Normal(0, 1)``, ``gamma``
    uniform on [-1.5, 3], ``kappa_g`` and ``lam_t`` log-uniform. The cells' accuracies are
    integrated out (beta-binomial likelihoods), and the hyperparameters live on grids, so
    their posterior is computed exactly.

    **Errors**: the items of predicted class ``j`` that are not of class ``j`` are of class
    ``c`` with probability ``e_j[c]``, ``e_j ~ Dirichlet(s_j)`` (``s_j`` the other classes in
    proportion to how often they are predicted, plus one each, total weight one), whatever the
    stratum. With a judge, an error where the judge says ``k != j`` is of class ``k`` with
    probability ``rho_k`` ("caught" by the judge) and otherwise follows ``e_j``. ``rho_k`` is
    learnt from every cell where the judge says ``k`` and disagrees, and pooled over the
    classes around a trend in the judge's class's size: ``rho_k ~ Beta(s m_k, s (1 - m_k))``,
    ``logit m_k = logit m + b z_k`` with ``z_k`` the log of the items the judge calls ``k``
    (plus one) less its mean over the classes; ``m`` uniform, ``b ~ Normal(0, 1)`` and ``s``
    log-uniform on grids (``s`` from 2, where ``m = 1/2`` and ``b = 0`` give the uniform
    prior, to 1,000). (If a judge errs at random, an error where it says ``k`` is more often of
    class ``k`` the more items are of class ``k``, so the share caught grows with the class.)
    A judge right about the system's errors thus sends them to its class, one that says
    nothing is learnt to catch nothing from all the classes' few errors together, and a judge
    drawn to one class is trusted there only as far as that class's labels show (a small
    ``s`` lets its ``rho_k`` stand apart from the trend).
    """

    # grids even in the logit of mu and nu (near-perfect systems resolved) and in the log of
    # kappa and lam; each point of mu and nu weighted by the width of its interval (uniform)
    MU, MU_EDGES = special.expit(np.linspace(-7.0, 7.0, 113)), np.linspace(-7.0625, 7.0625, 114)
    KAPPA = np.geomspace(0.2, 1000.0, 24)
    NU, NU_EDGES = special.expit(np.linspace(-6.0, 6.0, 49)), np.linspace(-6.125, 6.125, 50)
    LAM = np.geomspace(1.0, 2000.0, 24)
    #: the slope of nu's logit in the group's log size: steps of nu's grid (0.25), Normal(0, 1)
    BETA = np.linspace(-2.5, 2.5, 21)
    #: the slope of a disagreeing cell's accuracy (logit) in ``w_jk``: about one (more where
    #: the accuracy is low) if the judge and the system err independently, zero if ``w_jk``
    #: says nothing
    GAMMA = np.linspace(-1.5, 3.0, 10)
    #: the pooled prior of the judge's catches, ``rho_k ~ Beta(s m_k, s (1 - m_k))`` with
    #: ``logit m_k = logit m + b z_k``: ``m`` even in its logit (each point weighted by its
    #: interval's width, uniform), ``b ~ Normal(0, 1)`` (the slope in the centred log of the
    #: judge's class's items), ``s`` log-uniform
    CATCH_MEAN = special.expit(np.linspace(-4.0, 4.0, 17))
    CATCH_MEAN_EDGES = np.linspace(-4.25, 4.25, 18)
    CATCH_SLOPE = np.linspace(-1.5, 1.5, 7)
    CATCH_CONCENTRATION = np.geomspace(2.0, 1000.0, 8)
    #: the most distinct draws kept; more draws reuse them
    KEPT = 2000
    #: chains of the errors' Gibbs sampler (with a judge), and the sweeps each discards
    ERROR_CHAINS, ERROR_BURN = 20, 50

    def __init__(
        self,
        predicted: np.ndarray,
        n_classes: int,
        n_strata: int,
        levels: int = 1,
        cell_size: np.ndarray | None = None,
    ):
        C = self.n_classes = n_classes
        # cells (predicted class, rank of the judge's class, stratum); see ClassCalibration.cells
        self.cell_class, rank = np.divmod(np.repeat(np.arange(C * levels), n_strata), levels)
        self.cell_judge = (self.cell_class + rank) % C  # the judge's class (with a judge)
        self.disagree = rank > 0
        self.judged = levels > 1
        self.correct = np.eye(C, dtype=bool)[self.cell_class]  # (cells, C): the predicted class
        self.other = ~np.eye(C, dtype=bool)  # (C, C): the wrong classes of each predicted class
        # s: the other classes in proportion to how often they are predicted (plus one)
        share = np.where(self.other, np.bincount(predicted, minlength=C) + 1.0, 0.0)
        self.error_share = share / share.sum(axis=1, keepdims=True)  # rows sum to 1
        # accuracy groups: the predicted class, and with a judge whether it agrees
        kinds = 2 if self.judged else 1
        self.cell_group = self.cell_class * kinds + self.disagree
        self.top = np.arange(C * kinds) % kinds  # each group's level (alpha, beta, lam)
        self.n_top = kinds
        # log P(mu | nu, lam) of each mu of the grid (its density times its interval's width),
        # for every (nu, lam): (mu, nu, lam)
        a = self.LAM[None, :] * self.NU[:, None]
        b = self.LAM[None, :] * (1 - self.NU[:, None])
        mu = self.MU[:, None, None]
        self.upper = (
            (a - 1) * np.log(mu) + (b - 1) * np.log1p(-mu) - special.betaln(a, b)
            + np.log(np.diff(special.expit(self.MU_EDGES)))[:, None, None]
        )  # fmt: skip
        self.prior_mass = np.exp(self.upper).reshape(self.MU.size, -1)  # (mu, nu * lam)
        # the levels' prior on (alpha, beta): alpha on nu's grid (expit(alpha) uniform)
        self.alpha_beta_prior = (
            np.log(np.diff(special.expit(self.NU_EDGES)))[:, None]
            + stats.norm.logpdf(self.BETA)[None, :]
        )
        self.nu_index = self._nu_index(cell_size)
        self._last_pooling = (b"", None)  # the last labels, and their _pooling
        # each cell's w_jk where the judge disagrees (k != j): log (n_jk + 1) / (n_kk + 1),
        # centred over the pairs
        self.gammas = self.GAMMA if self.judged and cell_size is not None else np.zeros(1)
        self.judge_odds = np.zeros(self.cell_class.size)
        # z_k: the log of the items the judge calls k (plus one), centred over the classes
        self.catch_covariate = np.zeros(C)
        if self.gammas.size > 1:
            log_judged = np.log1p(np.bincount(self.cell_judge, weights=cell_size, minlength=C))
            self.catch_covariate = log_judged - log_judged.mean()
            pair = np.zeros((C, C))  # items predicted j that the judge says k
            np.add.at(pair, (self.cell_class, self.cell_judge), cell_size)
            odds = np.log1p(pair) - np.log1p(np.diag(pair))[None, :]
            w = odds - odds[self.other].mean()
            self.judge_odds[self.disagree] = w[self.cell_class, self.cell_judge][self.disagree]

    def _nu_index(self, cell_size: np.ndarray | None) -> np.ndarray:
        """Return ``(groups, alpha, beta)``: the index on nu's grid of each group's mean.

        ``logit nu_g = alpha + beta z_g``, ``z_g`` the log of the group's items plus one, less
        its level's mean (over the groups that hold items; an empty group has ``z_g = 0``).
        Without the cells' sizes every ``z_g`` is 0 (one mean for the level).
        """
        G = self.top.size
        z = np.zeros(G)
        if cell_size is not None:
            size = np.bincount(self.cell_group, weights=cell_size, minlength=G)
            log_size = np.log1p(size)
            for t in range(self.n_top):
                held = (self.top == t) & (size > 0)
                z[held] = log_size[held] - log_size[held].mean()
        step = np.diff(special.logit(self.NU[:2]))[0]
        shift = np.rint(self.BETA[None, :] * z[:, None] / step).astype(np.int64)
        alpha = np.arange(self.NU.size)[None, :, None]
        return np.clip(alpha + shift[:, None, :], 0, self.NU.size - 1)

    def _cell_means(self, mu: np.ndarray, gamma: np.ndarray, judge_odds: np.ndarray) -> np.ndarray:
        """Return a cell's prior mean accuracy: ``logit m = logit mu + gamma w`` (broadcast)."""
        return special.expit(special.logit(mu) + gamma * judge_odds)

    def _likelihood(self, labelled_cells: np.ndarray) -> np.ndarray:
        """Return ``log P(labels of group g's cells | gamma, mu, kappa)``: (gamma, mu, kappa, G).

        Only the labelled cells count (an unlabelled cell's likelihood is one), and cells of
        equal counts and ``w_jk`` share their beta-binomial terms. A cell without a
        slope (``w = 0``: the judge agrees, or there is no judge) is the same at every
        ``gamma`` and is computed once.
        """
        right, wrong = self._right_wrong(labelled_cells)
        cells = np.flatnonzero(right + wrong > 0)
        key = np.column_stack([right[cells], wrong[cells], self.judge_odds[cells]])
        unique, inverse = np.unique(key, axis=0, return_inverse=True)
        per_group = np.zeros((unique.shape[0], self.top.size))  # cells of each kind per group
        np.add.at(per_group, (inverse.ravel(), self.cell_group[cells]), 1.0)
        out = np.zeros((self.gammas.size, self.MU.size, self.KAPPA.size, self.top.size))
        for odds in np.unique(unique[:, 2]):
            same = unique[:, 2] == odds
            r, w = unique[same, :2].T
            gammas = self.gammas if odds != 0 else self.gammas[:1]
            mean = self._cell_means(self.MU[None, :], gammas[:, None], odds)[..., None, None]
            a = self.KAPPA[None, None, :, None] * mean
            b = self.KAPPA[None, None, :, None] * (1 - mean)
            out += (special.betaln(a + r, b + w) - special.betaln(a, b)) @ per_group[same]
        return out

    def _given_nu(self, mu_likelihood: np.ndarray) -> np.ndarray:
        """Return ``log P(labels of a group | nu, lam)`` with ``mu`` summed out on its grid.

        ``mu_likelihood`` is ``(slopes, mu, groups)``; the result ``(slopes, groups, nu,
        lam)``. The sum over ``mu`` is a product of matrices, ``exp(likelihood - its max)``
        times the prior's masses ``exp(upper)``: where both are negligible it underflows to
        ``-inf``, a state whose posterior weight is below ``exp(-700)`` of the best one's.
        """
        top = mu_likelihood.max(axis=1, keepdims=True)
        scaled = np.swapaxes(np.exp(mu_likelihood - top), 1, 2)  # (slopes, groups, mu)
        with np.errstate(divide="ignore"):
            summed = np.log(scaled @ self.prior_mass)
        return (summed + np.swapaxes(top, 1, 2)).reshape(*summed.shape[:2], *self.upper.shape[1:])

    def hyper_draws(self, labelled_cells, n: int, rng: np.random.Generator) -> CellDraws:
        """Return ``n`` posterior draws of the accuracies' pooling and of the errors.

        The pooling is exact on the grids: the levels' ``(gamma, alpha, beta, lam)`` from their
        posterior, then each group's ``mu_g`` and ``kappa_g`` given them; the errors from
        :meth:`error_draws` (``KEPT`` distinct draws at most, resampled when ``n`` is larger).
        """
        G = self.top.size
        likelihood, mu_likelihood, levels = self._pooling(labelled_cells)
        kept = min(n, self.KEPT)
        nu, lam = np.empty((kept, G), dtype=np.int64), np.empty((kept, G), dtype=np.int64)
        gamma = np.zeros(kept, dtype=np.int64)  # any: the agreeing cells have w = 0
        for t, (slopes, _, joint) in enumerate(levels):
            groups = np.flatnonzero(self.top == t)
            weight = np.exp(joint - joint.max()).ravel()
            state = rng.choice(weight.size, size=kept, p=weight / weight.sum())
            q, alpha, beta, lam_t = np.unravel_index(state, joint.shape)
            if t == 1:
                gamma = slopes[q]
            nu[:, groups] = self.nu_index[groups][:, alpha, beta].T
            lam[:, groups] = lam_t[:, None]
        # mu_g given its level's draw and the labels: (kept, group, mu)
        prior = np.moveaxis(self.upper[:, nu, lam], 0, -1)
        mu = categorical(prior + np.swapaxes(mu_likelihood[gamma], 1, 2), rng, axis=-1)
        pick = rng.integers(0, kept, n) if n > kept else slice(None)
        mu, gamma = mu[pick], gamma[pick]
        # kappa_g given gamma, mu_g and the labels
        kappa = categorical(
            np.moveaxis(likelihood[gamma[:, None], mu, :, np.arange(G)], -1, 0), rng
        )
        caught, errors = self.error_draws(labelled_cells, n, rng)
        return CellDraws(mu, kappa, gamma, caught, errors)

    def _pooling(self, labelled_cells: np.ndarray):
        """Return the labels' likelihood, with ``kappa`` summed out, and each level's joint.

        ``(likelihood (gamma, mu, kappa, group), mu_likelihood (gamma, mu, group), [(slopes,
        informed groups, joint) per level])``. The last labels' are kept (read-only) for the
        next call with the same labels: the evidence, then the draws, ask for them.
        """
        labels_key = np.ascontiguousarray(labelled_cells, dtype=float).tobytes()
        if self._last_pooling[0] == labels_key:
            return self._last_pooling[1]
        likelihood = self._likelihood(labelled_cells)
        mu_likelihood = special.logsumexp(likelihood, axis=2)
        # the groups the labels inform (an unlabelled group's likelihood is a constant)
        G = self.top.size
        labelled = np.bincount(self.cell_group, weights=labelled_cells.sum(axis=1), minlength=G) > 0
        levels = [self._level_joint(t, mu_likelihood, labelled) for t in range(self.n_top)]
        self._last_pooling = (labels_key, (likelihood, mu_likelihood, levels))
        return likelihood, mu_likelihood, levels

    def _level_joint(self, t: int, mu_likelihood: np.ndarray, labelled: np.ndarray):
        """Return level ``t``'s slopes, informed groups and the log joint of its pooling.

        The joint is ``log P(gamma, alpha, beta, lam, labels)`` up to a constant, shaped
        (slopes, alpha, beta, lam); from each labelled group's likelihood at every ``(nu,
        lam)`` with ``mu`` summed out (and ``kappa`` summed, not averaged, in
        ``mu_likelihood``); a group without labels contributes one.
        """
        groups = np.flatnonzero(self.top == t)
        slopes = np.arange(self.gammas.size) if t == 1 else np.array([0])
        informed = groups[labelled[groups]]
        given_nu = self._given_nu(mu_likelihood[slopes][:, :, informed])
        joint = np.zeros((slopes.size, *self.nu_index.shape[1:], self.LAM.size))
        joint += self.alpha_beta_prior[None, ..., None]
        for i, g in enumerate(informed):
            joint += given_nu[:, i, self.nu_index[g]]
        return slopes, informed, joint

    def log_evidence(self, labelled_cells: np.ndarray) -> float:
        """Return ``log P(right or wrong of every labelled item)``: the accuracies' evidence.

        Every prior of the pooling normalised on its grid (``gamma``, ``lam`` and ``kappa``
        uniform on theirs, ``(alpha, beta)`` by their masses), so that the evidence of two
        ways of cutting the same items into cells (with a judge and without one) can be
        compared: :meth:`ClassCalibration.posterior
        <bayeval.models.ClassCalibration.posterior>` weighs the two by it. Which class an
        error is of does not enter.
        """
        log_norm = special.logsumexp(self.alpha_beta_prior) + np.log(self.LAM.size)
        total = 0.0
        for slopes, informed, joint in self._pooling(labelled_cells)[2]:
            total += special.logsumexp(joint) - log_norm - np.log(slopes.size)
            total -= informed.size * np.log(self.KAPPA.size)
        return float(total)

    def error_draws(self, labelled_cells, n: int, rng: np.random.Generator):
        """Return ``(caught, errors)``: ``n`` posterior draws of every ``rho_k`` and ``e_j``.

        Without a judge the allocations' posteriors are Dirichlet. With one, a Gibbs chain
        alternates the allocations given the errors not caught by the judge; the pooling's
        ``(m, b, s)`` (``rho`` summed out) and then each ``rho_k`` given how many were; and how
        many of the labelled errors of class ``k`` where the judge says ``k`` and disagrees
        were caught: ``Binomial(count, rho_k / (rho_k + (1 - rho_k) e_j[k]))``.
        ``ERROR_CHAINS`` chains run side by side, each ``ERROR_BURN`` sweeps discarded; where
        no such error is labelled nothing is imputed, and every sweep is an independent draw
        from the posterior.
        """
        C = self.n_classes
        wrong = np.where(self.correct, 0.0, labelled_cells)  # (cells, C): labelled errors
        by_class = np.zeros((C, C))
        np.add.at(by_class, self.cell_class, wrong)  # (j, c): predicted j, of class c
        if not self.judged:
            alpha = np.broadcast_to(self.error_share + by_class, (n, C, C))
            return np.zeros((n, C)), dirichlet(rng, alpha, where=self.other)
        # where the judge disagrees (says k != j): the labelled errors of class k, and the others
        cells = np.flatnonzero(self.disagree)
        of_judge = wrong[cells, self.cell_judge[cells]]
        ambiguous = np.zeros((C, C))
        np.add.at(ambiguous, (self.cell_class[cells], self.cell_judge[cells]), of_judge)
        missed = np.bincount(
            self.cell_judge[cells], weights=wrong[cells].sum(axis=1) - of_judge, minlength=C
        )
        j, k = np.nonzero(ambiguous)
        count = ambiguous[j, k].astype(np.int64)
        of_class = np.eye(C, dtype=np.int64)[k]  # (j, k) pairs to the judge's class k
        # each rho_k's trials: the errors where the judge says k and disagrees, caught or not
        trials = missed.astype(np.int64) + count @ of_class
        catch = _CatchPooling(self, trials, count @ of_class)
        plain = by_class - ambiguous  # errors that only the allocations explain
        kept = min(n, self.KEPT)
        chains = min(kept, self.ERROR_CHAINS)
        sweeps = -(-kept // chains)  # kept per chain
        burn = self.ERROR_BURN if count.size else 0
        caught_draws, error_draws = np.empty((sweeps, chains, C)), np.empty((sweeps, chains, C, C))
        caught = rng.binomial(count, 0.5, size=(chains, count.size))
        base = np.broadcast_to(self.error_share + plain, (chains, C, C))
        for sweep in range(burn + sweeps):
            alpha = base.copy()
            alpha[:, j, k] += count - caught
            errors = dirichlet(rng, alpha, where=self.other)
            rho = catch.draw(caught @ of_class, rng)
            # both terms underflowing to zero is a state of no weight: none caught
            either = np.maximum(rho[:, k] + (1.0 - rho[:, k]) * errors[:, j, k], 1e-300)
            p_caught = rho[:, k] / either
            caught = rng.binomial(count, p_caught)
            if sweep >= burn:
                caught_draws[sweep - burn] = rho
                error_draws[sweep - burn] = errors
        # chain by chain, so that a batch of sweeps is one chain's
        caught_draws = np.swapaxes(caught_draws, 0, 1).reshape(-1, C)[:kept]
        error_draws = np.swapaxes(error_draws, 0, 1).reshape(-1, C, C)[:kept]
        pick = rng.integers(0, kept, n) if n > kept else slice(None)
        return caught_draws[pick], error_draws[pick]

    def mixes(
        self, labelled_cells, draws: CellDraws, rng: np.random.Generator, cells=slice(None)
    ) -> np.ndarray:
        """Return the mixes ``(n, len(cells), C)`` of ``cells`` given :meth:`hyper_draws`' draws.

        Each cell's accuracy from its Beta posterior; its errors of the judge's class ``k``
        with probability ``rho_k`` where the judge disagrees, and otherwise by its class's
        allocation. ``cells`` (an index of the cells, all by default) picks the cells drawn.
        """
        right, wrong = self._right_wrong(labelled_cells[cells], cells)
        group, judge = self.cell_group[cells], self.cell_judge[cells]
        mean = self._cell_means(
            self.MU[draws.mu][:, group], self.gammas[draws.gamma][:, None], self.judge_odds[cells]
        )
        kappa = self.KAPPA[draws.kappa][:, group]
        accuracy = rng.beta(kappa * mean + right, kappa * (1 - mean) + wrong)
        caught = np.where(self.disagree[cells], draws.caught[:, judge], 0.0)[..., None]
        spread = (
            caught * np.eye(self.n_classes)[judge]
            + (1 - caught) * draws.errors[:, self.cell_class[cells]]
        )
        correct = self.correct[cells]
        return np.where(correct, accuracy[..., None], (1 - accuracy[..., None]) * spread)

    def _right_wrong(self, labelled_cells: np.ndarray, cells=slice(None)):
        """Return the labelled items of ``cells`` of their predicted class, and the others."""
        right = (labelled_cells * self.correct[cells]).sum(axis=1)
        return right, labelled_cells.sum(axis=1) - right


class _CatchPooling:
    """The pooled prior of the judge's catches and its posterior given how many were caught.

    ``rho_k ~ Beta(s m_k, s (1 - m_k))``, ``logit m_k = logit m + b z_k``, with ``(m, b, s)`` on
    :class:`CellPrior`'s grids. Given ``hits_k`` of ``trials_k`` caught, ``(m, b, s)``'s
    posterior is the prior times a product of beta-binomial terms (``rho`` summed out),
    tabulated here for every ``hits_k`` from 0 to ``most_hits_k`` (the trials less the errors
    known not to be caught), and then each ``rho_k ~ Beta(s m_k + hits_k, s (1 - m_k) +
    trials_k - hits_k)``.
    """

    def __init__(self, prior: CellPrior, trials: np.ndarray, most_hits: np.ndarray):
        logit_m, b, s = (
            x.ravel()[:, None]
            for x in np.meshgrid(
                special.logit(prior.CATCH_MEAN),
                prior.CATCH_SLOPE,
                prior.CATCH_CONCENTRATION,
                indexing="ij",
            )
        )
        # each state's m_k, its logit kept within +-6 (s m_k >= 0.005)
        m = special.expit(np.clip(logit_m + b * prior.catch_covariate[None, :], -6.0, 6.0))
        self.a, self.b, self.trials = s * m, s * (1 - m), trials  # (states, C)
        # m uniform (each point its interval's width), b Normal(0, 1), s log-uniform: the
        # states in the meshgrid's order (m, b, s)
        width = np.log(np.diff(special.expit(prior.CATCH_MEAN_EDGES)))
        slope = stats.norm.logpdf(prior.CATCH_SLOPE)
        log_prior = np.repeat(np.add.outer(width, slope).ravel(), prior.CATCH_CONCENTRATION.size)

        def beta_binomial(k, hits):  # log P(hits of class k | state), less the binomial term
            n = trials[k]
            return (
                special.gammaln(self.a[:, k] + hits) - special.gammaln(self.a[:, k])
                + special.gammaln(self.b[:, k] + n - hits) - special.gammaln(self.b[:, k])
                - special.gammaln(s + n) + special.gammaln(s)
            )  # fmt: skip

        # the classes whose hits cannot vary enter the prior once; the others a column per
        # value of hits_k, from their offset
        fixed, self.varies = np.flatnonzero(most_hits == 0), np.flatnonzero(most_hits > 0)
        self.log_prior = log_prior + beta_binomial(fixed, np.zeros(fixed.size)).sum(axis=1)
        columns = most_hits[self.varies] + 1
        self.offset = np.cumsum(columns) - columns
        hits = np.arange(columns.sum()) - np.repeat(self.offset, columns)
        self.table = beta_binomial(np.repeat(self.varies, columns), hits)

    def draw(self, hits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Return one ``rho`` draw per row of ``hits`` (``(chains, C)``), ``(m, b, s)`` first."""
        varying = self.table[:, self.offset + hits[:, self.varies]].sum(axis=-1)
        state = categorical(self.log_prior[:, None] + varying, rng, axis=0)
        return rng.beta(self.a[state] + hits, self.b[state] + self.trials - hits)


def categorical(log_weight: np.ndarray, rng: np.random.Generator, axis: int = 0) -> np.ndarray:
    """Return one draw along ``axis`` with probabilities ``exp(log_weight)`` (unnormalised).

    By the inverse of the cumulative weights: the first index whose cumulative weight reaches
    a uniform draw in ``(0, total]`` (an index of zero weight is never drawn).
    """
    weight = np.exp(log_weight - log_weight.max(axis=axis, keepdims=True))
    cumulative = np.cumsum(weight, axis=axis)
    total = np.take(cumulative, [-1], axis=axis)
    threshold = (1.0 - rng.random(total.shape)) * total
    return (cumulative < threshold).sum(axis=axis)


def dirichlet(rng: np.random.Generator, alpha: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Dirichlet draws along the last axis over the entries ``where`` (the others zero).

    A row whose gammas all underflow (tiny concentrations) gets its largest concentration.
    """
    g = np.where(where, rng.standard_gamma(np.where(where, alpha, 1.0)), 0.0)
    total = g.sum(axis=-1, keepdims=True)
    top = where & (alpha == np.where(where, alpha, -1.0).max(axis=-1, keepdims=True))
    fallback = top / top.sum(axis=-1, keepdims=True)
    return np.where(total > 0, g / np.where(total > 0, total, 1.0), fallback)
