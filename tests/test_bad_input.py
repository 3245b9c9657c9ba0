"""Every declared parameter of every public function refuses bad input with one message style.

The functions decorated with ``bayeval._constraints.validate`` carry their constraints; each is
called with a bad value of one parameter (the others valid or, when unconstrained, never
reached: the check runs before the body). The message must name the parameter, show the value
as plain Python and say what is allowed.
"""

import importlib
import inspect
import pkgutil
import re

import numpy as np
import pytest

import bayeval
from bayeval._constraints import (
    AnyOf,
    Array,
    Flag,
    Flags,
    Instance,
    Integer,
    OneOf,
    Optional,
    Pair,
    Prob,
    Real,
    SequenceOf,
    Text,
    Whole,
    shown,
    validate,
)


def _decorated():
    """Every (qualified name, function) in bayeval with declared constraints."""
    found = {}
    for info in pkgutil.walk_packages(bayeval.__path__, "bayeval."):
        deprecated = ("session_exchange", ".sample", ".report", "curves.envelope")
        if info.name.endswith(deprecated) or ".cli" in info.name:
            continue  # deprecated paths warn on import; the CLI reports through typer
        module = importlib.import_module(info.name)
        for _, obj in vars(module).items():
            candidates = [obj]
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                candidates += list(vars(obj).values())
            for func in candidates:
                if callable(func) and hasattr(func, "__constraints__"):
                    found[f"{func.__module__}.{func.__qualname__}"] = func
    return found


DECORATED = _decorated()
CASES = [
    pytest.param(func, name, id=f"{qualname}:{name}")
    for qualname, func in sorted(DECORATED.items())
    for name in func.__constraints__
]


def test_the_public_entry_points_declare_their_constraints():
    names = set(DECORATED)
    for expected in (
        "bayeval.intervals.api.recall_interval",
        "bayeval.intervals.api.binomial_interval",
        "bayeval.sampling.run.evaluate",
        "bayeval.simulate.coverage.coverage_study",
        "bayeval.simulate.binomial.binomial_coverage",
        "bayeval.ondemand.evaluator.OnDemandEvaluator.table",
        "bayeval.sampling.base.Sampler.__init__",
        "bayeval.sampling.base.Sampler.ask",
        "bayeval.sampling.base.Sampler.estimate",
        "bayeval.sampling.stochastic.StochasticAIS.ask",
        "bayeval.sampling.stratified.Stratified.__init__",
        "bayeval.sampling.active_stratified.ActiveStratified.__init__",
        "bayeval.sampling.static.StaticIS.__init__",
        "bayeval.sampling.oasis.OASIS.__init__",
        "bayeval.sampling.ais.AIS.__init__",
        "bayeval.curves.planning.plan_logstrat",
        "bayeval.curves.logstrat.logstrat",
        "bayeval.curves.paula.paula",
        "bayeval.curves.random_baseline.random_baseline",
        "bayeval.curves.adastrat.adastrat",
        "bayeval.curves.geometry.geometric_points",
        "bayeval.oracles.Oracle.__init__",
        "bayeval.oracles.LabelOracle.__init__",
        "bayeval.oracles.CallableOracle.__init__",
        "bayeval.oracles.NoisyOracle.__init__",
        "bayeval.strata.partition.stratify",
        "bayeval.pool.Pool.stratify",
        "bayeval.ondemand.evaluator.OnDemandEvaluator.__init__",
        "bayeval.ondemand.evaluator.OnDemandEvaluator.submit",
        "bayeval.ondemand.evaluator.OnDemandEvaluator.tell",
        "bayeval.session.core.Session.stop_reason",
        "bayeval.models.score_calibration.ScoreCalibration",
        "bayeval.models.cell_rates.CellRates",
        "bayeval.models.dirichlet_tree.DirichletTree",
        "bayeval.models.system_confusion.SystemConfusion",
        "bayeval.models.consensus_calibration.ConsensusCalibration",
        "bayeval.models.prediction_patterns.PredictionPatterns",
        "bayeval.sampling.model_selection.ModelSelection.__init__",
        "bayeval.sampling.model_selection.ModelSelection.run",
        "bayeval.comparison.compare.compare",
        "bayeval.comparison.paired.paired_difference",
        "bayeval.comparison.stratified.stratified_difference",
        "bayeval.measures.classification.FScore",
        "bayeval.measures.curve.PrecisionRecallCurve",
        "bayeval.intervals.design.expected_interval_width",
        "bayeval.intervals.design.expected_width_grid",
        "bayeval.intervals.design.recommend_allocation",
        "bayeval.intervals.design.recall_estimator_distribution",
        "bayeval.intervals.design.EstimatorDistribution.quantile",
        "bayeval.curves.posterior.posterior_band",
        "bayeval.curves.posterior.derived_from_posterior",
        "bayeval.curves.derived.rank_grid",
        "bayeval.curves.result.CurveResult.posterior_band",
        "bayeval.models.segment_yields.sample_segment_yields",
        "bayeval.models.segment_yields.segment_yields_model",
        "bayeval.models.hierarchical.sample_hierarchical_yields",
        "bayeval.models.hierarchical.hierarchical_yields_model",
        "bayeval.models.dirichlet_tree.BoundTree.posterior",
        "bayeval.models.dirichlet_tree.BoundTree.mode",
        "bayeval.ondemand.synthetic.synthetic_universe",
        "bayeval.ondemand.synthetic.SyntheticUniverse.exhaustive",
        "bayeval.datasets.scale_up.scale_up",
        "bayeval.datasets.scale_up.window_average",
        "bayeval.datasets.scale_up.ScaledList.__init__",
        "bayeval.datasets.scale_up.ScaledList.materialise",
        "bayeval.datasets.files.read_scored_items",
        "bayeval.plots.sampling.pr_thresholds",
        "bayeval.plots.curves.plot_curve",
        "bayeval.simulate.battery.battery_pool",
        "bayeval.simulate.battery.coverage_battery",
        "bayeval.simulate.battery.honesty_run",
        "bayeval.simulate.scenarios.Scenario.realizations",
        "bayeval.simulate.scenarios.Scenario",
        "bayeval.stratified_sample.StratifiedSample.__init__",
        "bayeval.strata.tree.tree_over_strata",
        "bayeval.pool.Pool.__init__",
        "bayeval.session.core.Session.tell",
        "bayeval.session.core.Session.record",
        "bayeval.session.exchange.export_pending",
        "bayeval.session.exchange.import_answers",
    ):
        assert expected in names, expected


@pytest.mark.parametrize(("func", "name"), CASES)
def test_bad_value_is_refused_with_a_clear_message(func, name):
    constraints = func.__constraints__
    signature = inspect.signature(func)
    arguments = {}
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.name in constraints:
            arguments[parameter.name] = constraints[parameter.name].good_example()
        elif parameter.default is parameter.empty:
            arguments[parameter.name] = None  # not reached: the checks run first
    bad = constraints[name].bad_example()
    arguments[name] = bad
    with pytest.raises(ValueError) as error:
        func(**arguments)
    message = str(error.value)
    assert f"`{name}`" in message
    assert repr(bad) in message
    assert "np." not in message  # plain Python numbers, not np.int64(...)


@pytest.mark.parametrize(
    ("constraint", "value", "allowed"),
    [
        (Prob(), 1.5, "in the open interval (0, 1)"),
        (OneOf(("a", "b")), "c", "one of 'a', 'b'"),
        (Whole(minimum=1), np.int64(0), "a whole number >= 1"),
        (Integer(minimum=2), 2.0, "an integer >= 2"),
        (Real(above=0, at_most=1), 0.0, "in the half-open interval (0, 1]"),
        (Real(above=1), True, "a real number"),
        (Real(at_least=0, below=0.5), 0.5, "in the half-open interval [0, 0.5)"),
        (Flag(), 1, "True or False"),
        (Text(), 1, "a string"),
        (Text(nonempty=True), "", "a non-empty string"),
        (AnyOf(Text(), Flag()), 1, "a string, True or False"),
        (Instance(int, "an int"), "1", "an int"),
        (Array(at_least=0, at_most=1), [0.5, np.float64(1.5)], "entry 1 is 1.5"),
        (Array(at_least=0), [[0.5]], "a non-empty 1-d array of non-negative numbers"),
        (Array(), [], "a non-empty 1-d array of finite numbers"),
        (Array(), [1.0, np.nan], "entry 1 is nan"),
        (Array(), ["a"], "got ['a']"),
        (Array(), [True, False], "got [True, False]"),
        (Array(ndim=2, at_least=0), [[1, 2], [3, -1]], "entry (1, 1) is -1"),
        (Array(whole=True, at_least=0), [1, 2.5], "non-negative whole numbers; got [1, 2.5]"),
        (Array(increasing=True), [1, 3, 2], "strictly increasing non-empty 1-d"),
        (Array(ndim=(0, 1), above=0), 0, "a positive number or a non-empty 1-d array"),
        (Array(ndim=(0, 1), above=0, size=2), [1, 2, 3], "a 1-d array of 2 positive numbers"),
        (Array(above=0, at_most=1), [0.0], "numbers in the half-open interval (0, 1]"),
        (Flags(), [1, 2], "a non-empty 1-d array of True or False (or 1 or 0); got [1, 2]"),
        (Flags(), [1.0], "got [1.0]."),
        (Pair(Array(ndim=(0, 1), above=0)), (1, -1), "a pair (a, b), each a positive number"),
        (Pair(Prob()), [0.5], "got [0.5]."),
        (SequenceOf(OneOf(("a", "b"))), "a", "a non-empty sequence, each entry one of 'a', 'b'"),
        (SequenceOf(Whole(minimum=1)), np.array([3, 0]), "got [3, 0] (entry 1 is 0)"),
        (SequenceOf(Prob(), min_len=2), [0.5], "a sequence of at least 2 entries"),
    ],
)
def test_a_constraint_says_what_it_allows(constraint, value, allowed):
    with pytest.raises(ValueError, match=re.escape(allowed)) as error:
        constraint.check(value, "x")
    assert "np.int64" not in str(error.value)


def test_validate_normalises_and_refuses_unknown_names():
    @validate(n=Whole(minimum=1), prob=Prob())
    def width(n, prob=0.95):
        return n, prob

    assert width(np.int64(3), prob="0.9") == (3, 0.9)
    assert type(width(2e9)[0]) is int
    with pytest.raises(TypeError, match=r"has no parameters \['m'\]"):
        validate(m=Prob())(width)


def test_validate_fields_normalises_keeps_the_own_check_and_refuses_unknown_names():
    from dataclasses import dataclass

    from bayeval._constraints import validate_fields

    @dataclass(frozen=True)
    @validate_fields(n=Whole(minimum=1), prob=Prob())
    class Spec:
        n: int = 1
        prob: float = 0.9

        def __post_init__(self):
            if self.n > 10:
                raise ValueError("n too large")

    spec = Spec(n=np.int64(3), prob="0.5")
    assert (spec.n, spec.prob) == (3, 0.5) and type(spec.n) is int
    with pytest.raises(ValueError, match=r"`n` must be a whole number >= 1; got 0\."):
        Spec(n=0)
    with pytest.raises(ValueError, match="n too large"):
        Spec(n=11)
    with pytest.raises(TypeError, match=r"has no fields \['m'\]"):
        validate_fields(m=Prob())(Spec)

    @dataclass(frozen=True)
    @validate_fields(k=Whole(minimum=0))
    class Child(Spec):  # no __post_init__ of its own: the parent's still runs
        k: int = 0

    assert Child(n=2.0, k=1).n == 2
    with pytest.raises(ValueError, match="n too large"):
        Child(n=11)


NEW_CONSTRAINTS = [
    AnyOf(Text(), Flag()),
    AnyOf(Instance(int, "an int"), OneOf(("a", "b"))),
    Text(nonempty=True),
    Array(),
    Array(at_least=0, at_most=1),
    Array(ndim=(0, 1), above=0),
    Array(ndim=(0, 1), above=0, size=2),
    Array(ndim=2, at_least=0),
    Array(whole=True, at_least=0, atleast_1d=True),
    Array(increasing=True),
    Flags(),
    Pair(Array(ndim=(0, 1), above=0)),
    SequenceOf(OneOf(("a", "b"))),
    SequenceOf(Whole(minimum=1)),
    Optional(Instance(int, "an int")),
    Instance("collections.abc.Hashable", "a hashable id", example=lambda: "id"),
]


@pytest.mark.parametrize("constraint", NEW_CONSTRAINTS, ids=lambda c: c.allowed())
def test_a_constraint_refuses_its_bad_example_and_accepts_its_good_one(constraint):
    bad = constraint.bad_example()
    with pytest.raises(ValueError) as error:
        constraint.check(bad, "x")
    message = str(error.value)
    assert message.startswith(f"`x` must be {constraint.allowed()}; got {bad!r}")
    constraint.check(constraint.good_example(), "x")


def test_array_normalises_to_a_float_or_int_copy():
    given = np.array([1, 2], dtype=np.int32)
    out = Array(at_least=0).check(given, "x")
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0]
    counts = np.array([3, 4], dtype=np.int64)
    whole = Array(whole=True, at_least=0).check(counts, "x")
    assert whole.dtype == np.int64 and whole is not counts  # a copy: the body may freeze it
    assert Array(whole=True, at_least=0).check([2.0, 5.0], "x").dtype == np.int64
    assert Array(whole=True, at_least=0, atleast_1d=True).check(7, "x").tolist() == [7]
    scalar = Array(ndim=(0, 1), above=0).check(np.float32(2), "x")
    assert scalar.shape == () and scalar.dtype == np.float64
    with pytest.raises(ValueError, match="got 7"):
        Array(whole=True, at_least=0).check(7, "x")  # a number is not a 1-d array


def test_any_of_takes_the_first_option_that_accepts():
    title = AnyOf(Text(), Flag())
    assert title.check("t", "title") == "t" and title.check(np.bool_(False), "title") is False
    scenario = AnyOf(Instance(int, "an int"), OneOf(("small", "large")))
    assert scenario.check(3, "scenario") == 3 and scenario.check("small", "scenario") == "small"
    assert scenario.bad_example() == "no-such-object"
    with pytest.raises(TypeError, match="at least two"):
        AnyOf(Text())


def test_instance_imports_a_dotted_path_on_first_check():
    fraction = Instance("fractions.Fraction", "a Fraction")
    from fractions import Fraction

    assert fraction.check(Fraction(1, 2), "f") == Fraction(1, 2)
    with pytest.raises(ValueError, match=r"`f` must be a Fraction; got 0\.5\."):
        fraction.check(0.5, "f")
    with pytest.raises(TypeError, match="no example"):
        fraction.good_example()


def test_pair_and_sequence_normalise_each_entry():
    a, b = Pair(Array(ndim=(0, 1), above=0)).check([0.5, [1, 2]], "prior")
    assert a.shape == () and b.tolist() == [1.0, 2.0]
    assert SequenceOf(Whole(minimum=1)).check(np.array([2.0, 3.0]), "budgets") == (2, 3)
    assert SequenceOf(OneOf(("a", "b"))).check(iter(["b", "a"]), "names") == ("b", "a")
    assert SequenceOf(Prob(), min_len=0).check([], "shares") == ()


def test_shown_is_plain_python_and_short():
    assert shown(np.int64(2)) == "2"
    assert shown(np.array(0.5)) == "0.5"
    assert shown((np.float64(1.5),)) == "(1.5,)"
    assert shown(list(range(100))) == "[0, 1, 2, 3, 4, 5, ...]"
    assert shown(np.zeros((2, 2), dtype=int)) == "[[0, 0], [0, 0]]"
    assert shown("x" * 500).endswith("...") and len(shown("x" * 500)) == 100
