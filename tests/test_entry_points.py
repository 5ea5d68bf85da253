"""The installed plugins found by reading `entry_points.txt` files: the entry points `importlib.metadata`
finds on the same path (the oracle), registered as pluggy would, and the standard search used wherever the
files alone would not tell (an archive on the path); a FIFO or a huge entry_points.txt is one error."""

from __future__ import annotations

import importlib.metadata
import os
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup import Engine, PluginError
from dicecup.language import entry_points

GROUP = "dicecup"

PLUGIN = r'''\
"""A test plugin: one variant."""
from dicecup import hookimpl

@hookimpl
def dicecup_register_variants(register):
    register(text="id: {variant}\nextends: yahtzee\nname: {variant}\n", source="{variant}.yaml")
'''


@pytest.fixture(autouse=True)
def _forget_test_plugins():
    """The test plugins' modules (`plug_*`, imported from temporary folders) are not left imported."""
    yield
    for name in [m for m in sys.modules if m.startswith("plug_")]:
        del sys.modules[name]


def _dist(folder: Path, name: str, text: str, kind: str = ".dist-info") -> Path:
    """A metadata folder `name-1.0<kind>` in `folder` with this entry_points.txt (and the METADATA importlib needs)."""
    meta = folder / f"{name}-1.0{kind}"
    meta.mkdir(parents=True)
    (meta / ("METADATA" if kind == ".dist-info" else "PKG-INFO")).write_text(f"Name: {name}\nVersion: 1.0\n")
    (meta / "entry_points.txt").write_text(text)
    return meta


def _oracle(path: list[str]) -> list[tuple[str, str]]:
    """What importlib.metadata finds for the group on `path`."""
    return [
        (ep.name, ep.value)
        for dist in importlib.metadata.distributions(path=path)
        for ep in dist.entry_points
        if ep.group == GROUP
    ]


NAMES = st.text("abcdefgh_", min_size=1, max_size=6)
VALUES = st.builds(
    lambda m, a, extra: m + (f":{a}" if a else "") + (" [fast]" if extra else ""),
    st.from_regex(r"[a-z][a-z0-9_]{0,5}(\.[a-z][a-z0-9_]{0,4}){0,2}", fullmatch=True),
    st.one_of(st.none(), st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,5}(\.[a-z]{1,3})?", fullmatch=True)),
    st.booleans(),
)
SECTIONS = st.lists(
    st.tuples(st.sampled_from([GROUP, "console_scripts", "other"]), st.lists(st.tuples(NAMES, VALUES), max_size=3)),
    max_size=3,
)


def _text(sections: list[tuple[str, list[tuple[str, str]]]], comments: bool) -> str:
    lines = []
    for group, entries in sections:
        lines += ["# a comment" if comments else "", f"[{group}]"]
        lines += [f"{name} = {value}" for name, value in entries]
    return "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    folders=st.lists(
        st.lists(st.tuples(SECTIONS, st.booleans(), st.sampled_from([".dist-info", ".egg-info"])), max_size=3),
        min_size=1,
        max_size=3,
    )
)
def test_the_entry_points_are_those_importlib_finds(tmp_path_factory, folders):
    """Random metadata folders on a random path: the same entry points as `importlib.metadata`, folder by
    folder in path order (within a folder importlib follows the directory's own order: compared as sets)."""
    root = tmp_path_factory.mktemp("site")
    path = []
    for i, dists in enumerate(folders):
        folder = root / f"p{i}"
        folder.mkdir()
        path.append(str(folder))
        for j, (sections, comments, kind) in enumerate(dists):
            _dist(folder, f"pkg{j}", _text(sections, comments), kind)
    (root / "p0" / "not-metadata").mkdir()  # other folders are not read
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "path", path)
        found = entry_points.installed(GROUP)
    assert found is not None
    for folder in path:
        ours = sorted((e.name, e.value) for e in found if Path(e.where).parent == Path(folder))
        assert ours == sorted(_oracle([folder]))


def test_an_installed_plugin_is_registered_and_a_name_taken_first_wins(tmp_path, monkeypatch):
    """Two folders on the path declare the plugin name `house`: the first one's is registered, as pluggy
    would; the entry point's module is imported from the path."""
    for folder, variant in (("a", "house-a"), ("b", "house-b")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"plug_{folder}.py").write_text(PLUGIN.format(variant=variant))
        _dist(tmp_path / folder, f"dist_{folder}", f"[{GROUP}]\nhouse = plug_{folder}\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "a"), str(tmp_path / "b"), *sys.path])
    monkeypatch.delenv("DICECUP_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    engine = Engine()
    ids = set(engine.variant_ids())
    assert "house-a" in ids and "house-b" not in ids
    assert engine.variant("house-a").name == "house-a"
    assert "house-a" not in Engine(entry_points=False).variant_ids()


def test_an_archive_leaves_the_search_to_importlib(tmp_path, monkeypatch):
    """An archive on the path: the files alone do not tell, so the caller asks importlib.metadata (None)."""
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("x.py", "")
    monkeypatch.setattr(sys, "path", [str(archive)])
    assert entry_points.installed(GROUP) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("kind", ["FIFO", "huge"])
def test_an_entry_points_file_that_is_a_fifo_or_huge_is_one_plugin_error_at_once(tmp_path, monkeypatch, kind):
    """A FIFO (importlib.metadata would wait on it for ever, and every command with it) or a file over the
    limit (read whole) as some package's entry_points.txt: one PluginError naming the file and what it is."""
    if kind == "FIFO":
        meta = tmp_path / "odd-1.0.dist-info"
        meta.mkdir()
        os.mkfifo(meta / "entry_points.txt")
    else:
        meta = _dist(tmp_path, "odd", "#" * (entry_points.MAX_BYTES + 1))
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.delenv("DICECUP_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    what = "a named pipe" if kind == "FIFO" else "is 1.0 MiB"
    with pytest.raises(PluginError, match=f"odd-1.0.dist-info/entry_points.txt.*{what}"):
        Engine()


def test_an_unreadable_or_misplaced_entry_points_file_is_skipped_as_importlib_skips_it(tmp_path, monkeypatch):
    """A dist-info that is a file (no entry_points.txt under it) is a package without entry points, as
    importlib.metadata takes it; the other folders' plugins still load."""
    (tmp_path / "bad-1.0.dist-info").write_text("not a folder")
    (tmp_path / "plug_f.py").write_text(PLUGIN.format(variant="house-f"))
    _dist(tmp_path, "dist_f", f"[{GROUP}]\nhouse = plug_f\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert [(e.name, e.value) for e in entry_points.installed(GROUP) or []] == [("house", "plug_f")]


def test_where_importlib_searches_the_plugin_is_still_found(tmp_path, monkeypatch):
    """The fallback: the entry points importlib.metadata finds register the same plugin."""
    (tmp_path / "plug_c.py").write_text(PLUGIN.format(variant="house-c"))
    _dist(tmp_path, "dist_c", f"[{GROUP}]\nhouse = plug_c\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.delenv("DICECUP_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setattr(entry_points, "installed", lambda group: None)
    monkeypatch.setattr("dicecup.language.engine.installed_entry_points", lambda group: None)
    assert "house-c" in Engine().variant_ids()


@pytest.mark.parametrize("search", ["files", "importlib"])
@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("no_such_module_here", "ModuleNotFoundError"),
        ("plug_d:missing", "AttributeError"),
        ("plug_d:", "ImportError: entry point 'house' of {where}: 'plug_d:' is not module:attribute"),
    ],
)
def test_a_broken_entry_point_is_one_plugin_error(tmp_path, monkeypatch, value, words, search):
    """Found by the files or by importlib.metadata, a broken entry point is one PluginError saying which and
    why (through importlib, a malformed value used to read as a plugin that could not be registered)."""
    (tmp_path / "plug_d.py").write_text(PLUGIN.format(variant="house-d"))
    _dist(tmp_path, "dist_d", f"[{GROUP}]\nhouse = {value}\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.delenv("DICECUP_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    if search == "importlib":
        monkeypatch.setattr("dicecup.language.engine.installed_entry_points", lambda group: None)
    where = ".*dist_d-1.0.dist-info" if search == "files" else "the distribution dist_d 1.0"
    with pytest.raises(PluginError, match=f"cannot load the installed dicecup plugins: {words.format(where=where)}"):
        Engine()


def test_the_backports_path_finder_is_a_path_finder_and_another_finder_is_not(tmp_path, monkeypatch):
    """`importlib_metadata` (the backport, which dask imports) adds its own finder of the same folders: the
    files still tell. A finder of distributions of another kind might know of packages no folder holds: then
    importlib decides (None)."""
    _dist(tmp_path, "dist_e", f"[{GROUP}]\nhouse = plug_e\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])

    class MetadataPathFinder:  # as the backport's is known: by its module and name
        @classmethod
        def find_distributions(cls, context=None):
            return iter(())

    MetadataPathFinder.__module__ = "importlib_metadata"
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, MetadataPathFinder()])
    assert [(e.name, e.value) for e in entry_points.installed(GROUP) or ()] == [("house", "plug_e")]

    class Elsewhere:
        def find_distributions(self, context=None):
            return iter(())

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Elsewhere()])
    assert entry_points.installed(GROUP) is None
