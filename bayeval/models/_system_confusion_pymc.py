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

__all__ = ["sample_system_confusion", "system_confusion_model"]


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
    import pymc as pm
    import pytensor.tensor as pt

    P, K = patterns.shape
    C = spec.n_classes
    classes = np.arange(C)
    coords = {
        "system": systems,
        "true_class": classes,
        "predicted": classes,
        "pattern": np.arange(P),
    }
    one_hot = one_hot_patterns(patterns, C)  # (P, K * C)
    with pm.Model(coords=coords) as model:
        pi = pm.Dirichlet("class_prior", a=np.full(C, spec.class_prior), dims="true_class")
        theta = pm.Dirichlet(
            "confusion",
            a=np.broadcast_to(spec.confusion_prior, (K, C, C)),
            dims=("system", "true_class", "predicted"),
        )
        # log P(pattern p, class c) = log pi_c + sum_k log theta[k, c, j_pk]
        log_theta = pt.log(theta).transpose(0, 2, 1).reshape((K * C, C))
        log_joint = pt.log(pi)[None, :] + pt.dot(one_hot, log_theta)
        pm.Potential("labelled", (labelled * log_joint).sum())
        pm.Potential("unlabelled", (unlabelled * pm.math.logsumexp(log_joint, axis=1)).sum())
    return model


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
    import pymc as pm

    model = system_confusion_model(spec, patterns, labelled, unlabelled, systems)
    dt = pm.sample(
        draws=spec.draws // spec.chains,
        tune=1000,
        chains=spec.chains,
        random_seed=int(rng.integers(SEED_HIGH)),
        progressbar=False,
        nuts_sampler="pymc",  # pymc 6 silently prefers nutpie when it is installed
        target_accept=0.9,
        model=model,
    )
    post = dt["posterior"].to_dataset()
    pi = post["class_prior"].values  # (chains, draws, C)
    theta = post["confusion"].values  # (chains, draws, K, C, C)
    K, C = theta.shape[2], theta.shape[3]
    one_hot = one_hot_patterns(patterns, C)
    log_theta = np.log(theta).swapaxes(-1, -2).reshape(*theta.shape[:2], K * C, C)
    q = special.softmax(np.log(pi)[:, :, None, :] + one_hot @ log_theta, axis=-1)
    M = labelled + rng.multinomial(np.broadcast_to(unlabelled.astype(np.int64), q.shape[:-1]), q)
    return {"class_prior": pi, "confusion": theta, "counts": confusion_counts(M, one_hot, K)}
