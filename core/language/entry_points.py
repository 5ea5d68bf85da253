"""The installed packages' plugins for one entry-point group, read from their `entry_points.txt` files.

The same files `importlib.metadata` reads, found the same way (each `*.dist-info` and `*.egg-info` folder of each
`sys.path` folder, in path order), without importing it: its import (the `email` parser with it) and its scan were a large share of a short
command's start-up (the Performance page has the figures). Where the standard search is not the whole story (an
archive on the path, another finder of distributions installed) `installed` answers None and the caller asks
`importlib.metadata` (`from_importlib`): either way the caller gets the same `EntryPoint`s, loaded the same way.
An `entry_points.txt` that is no small regular file (a FIFO, a device, something huge) is a `FileError` naming
it: `importlib.metadata` would wait on a FIFO for ever, or read the whole of a huge file.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from importlib.machinery import PathFinder
from typing import Any, NamedTuple

from .. import fileio

__all__ = ["EntryPoint", "from_importlib", "installed"]

MAX_BYTES = 1 << 20
"""An `entry_points.txt` larger than this is not a package's (a few hundred bytes): one is refused."""

_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?(\[.*\]\s*)?$")


class EntryPoint(NamedTuple):
    """One entry point: its name, `module:attribute` and the folder of metadata that declares it."""

    name: str
    value: str
    where: str

    def load(self) -> Any:
        """The object it names (its module imported); ImportError where the value is not `module[:attr]`."""
        match = _VALUE.match(self.value)
        if match is None:
            raise ImportError(f"entry point {self.name!r} of {self.where}: {self.value!r} is not module:attribute")
        obj: Any = importlib.import_module(match.group("module"))
        attr = match.group("attr")
        for part in attr.split(".") if attr else ():
            obj = getattr(obj, part)
        return obj


def installed(group: str) -> list[EntryPoint] | None:
    """Every entry point of `group`, in the order `importlib.metadata.distributions()` would give them (path
    order; within a folder, by name); None where that search would look further than folders on `sys.path`.
    FileError where an `entry_points.txt` is no small regular file."""
    if not _standard_search():
        return None
    found: list[EntryPoint] = []
    for entry in sys.path:
        folder = entry or "."
        try:
            children = sorted(os.listdir(folder))
        except OSError:  # missing, or a file: importlib skips it too (an archive was refused above)
            continue
        for child in children:
            if not child.lower().endswith((".dist-info", ".egg-info")):
                continue
            text = _read(os.path.join(folder, child, "entry_points.txt"))
            found += [EntryPoint(name, value, os.path.join(folder, child)) for name, value in _section(text, group)]
    return found


def from_importlib(group: str) -> list[EntryPoint]:
    """Every entry point of `group` as `importlib.metadata` finds them (what pluggy's own search walks: each
    distribution in its order, its entry points in theirs), for where `installed` cannot tell."""
    from importlib import metadata

    return [
        EntryPoint(ep.name, ep.value, f"the distribution {dist.metadata['Name']} {dist.version}")
        for dist in metadata.distributions()
        for ep in dist.entry_points
        if ep.group == group
    ]


def _standard_search() -> bool:
    """Whether `importlib.metadata` would only read metadata folders on `sys.path`: no archive on the path,
    and no finder of distributions but the path finders (`_path_finder`)."""
    finders = [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None]
    if not all(map(_path_finder, finders)):
        return False
    return not any(entry and os.path.isfile(entry) for entry in sys.path)


def _path_finder(finder: Any) -> bool:
    """The standard library's path finder, or the `importlib_metadata` backport's, which its import adds (dask
    imports it): both find distributions by the metadata folders on `sys.path` alone."""
    kind = finder if isinstance(finder, type) else type(finder)
    return finder is PathFinder or (kind.__module__, kind.__name__) == ("importlib_metadata", "MetadataPathFinder")


def _read(path: str) -> str:
    """The file's text; "" where none can be read (missing, under a file, not readable: `importlib.metadata`
    skips those too). Read as every file is (`fileio.read_bytes`: bounded, never blocking), so a FIFO, a device
    or a huge file is a FileError."""
    try:
        os.stat(path)
    except OSError:
        return ""
    if not os.access(path, os.R_OK):
        return ""
    return fileio.read_bytes(path, limit=MAX_BYTES, what="package's entry_points.txt").decode("utf-8", "replace")


def _section(text: str, group: str) -> list[tuple[str, str]]:
    """(name, value) of each `name = value` line of the `[group]` section (comments and blank lines skipped)."""
    out: list[tuple[str, str]] = []
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == group and "=" in line:
            name, value = line.split("=", 1)
            out.append((name.strip(), value.strip()))
    return out
