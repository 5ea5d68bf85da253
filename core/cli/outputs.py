"""Files a user names for a command to write (`--save`, `--plot`): one check for every such flag, made before
any work, so a long computation never ends in a file that cannot be written or one replaced unasked."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from ..errors import DicecupError
from ..locales import N_, _
from .common import OVERWRITE

__all__ = ["OverwriteOpt", "output_path", "plot_path"]

OverwriteOpt = Annotated[bool, typer.Option(*OVERWRITE.names, **OVERWRITE.settings)]

_DEFAULT_NAME_MAX = 255  # bytes in a file name on most file systems, where the system cannot say


def output_path(
    flag: str,
    path: Path,
    overwrite: bool,
    *,
    suffix: str = "",
    kind: str = N_("a file"),
    refuse: Callable[[Path], NoReturn] | None = None,
) -> Path:
    """`path` when `flag` may write it: a name ending in `suffix` (if given) in an existing, writable folder,
    and a name the file system takes; an existing file only with `--overwrite`, and never a directory, a
    pipe or a device. `refuse(path)` raises the refusal of an existing file (saying what it holds). `kind`
    (marked `N_`) is said in the command line's language."""
    name = _named(path)
    if suffix and path.suffix.lower() != suffix:
        raise DicecupError(
            _("{flag} writes {kind}; give a file name ending in {suffix}, not {name}").format(
                flag=flag, kind=_(kind), suffix=suffix, name=name
            )
        )
    folder = path.parent if str(path.parent) else Path(".")
    try:
        if not folder.is_dir():
            raise DicecupError(
                _("{flag} {name}: the folder {folder} does not exist").format(
                    flag=flag, name=name, folder=_named(folder)
                )
            )
        _check_name(flag, path, folder)
        exists = os.path.lexists(path)
    except OSError as exc:  # a path longer than the system takes, a loop of links, ...
        raise DicecupError(f"{flag} {name}: {_reason(exc)}") from None
    if exists and path.is_dir():
        raise DicecupError(_("{flag} {name} is a directory; give a file name").format(flag=flag, name=name))
    if exists and not path.is_file():
        raise DicecupError(
            _("{flag} {name} is not a regular file (a pipe, a device or a broken link); it is left as it is").format(
                flag=flag, name=name
            )
        )
    if exists and not overwrite:
        if refuse is not None:
            refuse(path)
        raise DicecupError(
            _("{flag} {name} already exists; nothing was written (pass --overwrite to replace it)").format(
                flag=flag, name=name
            )
        )
    if not os.access(folder, os.W_OK | os.X_OK) or (exists and not os.access(path, os.W_OK)):
        raise DicecupError(_("{flag} {name}: permission denied").format(flag=flag, name=name))
    return path


def plot_path(path: Path, overwrite: bool) -> Path:
    """`output_path` for `--plot`: a PNG file name."""
    return output_path("--plot", path, overwrite, suffix=".png", kind=N_("a PNG image"))


def _named(path: Path) -> str:
    """The path as messages quote it, cut short when it is very long."""
    text = repr(str(path))
    return text if len(text) <= 160 else text[:100] + "..." + text[-57:]


def _check_name(flag: str, path: Path, folder: Path) -> None:
    """Refuse a new file's name the file system would refuse, with its length and the limit."""
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = _DEFAULT_NAME_MAX
    size = len(os.fsencode(path.name))
    if size > limit:
        raise DicecupError(
            _(
                "{flag}: the file name is {size} bytes long; this file system takes names of at most {limit} bytes"
            ).format(flag=flag, size=f"{size:,}", limit=limit)
        )


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENAMETOOLONG:
        return _("the path is longer than this file system takes")
    return (exc.strerror or type(exc).__name__).lower()
