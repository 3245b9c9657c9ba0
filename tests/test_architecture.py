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


#: Most lines of code (docstrings not counted: numpydoc with executed examples) in one module.
MAX_CODE_LINES = 500


def _code_lines(source: str) -> int:
    """Lines of ``source`` outside the docstrings of its module, classes and functions."""
    tree = ast.parse(source)
    doc = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if ast.get_docstring(node, clean=False) is not None:
                doc += first.end_lineno - first.lineno + 1
    return len(source.splitlines()) - doc


def test_the_count_leaves_docstrings_out():
    source = '"""Module.\n\nMore.\n"""\n\n\ndef f():\n    """One."""\n    return 1\n'
    assert _code_lines(source) == 9 - 4 - 1


def test_no_module_is_longer_than_a_reader_can_hold():
    # split a module that grows past this by what its parts do (see ARCHITECTURE.md)
    long = {
        str(path.relative_to(PACKAGE.parent)): n
        for path in sorted(PACKAGE.rglob("*.py"))
        if (n := _code_lines(path.read_text())) > MAX_CODE_LINES
    }
    assert long == {}
