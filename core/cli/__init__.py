"""The `dicecup` command line: one module per group of commands, all on the app of `cli.base`.

`main()` is the console script: any usage error or `DicecupError` that escapes a command is one
`error: ...` line on stderr and exit status 2. A plain command line of a quick command (`QUICK_COMMANDS`:
`advise`, which answers in a blink) is read by `cli.quick` and runs without typer, click or pydantic;
any other line (its --help, a bad value) goes to typer. Typer's path imports only the command module its
command line names (`dicecup advise` needs neither the simulator nor the game's terminal); anything else
(`--help`, no command, an unknown one) gets the whole app, `cli.app`, which is also where a program that
wants the typer app itself imports it (`from dicecup.cli.app import app`).
While it imports them the cyclic garbage collector is paused, and what the imports made is then
frozen (`gc.freeze`, never scanned again): modules, classes and functions live as long as the
process anyway, and collecting while they were made cost `advise` milliseconds.
A command imports what it alone needs (numpy, the solver) the same way, once its arguments have parsed
(`imports_paused`).

A command that does no linear algebra worth a thread (`ONE_BLAS_THREAD`: `advise` reads its tables and
takes small array steps, a table it must solve first being solved by compiled kernels, not BLAS; `odds` takes
dot products of a few hundred numbers) runs with
OpenBLAS limited to one thread, unless the user has set a thread count (`BLAS_THREAD_VARS`). NumPy's OpenBLAS
starts its thread pool when numpy is imported, and its threads spin waiting for work that never comes: on two
cores that cost `advise` CPU time taken from whatever else runs. The variable is set only by this
console script, only while the command runs, and only when numpy is not imported yet: the library
(`import dicecup`) never touches the environment, and a program that calls `main` keeps its own.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["main", "imports_paused", "ONE_BLAS_THREAD", "BLAS_THREAD_VARS", "QUICK_COMMANDS"]

#: the commands run with one OpenBLAS thread (see the module's docstring)
ONE_BLAS_THREAD = frozenset({"advise", "odds"})
#: what OpenBLAS reads its thread count from: any of them set, the user's choice stands
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
#: command -> (module of `cli`, function): the commands whose plain command lines `cli.quick` runs
QUICK_COMMANDS: dict[str, tuple[str, str]] = {"advise": ("advising", "advise_cmd")}
#: the variable shell completion sets (typer answers it)
COMPLETE_VAR = "_DICECUP_COMPLETE"


@contextmanager
def imports_paused() -> Iterator[None]:
    """Run the block (imports) with the cyclic garbage collector paused, then freeze what exists: the modules,
    classes and functions imported stay for the process, so no later collection scans them again."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.freeze()
            gc.enable()


@contextmanager
def _blas_threads(command: str | None) -> Iterator[None]:
    """One OpenBLAS thread for a command of `ONE_BLAS_THREAD` while it runs (see the module's docstring)."""
    one_thread = (
        command in ONE_BLAS_THREAD
        and "numpy" not in sys.modules  # once loaded, OpenBLAS has read its thread count
        and not any(name in os.environ for name in BLAS_THREAD_VARS)
    )
    if one_thread:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        if one_thread:
            os.environ.pop("OPENBLAS_NUM_THREADS", None)


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: every error (a usage error or a DicecupError) is one line on stderr, exit 2
    (`base.QuickGroup.main`, or `_run_quick`)."""
    args = sys.argv[1:] if argv is None else argv
    at = 0
    while at < len(args) and (args[at] == "--plugin" or args[at].startswith("--plugin=")):
        at += 1 if "=" in args[at] else 2  # the global --plugin FILE.py flags come before the command
    command = args[at] if at < len(args) else None
    if at == 0 and command in QUICK_COMMANDS and COMPLETE_VAR not in os.environ:
        _run_quick(command, args[1:])  # returns only when the command line is not plain
    with imports_paused():  # the imports make objects that stay (see the module's docstring)
        import typer

        from .base import app
        from .common import COMMAND_MODULES

        module = COMMAND_MODULES.get(command) if command is not None else None
        importlib.import_module(f".{module}" if module else ".app", __name__)
    with _blas_threads(command):
        return typer.main.get_command(app)(args=args, prog_name="dicecup", standalone_mode=True)


def _run_quick(command: str, args: list[str]) -> None:
    """Run `command` on a plain command line (`cli.quick`) and exit: 0, 1 when interrupted, 2 with one `error:`
    line; return when the line is not plain, for typer to read."""
    from ..errors import DicecupError

    with imports_paused():
        from .common import echo, error_line
        from .quick import parse

        where, name = QUICK_COMMANDS[command]
        run = getattr(importlib.import_module(f".{where}", __name__), name)
    try:
        kwargs = parse(run, args)
        if kwargs is None:
            return
        with _blas_threads(command):
            run(**kwargs)
    except DicecupError as exc:
        echo(error_line(str(exc)), err=True)
        sys.exit(2)
    except (KeyboardInterrupt, EOFError):
        echo("aborted", err=True)
        sys.exit(1)
    sys.exit(0)
