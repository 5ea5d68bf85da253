"""Where compiled code lives: every numba kernel in `numeric/`, the solver and the simulator only orchestrating
them, and the simulation layer's modules small (read from the source, as a reviewer would)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "core"
MAX_LINES = 600


def _numba_uses(path: Path) -> list[str]:
    """The places in a module that compile with numba: its import, `compiled.numba_module()`, `compiled.jit`,
    a `@...njit` decorator or a `prange` loop."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            if any(n and (n == "numba" or n.startswith("numba.") or n == "llvmlite") for n in names):
                found.append(f"{path.name}:{node.lineno} imports numba")
        elif isinstance(node, ast.Attribute) and node.attr in ("njit", "prange", "numba_module", "jitted"):
            found.append(f"{path.name}:{node.lineno} uses {node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr == "jit" and getattr(node.value, "id", "") == "compiled":
            found.append(f"{path.name}:{node.lineno} uses compiled.jit")
    return found


@pytest.mark.parametrize("layer", ["simulate", "solver"])
def test_no_compiled_code_outside_the_numeric_core(layer):
    """The solver and the simulator call kernels; none is written or compiled there."""
    found = [use for path in sorted((CORE / layer).glob("*.py")) for use in _numba_uses(path)]
    assert found == []


def test_the_check_sees_a_kernel():
    """The check above finds the numeric core's own kernels (it would see one written elsewhere)."""
    assert _numba_uses(CORE / "numeric" / "play.py")
    assert _numba_uses(CORE / "numeric" / "intrinsics.py")


def test_the_simulation_layers_modules_are_small():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (CORE / "simulate").glob("*.py")}
    assert {name: n for name, n in sizes.items() if n >= MAX_LINES} == {}


MAX_POSITIONAL = 8


def _numeric_names() -> set[str]:
    """The functions and record classes the numeric core defines (its kernels, their helpers and records)."""
    names: set[str] = set()
    for path in (CORE / "numeric").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("__"):
                names.add(node.name)
    return names


def _long_calls(source: str, where: str, names: set[str]) -> list[str]:
    """Calls in `source` to one of `names` with more than MAX_POSITIONAL positional arguments."""
    found = []
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.Call) and len(node.args) > MAX_POSITIONAL:
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in names:
                found.append(f"{where}:{node.lineno} {name} ({len(node.args)} positional)")
    return found


def test_no_kernel_or_record_is_given_a_wall_of_positional_arguments():
    """No call into the numeric core's kernels, nor a constructor of its records, takes more than eight
    positional arguments: past that they are grouped into a record, or named."""
    names = _numeric_names()
    found = [
        hit
        for path in sorted(CORE.rglob("*.py"))
        for hit in _long_calls(path.read_text(encoding="utf-8"), str(path.relative_to(CORE)), names)
    ]
    assert found == []


def test_the_argument_check_sees_a_long_call():
    """The check above finds a call of nine positional arguments to a name of the numeric core, and not one
    whose last arguments are named."""
    sample = "turn_block(a, b, c, d, e, f, g, h, i)\nturn_block(a, b, c, d, e, f, g, h=h, i=i)\n"
    assert _long_calls(sample, "sample.py", {"turn_block"}) == ["sample.py:1 turn_block (9 positional)"]
