"""The `dicecup` command line: one module per group of commands, all on the app of `cli.base`.

`main()` is the console script: an error that escapes a command is one `error: ...` line on stderr and exit
status 2. A plain line of a quick command (`QUICK_COMMANDS`: `advise`, `simulate`, `solve`) runs without typer,
click or pydantic; any other line goes to typer, which imports only the command module the line names. While the command's
modules import, the garbage collector is paused and what they made is frozen (`imports_paused`). A command
that does no linear algebra worth a thread (`ONE_BLAS_THREAD`) runs with OpenBLAS on one thread unless the
user set a thread count: its idle threads would spin on the other core. Only this console script touches the
environment, only while the command runs; `import dicecup` never does.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

__all__ = ["main", "imports_paused", "one_blas_thread", "ONE_BLAS_THREAD", "BLAS_THREAD_VARS", "QUICK_COMMANDS"]

#: the commands run with one OpenBLAS thread (see the module's docstring): every command but `strategy-card`,
#: whose learner multiplies large float32 matrices
ONE_BLAS_THREAD = frozenset(
    {
        *("advise", "odds", "solve", "simulate", "distribution", "risk", "duel"),
        *("play", "resume", "review", "match", "train", "serve", "variants", "show", "score", "validate"),
    }
)
#: what OpenBLAS reads its thread count from: any of them set, the user's choice stands
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
#: command -> (module of `cli`, function): the commands whose plain command lines `cli.quick` runs
QUICK_COMMANDS: dict[str, tuple[str, str]] = {
    "advise": ("advising", "advise_cmd"),
    "simulate": ("simulating", "simulate_cmd"),
    "solve": ("solving", "solve_cmd"),
}
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
def one_blas_thread() -> Iterator[None]:
    """OpenBLAS on one thread for every numpy loaded in the block (this process's, where it has not loaded numpy
    yet, and that of each process started in the block), unless the user set a count (`BLAS_THREAD_VARS`); the
    environment as it was afterwards. For work whose own kernels or processes keep the cores busy."""
    chosen = any(name in os.environ for name in BLAS_THREAD_VARS)
    if not chosen:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        if not chosen:
            os.environ.pop("OPENBLAS_NUM_THREADS", None)


def _blas_threads(command: str | None) -> AbstractContextManager[None]:
    """`one_blas_thread` for a command of `ONE_BLAS_THREAD` while it runs (see the module's docstring)."""
    if command in ONE_BLAS_THREAD and "numpy" not in sys.modules:  # (once loaded, OpenBLAS has read its count)
        return one_blas_thread()
    return nullcontext()


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: every error (a usage error or a DicecupError) is one line on stderr, exit 2
    (`base.QuickGroup.main`, or `_run_quick`)."""
    args = sys.argv[1:] if argv is None else argv
    at = 0
    while at < len(args) and (args[at] == "--plugin" or args[at].startswith("--plugin=")):
        at += 1 if "=" in args[at] else 2  # the global --plugin FILE.py flags come before the command
    command = args[at] if at < len(args) else None
    with _blas_threads(command):  # (around the imports too: OpenBLAS reads its thread count when numpy loads)
        if at == 0 and command in QUICK_COMMANDS and COMPLETE_VAR not in os.environ:
            _run_quick(command, args[1:])  # returns only when the command line is not plain
        with imports_paused():  # the imports make objects that stay (see the module's docstring)
            import typer

            from .base import app
            from .common import COMMAND_MODULES

            module = COMMAND_MODULES.get(command) if command is not None else None
            importlib.import_module(f".{module}" if module else ".app", __name__)
        return typer.main.get_command(app)(args=args, prog_name="dicecup", standalone_mode=True)


def _run_quick(command: str, args: list[str]) -> None:
    """Run `command` on a plain command line (`cli.quick`) and exit: 0, 1 when interrupted, 2 with one `error:`
    line; return when the line is not plain, for typer to read."""
    from ..errors import DicecupError

    with imports_paused():
        from .common import QUICK_SESSION, echo, error_line
        from .quick import parse

        where, name = QUICK_COMMANDS[command]
        run = getattr(importlib.import_module(f".{where}", __name__), name)
    session = QUICK_SESSION.set({})  # what the command keeps (its engine), as click's context would
    undo = None
    try:
        kwargs = parse(run, args)
        if kwargs is None:
            return
        undo = _speak_environment()
        run(**kwargs)
    except DicecupError as exc:
        echo(error_line(str(exc)), err=True)
        sys.exit(2)
    except (KeyboardInterrupt, EOFError):
        echo("aborted", err=True)
        sys.exit(1)
    finally:
        if undo is not None:
            undo()
        QUICK_SESSION.reset(session)
    sys.exit(0)


def _speak_environment() -> Any:
    """Speak the environment's language in a quick command (its catalog read only where it is not English);
    what undoes it, or None."""
    from ..locales import DEFAULT, choose, speak

    lang = choose()
    return None if lang == DEFAULT else speak(lang)
