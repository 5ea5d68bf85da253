"""dicecup's own variant files are read with libyaml's parser where PyYAML has it (`load_yaml(libyaml=True)`):
each must give exactly what PyYAML's own parser gives, values and the line of every key and item, since
libyaml accepts some text PyYAML refuses. Any other text is read by PyYAML alone."""

from __future__ import annotations

from importlib import resources
from typing import Any

import pytest
import yaml

from dicecup import Engine
from dicecup.errors import VariantError
from dicecup.language.yamlload import load_yaml
from dicecup.language.yamlsource import LocDict, LocList

BUNDLED = sorted(p for p in resources.files("dicecup.variants").iterdir() if p.name.endswith(".yaml"))

needs_libyaml = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml")


def _located(value: Any) -> Any:
    """A parsed document with every location in it, as plain values to compare."""
    if isinstance(value, LocDict):
        return (
            "map",
            value.loc,
            sorted(value.key_locs.items(), key=repr),
            [(k, _located(v)) for k, v in value.items()],
        )
    if isinstance(value, LocList):
        return ("seq", value.loc, list(value.item_locs), [_located(v) for v in value])
    return (type(value).__name__, value)


@needs_libyaml
@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_each_bundled_file_parses_alike_with_libyaml(path):
    text = path.read_text(encoding="utf-8")
    source = f"dicecup/variants/{path.name}"
    assert _located(load_yaml(text, source, libyaml=True)) == _located(load_yaml(text, source))


@needs_libyaml
def test_the_engine_reads_its_own_files_with_libyaml(monkeypatch):
    """The bundled variants go through the libyaml loader (what makes a command's start quicker)."""
    used: list[str] = []
    real = load_yaml

    def spy(text: str, source: str, *, libyaml: bool = False) -> Any:
        used.append(f"{source}:{libyaml}")
        return real(text, source, libyaml=libyaml)

    monkeypatch.setattr("dicecup.language.engine.load_yaml", spy)
    Engine(entry_points=False).variant("yahtzee")
    assert used == ["dicecup/variants/yahtzee.yaml:True"]


#: text libyaml reads but PyYAML refuses: a `?` inside a plain word of a flow mapping, a tab after a colon
LENIENT = ["a: {kin?d: face}\n", "a:\tb\n"]


@needs_libyaml
@pytest.mark.parametrize("text", LENIENT)
def test_any_other_text_is_judged_by_pyyaml(tmp_path, text):
    """A user's file that only libyaml would take is refused as before (PyYAML's error, with its line)."""
    assert yaml.load(text, Loader=yaml.CSafeLoader) is not None  # libyaml takes it
    with pytest.raises(VariantError, match="not valid YAML"):
        load_yaml(text, "user.yaml")
    path = tmp_path / "user.yaml"
    path.write_text(f"id: user\n{text}", encoding="utf-8")
    with pytest.raises(VariantError, match="not valid YAML"):
        Engine(entry_points=False).load_file(path)


@needs_libyaml
def test_a_bad_text_read_with_libyaml_gets_pyyamls_error():
    """Should libyaml refuse a text, PyYAML reads it again: the error is the one it always was."""
    text = "id: x\nboxes: {a: [1, 2}\n"
    with pytest.raises(VariantError) as plain:
        load_yaml(text, "x.yaml")
    with pytest.raises(VariantError) as fast:
        load_yaml(text, "x.yaml", libyaml=True)
    assert str(fast.value) == str(plain.value)
