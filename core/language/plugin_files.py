"""Plugins that are not installed: `.py` files imported by path (`dicecup --plugin FILE.py`), and how an
engine's explicit plugins are named again, so that an engine (and its variants) can be pickled.

Importing a plugin runs its code, as importing any Python module does: a plugin file is a program, to
be trusted as one. What it raises while it is imported (SystemExit included) is one PluginError naming
the file and the line.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import PluginError, described
from . import hookspecs
from .guard import FILE_ATTR

__all__ = ["FILE_REF", "load_plugin_file", "plugin_ref"]

FILE_REF = "file:"  # how `plugin_ref` names a module imported from a plugin file


def load_plugin_file(path: str | os.PathLike[str]) -> Any:
    """Import a plugin module from a `.py` file that is not installed (`Engine(plugin_files=...)`,
    `dicecup --plugin FILE.py`): PluginError when it is missing, does not compile or import, or
    implements no dicecup hook.

    The module is imported under a name made from the file's path, so the same file gives the
    same module again and two files of one name do not clash.
    """
    file = Path(path)
    if file.suffix != ".py":
        raise PluginError(f"plugin file {str(file)!r}: a plugin file is a Python module, its name must end in .py")
    if not file.is_file():
        raise PluginError(f"plugin file {str(file)!r} does not exist (or is not a file)")
    resolved = file.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    name = f"dicecup_plugin_file_{''.join(c if c.isalnum() else '_' for c in file.stem)}_{digest}"
    known = sys.modules.get(name)
    if known is not None:
        return known
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a loader
        raise PluginError(f"plugin file {str(file)!r} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    setattr(module, FILE_ATTR, str(resolved))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        raise PluginError(f"plugin file {file}:{exc.lineno}: syntax error: {exc.msg}") from None
    except KeyboardInterrupt:
        del sys.modules[name]
        raise
    except BaseException as exc:  # SystemExit too: a plugin may not end the program while it is imported
        del sys.modules[name]
        where = _traceback_line(exc, str(resolved))
        raise PluginError(f"plugin file {file}{where}: importing it failed: {described(exc)}") from None
    if not any(n.startswith(f"{hookspecs.PROJECT}_") and callable(getattr(module, n)) for n in dir(module)):
        del sys.modules[name]
        raise PluginError(
            f"plugin file {file} implements no dicecup hook: define functions such as dicecup_register_variants, "
            "each marked @dicecup.hookimpl"
        )
    return module


def _traceback_line(exc: BaseException, filename: str) -> str:
    """`:LINE` of the innermost frame of `exc` in `filename` ("" when none is)."""
    line = ""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = f":{tb.tb_lineno}"
        tb = tb.tb_next
    return line


def plugin_ref(plugin: Any) -> str | None:
    """How an explicit plugin is found again by name (for pickling variants), or None."""
    if inspect.ismodule(plugin):
        origin = getattr(plugin, FILE_ATTR, None)
        if origin is not None:  # a plugin file: imported again from its path
            return f"{FILE_REF}{origin}"
        return plugin.__name__ if sys.modules.get(plugin.__name__) is plugin and plugin.__name__ != "__main__" else None
    module = getattr(type(plugin), "__module__", None) if not inspect.isclass(plugin) else plugin.__module__
    qual = getattr(plugin if inspect.isclass(plugin) else type(plugin), "__qualname__", "")
    if not module or module == "__main__" or "<" in qual:
        return None
    if not inspect.isclass(plugin) and (getattr(plugin, "__dict__", None) or not _builds_bare(type(plugin))):
        return None  # an object with settings cannot be made again from its class's name alone
    return f"{module}:{qual}" + ("" if inspect.isclass(plugin) else "()")


def _builds_bare(cls: type) -> bool:
    """Whether `cls()` needs no arguments."""
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)
