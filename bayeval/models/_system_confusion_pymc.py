"""The system-confusion model in PyMC, sampled with NUTS (``engine="pymc"``).

:meth:`bayeval.models.SystemConfusion.posterior` calls :func:`sample_system_confusion` when the
specification's engine is ``"pymc"``. The classes of the unlabelled items are summed out of the
likelihood (a mixture per pattern of predictions), NUTS draws the prevalences and confusion
matrices, and the unlabelled items' classes are then drawn given each draw, as the fast engine's
Gibbs sweep draws them. Model card: ``models/system_confusion/spec.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import special

from bayeval._core.confusion_gibbs import confusion_counts, one_hot_patterns
from bayeval.models._common import SEED_HIGH

if TYPE_CHECKING:
    import pymc as pm

__all__ = [
    "confusion_mixture_model",
    "sample_confusion_mixture",
    "sample_system_confusion",
    "system_confusion_model",
]


def system_confusion_model(
    spec: Any, patterns: np.ndarray, labelled: np.ndarray, unlabelled: np.ndarray, systems: list
) -> pm.Model:
    """Build the model with the unlabelled items' classes summed out.

    Parameters
    ----------
    spec : bayeval.models.SystemConfusion
        The priors.
    patterns : ndarray of int, shape (P, K)
        Distinct predictions of the ``K`` systems.
    labelled : ndarray, shape (P, C)
        Labelled items per pattern and class.
    unlabelled : ndarray, shape (P,)
        Unlabelled items per pattern.
    systems : list of str
        Names of the systems (the ``system`` coordinate).

    Returns
    -------
    pymc.Model
        Coordinates ``system``, ``true_class``, ``predicted``, ``pattern``; free variables
        ``class_prior`` (``true_class``) and ``confusion`` (``system``, ``true_class``,
        ``predicted``); potentials ``labelled`` and ``unlabelled`` (the log-likelihood).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models import SystemConfusion
    >>> patterns = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> labelled = np.array([[5.0, 0], [1, 1], [2, 1], [0, 4]])
    >>> model = system_confusion_model(SystemConfusion(), patterns, labelled,
    ...                                np.array([50, 10, 10, 30]), ["a", "b"])
    >>> [v.name for v in model.free_RVs]
    ['class_prior', 'confusion']
    """
    C = spec.n_classes
    return confusion_mixture_model(
        np.full(C, spec.class_prior),
        spec.confusion_prior,
        one_hot_patterns(patterns, C),
        labelled,
        unlabelled,
        {"system": systems, "true_class": np.arange(C), "predicted": np.arange(C)},
    )


def confusion_mixture_model(
    class_prior: np.ndarray,
    confusion_prior: np.ndarray,
    responses: np.ndarray,
    labelled: np.ndarray,
    unlabelled: np.ndarray,
    coords: dict,
    stratum: np.ndarray | None = None,
) -> pm.Model:
    """Build the Dawid-Skene mixture of responders (systems or annotators), classes summed out.

    ``responses`` ``(P, K * C)`` as in :func:`bayeval._core.confusion_gibbs.gibbs_responses`;
    ``coords`` names the responders, the true classes and the answers, in that order (their
    dims are the keys); a ``pattern`` coordinate is added. With ``stratum`` (each pattern's),
    ``class_prior`` has a ``stratum`` dim: prevalences per stratum.
    """
    import pymc as pm
    import pytensor.tensor as pt

    responder, true_class, answer = coords
    K, C = len(coords[responder]), len(coords[true_class])
    extra = {"pattern": np.arange(responses.shape[0])}
    if stratum is not None:
        extra["stratum"] = np.arange(int(stratum.max()) + 1)
    with pm.Model(coords={**coords, **extra}) as model:
        if stratum is None:
            pi = pm.Dirichlet("class_prior", a=class_prior, dims=true_class)
            log_pi = pt.log(pi)[None, :]
        else:
            shape = (len(extra["stratum"]), len(class_prior))
            pi = pm.Dirichlet("class_prior", a=np.broadcast_to(class_prior, shape),
                              dims=("stratum", true_class))  # fmt: skip
            log_pi = pt.log(pi)[stratum]
        theta = pm.Dirichlet(
            "confusion",
            a=np.broadcast_to(confusion_prior, (K, C, C)),
            dims=(responder, true_class, answer),
        )
        # log P(pattern p, class c) = log pi_c + sum_k n_pkj log theta[k, c, j]
        log_theta = pt.log(theta).transpose(0, 2, 1).reshape((K * C, C))
        log_joint = log_pi + pt.dot(responses, log_theta)
        pm.Potential("labelled", (labelled * log_joint).sum())
        pm.Potential("unlabelled", (unlabelled * pm.math.logsumexp(log_joint, axis=1)).sum())
    return model


def sample_confusion_mixture(model: pm.Model, draws: int, chains: int, rng) -> tuple:
    """NUTS on a :func:`confusion_mixture_model`: ``class_prior`` and ``confusion`` draws.

    Returns ``(chains, draws, C)`` and ``(chains, draws, K, C, C)`` arrays.
    """
    import pymc as pm

    dt = pm.sample(
        draws=draws // chains,
        tune=1000,
        chains=chains,
        random_seed=int(rng.integers(SEED_HIGH)),
        progressbar=False,
        nuts_sampler="pymc",  # pymc 6 silently prefers nutpie when it is installed
        target_accept=0.9,
        model=model,
    )
    post = dt["posterior"].to_dataset()
    return post["class_prior"].values, post["confusion"].values


def sample_system_confusion(
    spec: Any,
    patterns: np.ndarray,
    labelled: np.ndarray,
    unlabelled: np.ndarray,
    systems: list,
    *,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Draw the parameters with NUTS, then the unlabelled items' classes given each draw.

    Returns the fast engine's layout: ``class_prior`` ``(chains, draws, C)``, ``confusion`` and
    ``counts`` ``(chains, draws, K, C, C)``.
    """
    model = system_confusion_model(spec, patterns, labelled, unlabelled, systems)
    pi, theta = sample_confusion_mixture(model, spec.draws, spec.chains, rng)
    K, C = theta.shape[2], theta.shape[3]
    one_hot = one_hot_patterns(patterns, C)
    log_theta = np.log(theta).swapaxes(-1, -2).reshape(*theta.shape[:2], K * C, C)
    q = special.softmax(np.log(pi)[:, :, None, :] + one_hot @ log_theta, axis=-1)
    M = labelled + rng.multinomial(np.broadcast_to(unlabelled.astype(np.int64), q.shape[:-1]), q)
    return {"class_prior": pi, "confusion": theta, "counts": confusion_counts(M, one_hot, K)}
