"""Variant documents kept parsed (`language.parsed`): the command line's engine keeps each document it parses,
signed, in the cache folder, and the next process reads it back without PyYAML. A kept document is the parsed
one, lines included; any damage, forgery or mismatch falls back to parsing the text (a warning for a bad file),
and the answers are the same bits either way."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import pytest
from _solver_helpers import TINY

from dicecup import Engine
from dicecup.errors import VariantError
from dicecup.language import engine as engine_module
from dicecup.language import parsed
from dicecup.language.parsed import FOLDER, KeptDocuments, decode, encode
from dicecup.language.yamlload import load_yaml
from dicecup.language.yamlsource import LocDict, LocList
from dicecup.signing import CACHE_ENV, STATE_ENV, signing_key

BUNDLED = sorted(p for p in resources.files("dicecup.variants").iterdir() if p.name.endswith(".yaml"))


@pytest.fixture
def folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The cache and state folders in the test's own folder, with the user's key made (as a solve makes it)."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "state"))
    monkeypatch.setenv("DICECUP_DISABLE_PLUGIN_AUTOLOAD", "1")
    signing_key()
    return tmp_path / "cache" / FOLDER


def _same(a, b) -> bool:
    """The same document: the same values of the same types in the same order, and the same lines."""
    if type(a) is not type(b):
        return False
    if isinstance(a, LocDict):
        return (a.loc, a.key_locs, list(a)) == (b.loc, b.key_locs, list(b)) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, LocList):
        return (a.loc, a.item_locs, len(a)) == (b.loc, b.item_locs, len(b)) and all(map(_same, a, b))
    return a == b


@pytest.mark.parametrize("libyaml", [False, True])
@pytest.mark.parametrize("file", BUNDLED, ids=lambda f: f.name)
def test_a_kept_document_is_the_parsed_one(file, libyaml):
    """Encoded and decoded, every bundled variant's document is the parsed one: values, types, order, lines."""
    import marshal

    parsed = load_yaml(file.read_text(encoding="utf-8"), file.name, libyaml=libyaml)
    back = decode(marshal.loads(marshal.dumps(encode(parsed, file.name))), file.name)
    assert _same(parsed, back)
    assert not _same(parsed, decode(encode(parsed, file.name), "elsewhere.yaml"))  # the lines name the source


ANCHORED = """id: anchored
name: Anchored
base: &b {kind: face, face: 1}
other:
  <<: *b
  face: 2
"""
SHARED = """id: shared
name: Shared
a: &a [1, 2]
b: *a
"""


def test_merged_keys_are_kept_with_their_lines_and_shared_values_are_not_kept(folders):
    """`<<` of plain values is kept, each key with its own line; a list an alias shares is not kept at all
    (decoded, the two places would no longer be one object): it is parsed each time."""
    kept = KeptDocuments()
    for text, keeps in ((ANCHORED, True), (SHARED, False)):
        doc = load_yaml(text, "x.yaml")
        kept.put(text, "x.yaml", False, doc)
        got = kept.get(text, "x.yaml", False)
        assert (got is not None) == keeps
        if keeps:
            assert _same(doc, got) and got["other"].key_locs["kind"] == ("x.yaml", 3)


def _no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the text was parsed")

    monkeypatch.setattr(engine_module, "load_yaml", refuse)


def test_an_engine_reads_the_documents_another_kept_and_compiles_the_same_variants(folders, monkeypatch):
    """The first engine parses and keeps each document; a second one parses none and compiles every bundled
    variant to the same variant (the same fingerprint and the same resolved document)."""
    first = Engine(documents=KeptDocuments())
    ids = first.variant_ids()
    before = {vid: first.variant(vid) for vid in ids}
    assert len(list(folders.iterdir())) == len(ids)
    _no_parse(monkeypatch)
    second = Engine(documents=KeptDocuments())
    for vid in ids:
        again = second.variant(vid)
        assert again.fingerprint == before[vid].fingerprint
        assert _same(again.document, before[vid].document)


def test_without_a_key_nothing_is_kept(monkeypatch, tmp_path):
    """A user with no key yet (nothing solved) gets the documents parsed, and no key, folder or file made."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "state"))
    Engine(documents=KeptDocuments()).variant("yacht")
    assert list(tmp_path.iterdir()) == []


def _tamper(path: Path, how: str) -> None:
    raw = path.read_bytes()
    head, _, payload = raw.partition(b"\n")
    if how == "payload":
        path.write_bytes(head + b"\n" + payload[:-3] + bytes([payload[-3] ^ 1]) + payload[-2:])
    elif how == "signature":
        path.write_bytes(head[:-1] + (b"0" if head[-1:] != b"0" else b"1") + b"\n" + payload)
    elif how == "format":
        path.write_bytes(b"not-a-document " + head + b"\n" + payload)
    elif how == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif how == "garbage":
        path.write_bytes(os.urandom(len(raw)))


@pytest.mark.parametrize("how", ["payload", "signature", "format", "truncated", "garbage"])
def test_a_tampered_document_is_said_removed_and_parsed_again(folders, how):
    """A kept file that fails its signature (or is not one) is never used: one warning, the file removed, the
    text parsed, the same variant; the next engine keeps it again."""
    want = Engine(documents=KeptDocuments()).variant("yahtzee")
    (path,) = folders.iterdir()
    _tamper(path, how)
    said: list[str] = []
    got = Engine(documents=KeptDocuments(warn=said.append)).variant("yahtzee")
    assert got.fingerprint == want.fingerprint and _same(got.document, want.document)
    assert len(said) == 1 and "damaged, stale or not ours" in said[0] and str(path) in said[0]
    assert path.exists()  # kept again, from the text parsed


def test_a_document_of_another_text_or_code_is_not_used(folders, monkeypatch):
    """A kept file whose key is not the text's (another text at the same source, or other code) is a silent
    miss: the text is parsed, and kept over it."""
    kept = KeptDocuments()
    first, second = TINY["threshold"], TINY["served"]
    kept.put(first, "t.yaml", False, load_yaml(first, "t.yaml"))
    assert kept.get(second, "t.yaml", False) is None  # same source, another text
    assert kept.get(first, "t.yaml", True) is None  # the other parser
    other_code = KeptDocuments()
    other_code._code = b"another loader"
    assert other_code.get(first, "t.yaml", False) is None
    assert kept.get(first, "t.yaml", False) is not None  # (nothing was removed)


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_fifo_or_folder_where_a_document_is_kept_is_not_read(folders, kind):
    """A FIFO or a folder at a kept document's path: never read (no hang), said once, the text parsed."""
    Engine(documents=KeptDocuments()).variant("yacht")
    (path,) = folders.iterdir()
    path.unlink()
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    said: list[str] = []
    assert Engine(documents=KeptDocuments(warn=said.append)).variant("yacht").id == "yacht"
    assert len(said) == 1 and "not used" in said[0]


def test_a_kept_document_gives_the_same_errors_with_the_same_lines(folders, tmp_path, monkeypatch):
    """A variant file whose rules are wrong is refused with the same message (file and line) whether its
    document was parsed now or kept."""
    path = tmp_path / "bad.yaml"
    path.write_text(TINY["threshold"].replace("kind: threshold", "kind: nonsense"), encoding="utf-8")
    errors = []
    for _ in range(2):
        with pytest.raises(VariantError) as caught:
            Engine(documents=KeptDocuments()).load_file(path)
        errors.append(str(caught.value))
        _no_parse(monkeypatch)
    assert errors[0] == errors[1] and errors[0].startswith(f"{path}:11: ")


def test_at_most_keep_documents_are_kept_the_least_recently_written_going_first(folders, monkeypatch, tmp_path):
    """One kept document a source file, and at most `KEEP` of them: past it, the least recently written is
    removed (it is only parsed again), so variant files made in ever new folders do not fill the cache."""
    monkeypatch.setattr(parsed, "KEEP", 2)
    written: list[str] = []
    for k in range(3):
        path = tmp_path / f"house{k}.yaml"
        path.write_text(TINY["threshold"], encoding="utf-8")
        before = set(os.listdir(folders)) if folders.exists() else set()
        Engine(documents=KeptDocuments()).load_file(path)
        (new,) = set(os.listdir(folders)) - before
        os.utime(folders / new, ns=(k * 10**9, k * 10**9))  # (written a second apart: the clock's tick is coarse)
        written.append(new)
    assert sorted(os.listdir(folders)) == sorted(written[1:])


def test_two_keys_sharing_a_cache_folder_keep_their_own_documents(folders, monkeypatch, tmp_path):
    """Two state folders (two keys) over one cache folder: each keeps and reads its own documents, and neither
    takes the other's for a forgery (no warning, nothing removed)."""
    said: list[str] = []
    Engine(documents=KeptDocuments(warn=said.append)).variant("yacht")
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "other-state"))
    signing_key()
    Engine(documents=KeptDocuments(warn=said.append)).variant("yacht")
    assert len(list(folders.iterdir())) == 2
    _no_parse(monkeypatch)
    assert Engine(documents=KeptDocuments(warn=said.append)).variant("yacht").id == "yacht"
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "state"))
    assert Engine(documents=KeptDocuments(warn=said.append)).variant("yacht").id == "yacht"
    assert said == []
