"""The solver's table key leaves out only the numeric core's modules that the solver never computes with."""

from __future__ import annotations

import ast
from pathlib import Path

from dicecup.solver import tablekeys

CORE = Path(tablekeys.__file__).resolve().parents[1]
#: modules that name every kernel to build or load them, without computing a table with them
BUILDERS = {"aot.py", "compiled.py"}


def _numeric_imports(path: Path) -> set[str]:
    """The numeric core's modules that `path` imports (relative imports, resolved by hand)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = path.parent.name if node.level == 1 else None
        parts = (node.module or "").split(".") if node.module else []
        if base == "numeric" and not parts:
            found.update(a.name for a in node.names)
        elif base == "numeric" and parts:
            found.add(parts[0])
        elif node.level == 2 and parts[:1] == ["numeric"]:
            found.update(parts[1:2] or [a.name for a in node.names])
    return {f"{name}.py" for name in found}


def test_no_solving_module_imports_a_left_out_one() -> None:
    solving = [
        f
        for folder in ("numeric", "solver", "language")
        for f in sorted((CORE / folder).glob("*.py"))
        if f.name not in tablekeys._NOT_SOLVING and not (folder == "numeric" and f.name in BUILDERS)
    ]
    assert len(solving) > 40
    wrong = {f"{f.parent.name}/{f.name}": sorted(_numeric_imports(f) & tablekeys._NOT_SOLVING) for f in solving}
    assert {k: v for k, v in wrong.items() if v} == {}


def test_the_left_out_modules_exist() -> None:
    for name in tablekeys._NOT_SOLVING:
        assert (CORE / "numeric" / name).is_file(), name


def test_the_importer_sees_relative_imports(tmp_path: Path) -> None:
    folder = tmp_path / "numeric"
    folder.mkdir()
    probe = folder / "probe.py"
    probe.write_text("from .play import x\nfrom . import duel\nfrom ..numeric.vecstep import y\n")
    assert _numeric_imports(probe) == {"play.py", "duel.py", "vecstep.py"}
