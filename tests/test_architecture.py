"""Rules of the package's layout that a test can check."""

import ast
from pathlib import Path

import bayeval

PACKAGE = Path(bayeval.__file__).parent


def _private_imports(source: str) -> list[tuple[int, str, str]]:
    """``(line, module, name)`` of every ``from bayeval... import _name`` in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bayeval"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append((node.lineno, node.module, alias.name))
    return found


def test_the_check_finds_a_private_import():
    source = "from bayeval.oracles import Oracle, _hidden\nfrom bayeval._core import philox\n"
    assert _private_imports(source) == [(1, "bayeval.oracles", "_hidden")]


def test_no_module_imports_another_modules_private_name():
    # a name that another module needs is part of its module's interface: give it a public name
    # (private *modules* such as bayeval._core.philox are fine; their names are their interface)
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {name} from {module}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, module, name in _private_imports(path.read_text())
    ]
    assert offenders == []
