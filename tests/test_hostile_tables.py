"""Hostile bytes where dicecup keeps its tables, fuzzed: cache files (truncated, flipped, compressed, huge
declared sizes, and signed with the user's own key around forged sizes), cluster chunk stores and --work-dir
folders (links to /dev/zero or out of the folder, FIFOs, folders where files belong, wrong sizes, forged
descriptions). Every case ends at once, in bounded memory, with one clear error or a warning and a recompute,
and nothing that was not the cache's own is touched.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import tempfile
import time
import tracemalloc
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dicecup import Engine
from dicecup.fileio import FileError
from dicecup.solver import cache
from dicecup.solver.errors import StateSpaceTooLarge
from dicecup.solver.signed import read_signed_npz

SECONDS = 20  # any one case: far more than a refusal takes, far less than a hang
MEMORY = 64 << 20  # bytes allocated while one case runs (the files are under a megabyte)
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@contextlib.contextmanager
def bounded(seconds: int = SECONDS, memory: int = MEMORY) -> Iterator[None]:
    """Fail (never hang) past `seconds`; fail when more than `memory` bytes were allocated at the peak."""

    def too_long(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(seconds)
    tracemalloc.start()
    try:
        yield
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert peak < memory, f"{peak:,} bytes allocated"


# ---------------------------------------------------------------------- cache files


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> dict[str, Any]:
    """Yacht's table solved once: its file's bytes, header and arrays, and the key that signed it."""
    folder = tmp_path_factory.mktemp("table")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(cache.CACHE_ENV, str(folder / "cache"))
        mp.setenv(cache.STATE_ENV, str(folder / "state"))
        v = Engine(entry_points=False).variant("yacht")
        solution, _ = cache.load_or_solve(v)
        path = cache.cache_path(v)
        raw = path.read_bytes()
        with np.load(path) as data:
            arrays = {k: data[k].copy() for k in data.files}
        header = json.loads(bytes(arrays.pop("header")).decode())
        return {
            "variant": v,
            "raw": raw,
            "header": header,
            "arrays": arrays,
            "key": (folder / "state" / cache.KEY_FILE).read_bytes(),
            "state": folder / "state",
            "name": path.name,
            "value": solution.expected_score,
        }


@contextlib.contextmanager
def cache_with(table: dict[str, Any], raw: bytes) -> Iterator[Path]:
    """A cache folder of its own holding `raw` as yacht's table, signed by the table's key; its path."""
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setenv(cache.CACHE_ENV, str(Path(tmp) / "cache"))
        mp.setenv(cache.STATE_ENV, str(Path(tmp) / "state"))
        shutil.copytree(table["state"], Path(tmp) / "state")
        (Path(tmp) / "state" / cache.VERIFIED_FILE).unlink(missing_ok=True)
        path = Path(tmp) / "cache" / table["name"]
        path.parent.mkdir()
        path.write_bytes(raw)
        yield path


def npz(members: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **members)
    return buf.getvalue()


def signed(table: dict[str, Any], header: dict, arrays: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    """A table file signed with the user's own key: only what it declares can be wrong."""
    header = {k: v for k, v in header.items() if k != "hmac"}
    try:
        header["hmac"] = cache._mac(table["key"], header, arrays)
    except Exception:  # arrays the signature cannot even be computed over: the file is then unsigned
        header["hmac"] = "0" * 64
    head = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    return npz({"header": head, **arrays}, compressed)


def load_refused(table: dict[str, Any], raw: bytes) -> str | None:
    """Load `raw` as the table: None when it loads (and is then right), else the refusal's text; always in
    bounded time and memory, and the refusal a CacheInvalid, a FileError or a StateSpaceTooLarge."""
    with cache_with(table, raw), bounded():
        try:
            got = cache.load(table["variant"], verify_values=True)
        except (cache.CacheInvalid, FileError, StateSpaceTooLarge) as exc:
            assert str(exc) and len(str(exc)) < 400, str(exc)
            return str(exc)
    assert got.expected_score == table["value"]
    return None


JSON_JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)
HEADER_FIELDS = ("states", "groups", "clamps", "box_min", "box_max", "flags", "symmetric", "seconds", "objective")


@st.composite
def forged_header(draw: Any, table: dict[str, Any]) -> dict:
    header = json.loads(json.dumps(table["header"]))
    for key in draw(st.lists(st.sampled_from(HEADER_FIELDS), min_size=1, max_size=3, unique=True)):
        header[key] = draw(
            JSON_JUNK
            | st.integers(min_value=10**6, max_value=10**15)
            | st.lists(st.lists(st.integers(min_value=-5, max_value=10**9), max_size=20), min_size=0, max_size=2000)
        )
    return header


ARRAY_FORGERIES = {
    "values of another type": lambda a: a.__setitem__("values", np.ones(a["values"].shape, dtype=np.int8)),
    "values cut": lambda a: a.__setitem__("values", a["values"][:-7].copy()),
    "values as a matrix": lambda a: a.__setitem__("values", np.zeros((len(a["values"]), 3))),
    "huge dims": lambda a: a.__setitem__("dims", np.full_like(a["dims"], 2**40)),
    "zero dims": lambda a: a.__setitem__("dims", np.zeros_like(a["dims"])),
    "codes out of range": lambda a: a.__setitem__("codes", a["codes"] + 2**50),
    "negative codes": lambda a: a.__setitem__("codes", -a["codes"] - 1),
    "pmin of another shape": lambda a: a.__setitem__("pmin", np.zeros((3, 3), dtype=np.int64)),
    "no classes": lambda a: a.update(codes=a["codes"][:0], pmin=a["pmin"][:0], dims=a["dims"][:0]),
    "codes of floats": lambda a: a.__setitem__("codes", a["codes"].astype(np.float64)),
    "strings": lambda a: a.__setitem__("pmin", np.array(["x"] * a["pmin"].size)),
}


@FUZZ
@given(data=st.data())
def test_a_table_signed_with_the_users_key_around_forged_sizes_is_refused(table, data):
    header = data.draw(forged_header(table))
    arrays = {k: a.copy() for k, a in table["arrays"].items()}
    for name in data.draw(st.lists(st.sampled_from(sorted(ARRAY_FORGERIES)), max_size=2, unique=True)):
        ARRAY_FORGERIES[name](arrays)
    load_refused(table, signed(table, header, arrays))


@FUZZ
@given(data=st.data())
def test_truncated_or_flipped_table_files_are_refused(table, data):
    raw = bytearray(table["raw"])
    if data.draw(st.booleans()):
        raw = raw[: data.draw(st.integers(min_value=0, max_value=len(raw) - 1))]
        assert load_refused(table, bytes(raw)) is not None
    else:  # a flipped byte the zip format does not read (a time, a checksum) may load: then with the right values
        for at in data.draw(st.lists(st.integers(min_value=0, max_value=len(raw) - 1), min_size=1, max_size=8)):
            raw[at] ^= data.draw(st.integers(min_value=1, max_value=255))
        load_refused(table, bytes(raw))


def stored_member(name: str, npy_header: bytes, body: bytes) -> tuple[str, bytes]:
    return f"{name}.npy", npy_header + body


def npy_header(shape: tuple, descr: str = "<f8") -> bytes:
    text = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode()
    pad = 64 - (10 + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text


def zip_of(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


@FUZZ
@given(
    shape=st.lists(st.integers(min_value=0, max_value=10**13), min_size=1, max_size=3).map(tuple),
    descr=st.sampled_from(["<f8", "<i8", "|O", "<U10", "|V8", "<f4"]),
    body=st.binary(max_size=2048),
    compress=st.booleans(),
)
@example(shape=(0, 10**13, 10**13), descr="<f8", body=b"", compress=False)  # empty, past what numpy can index
def test_members_declaring_huge_shapes_are_refused_unread(table, shape, descr, body, compress):
    head = np.frombuffer(json.dumps(table["header"]).encode(), dtype=np.uint8)
    members = [stored_member("header", npy_header(head.shape, "|u1"), head.tobytes())]
    members += [stored_member(n, npy_header(shape, descr), body) for n in ("values", "codes", "pmin", "dims")]
    raw = zip_of(members, zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED)
    assert load_refused(table, raw) is not None


@pytest.fixture(scope="module")
def inflating(table) -> bytes:
    """The issue's case: a table file of a few MB whose values inflate to 512 MiB of zeros, signed with the user's
    key over what it would inflate to (made streaming: this test never holds the gigabyte either)."""
    import hashlib
    import hmac

    count = 1 << 26
    header = {k: v for k, v in table["header"].items() if k != "hmac"}
    arrays = dict(table["arrays"])
    mac = hmac.new(table["key"], json.dumps(header, sort_keys=True).encode(), hashlib.sha256)
    for name in cache._ARRAYS:
        a = arrays.get(name)
        dtype, shape = (np.dtype(np.float64), (count,)) if name == "values" else (a.dtype, a.shape)
        mac.update(f"\0{name}\0{dtype.str}\0{shape}\0".encode())
        if name == "values":
            for _ in range(count // (1 << 17)):
                mac.update(bytes(8 << 17))
        else:
            mac.update(np.ascontiguousarray(a).tobytes())
    header["hmac"] = mac.hexdigest()
    head = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.npy", npy_header(head.shape, "|u1") + head.tobytes())
        with zf.open("values.npy", "w", force_zip64=True) as out:
            out.write(npy_header((count,)))
            for _ in range(count // (1 << 17)):
                out.write(bytes(8 << 17))
        for name in ("codes", "pmin", "dims"):
            a = arrays[name]
            zf.writestr(f"{name}.npy", npy_header(a.shape, a.dtype.str) + a.tobytes())
    return buf.getvalue()


def test_a_small_file_inflating_to_half_a_gigabyte_is_refused_before_inflating(table, inflating):
    assert len(inflating) < 3 << 20
    started = time.perf_counter()
    why = load_refused(table, inflating)
    assert why is not None and "compressed" in why
    assert time.perf_counter() - started < 2


def test_a_zip_listing_a_hundred_thousand_members_is_refused_before_they_are_listed(table):
    raw = zip_of([(f"m{i}.npy", b"") for i in range(100_000)])
    assert "zip directory lists 100,000 members" in load_refused(table, raw)


@FUZZ
@given(raw=st.binary(max_size=4096))
def test_any_bytes_are_refused(table, raw):
    assert load_refused(table, raw) is not None


@pytest.mark.parametrize(
    "forge",
    [
        lambda t, big: signed(t, dict(t["header"], groups=[list(range(12))] * 20_000), t["arrays"]),
        lambda t, big: big,
        lambda t, big: t["raw"][: len(t["raw"]) // 2],
        lambda t, big: b"\0" * 1000,
    ],
    ids=["signed, 20,000 groups", "inflating to 512 MiB", "truncated", "zeros"],
)
def test_a_forged_table_is_a_warning_and_a_recompute_and_the_new_file_is_good(table, inflating, forge):
    forged = forge(table, inflating)
    with cache_with(table, forged) as path, bounded(60, 256 << 20):
        warnings: list[str] = []
        solution, cached = cache.load_or_solve(table["variant"], warn=warnings.append)
        assert not cached and solution.expected_score == table["value"]
        assert len(warnings) == 1 and "ignored and rebuilt" in warnings[0], warnings
        assert cache.load(table["variant"], verify_values=True).expected_score == table["value"]
        assert path.read_bytes() != forged


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "outside", "directory"])
def test_a_table_path_that_is_no_file_of_ours_is_left_alone(table, tmp_path, kind):
    outside = tmp_path / "mine.txt"
    outside.write_text("not the cache's")
    with cache_with(table, b"") as path, bounded():
        path.unlink()
        {"fifo": lambda: os.mkfifo(path), "dev_zero": lambda: path.symlink_to("/dev/zero"),
         "outside": lambda: path.symlink_to(outside), "directory": lambda: path.mkdir()}[kind]()  # fmt: skip
        warnings: list[str] = []
        solution, _ = cache.load_or_solve(table["variant"], warn=warnings.append)
        assert solution.expected_score == table["value"] and len(warnings) >= 1
        assert os.path.lexists(path) or kind == "outside"
    assert outside.read_text() == "not the cache's"


# ---------------------------------------------------------------------- arrays kept beside a table


def test_forged_card_tables_are_refused_by_the_same_reader(table):
    """The arrays kept beside a table (the advisor's card tables) go through the same bounded reader."""
    from dicecup.solver import card_tables

    header = {"format": cache.ARRAYS_FORMAT, "kind": card_tables.KIND, "names": ["codes"], "meta": {}}
    head = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    raw = npz({"header": head, "a_codes": np.zeros(1 << 24)}, compressed=True)  # 128 MiB in 130 kB
    with cache_with(table, table["raw"]), bounded(60, 16 << 20):
        v = table["variant"]
        path = cache.arrays_path(v, card_tables.KIND)
        path.write_bytes(raw)
        warnings: list[str] = []
        assert cache.load_arrays(v, card_tables.KIND, warnings.append) is None
        assert "compressed" in warnings[0] and not path.exists()


# ---------------------------------------------------------------------- cluster chunk stores

zarr = pytest.importorskip("zarr")

from dicecup.cluster import ClusterStoreError  # noqa: E402
from dicecup.cluster.store import PROGRESS, LayerStore, chunk_path  # noqa: E402
from dicecup.solver.workdir import VALUES, WorkDir, WorkDirError  # noqa: E402

SIZES = [3, 20, 9]
SIGNATURE = {"variant": "fuzz", "version": 1}


def make_store(folder: Path, columns: int) -> list[np.ndarray]:
    """A finished store of three layers (blocks of 8 states); each layer's values."""
    store = LayerStore(folder, SIGNATURE, 8, SIZES, columns, np.float64)
    layers = []
    for k, n in enumerate(SIZES):
        values = np.arange(n * columns, dtype=np.float64).reshape((n,) if columns == 1 else (n, columns)) + k
        store.write(k, values)
        layers.append(values)
    return layers


def store_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


HOSTILE = ["dev_zero", "fifo", "outside", "directory", "cut", "grown", "empty", "garbage", "deep_json", "huge_shape"]


def spoil(path: Path, kind: str, outside: Path) -> None:
    """Replace the store's file `path` with something hostile of `kind`."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        data = path.read_bytes()
        path.unlink()
    else:
        data = b""
    if kind == "dev_zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "outside":
        path.symlink_to(outside)
    elif kind == "directory":
        path.mkdir()
    elif kind == "cut":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "grown":
        path.write_bytes(data + b"\0" * 4096)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif kind == "deep_json":
        path.write_bytes(b"[" * 100_000)
    else:  # a description declaring a layer of a trillion states (any other file: that text)
        try:
            meta = json.loads(data)
            meta["shape"][0] = 10**12
        except (ValueError, KeyError, TypeError, IndexError):
            meta = {"shape": [10**12]}
        path.write_text(json.dumps(meta))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_spoiled_store_file_is_one_clear_error_never_a_hang(data):
    columns = data.draw(st.sampled_from([1, 3]))
    with tempfile.TemporaryDirectory() as tmp:
        folder, outside = Path(tmp) / "store", Path(tmp) / "mine.bin"
        outside.write_bytes(b"x" * 4096)
        layers = make_store(folder, columns)
        targets = [p for p in folder.rglob("*") if p.is_file()]
        for path in data.draw(st.lists(st.sampled_from(targets), min_size=1, max_size=2, unique=True)):
            spoil(path, data.draw(st.sampled_from(HOSTILE)), outside)
        with bounded():
            try:
                store = LayerStore(folder, SIGNATURE, 8, SIZES, columns, np.float64)
                for k, want in enumerate(layers):
                    got = store.read(k)
                    assert got.tobytes() == want.tobytes()  # read back whole, or refused: never wrong
            except ClusterStoreError as exc:
                text = str(exc)
                assert text.startswith(f"{folder}: "), text
                assert "delete the folder to start over" in text or "give another store" in text, text
                assert "()" not in text and len(text) < 500, text
        assert outside.read_bytes() == b"x" * 4096  # a file a link points at is never written


@pytest.mark.parametrize("kind", ["dev_zero", "fifo", "outside", "directory", "cut", "grown"])
def test_a_chunk_replaced_names_the_chunk_and_what_it_is(tmp_path, kind):
    folder = tmp_path / "store"
    outside = tmp_path / "mine.bin"
    outside.write_bytes(b"y" * 100)
    make_store(folder, 1)
    chunk = Path(chunk_path(folder, 1, 1, 1))
    spoil(chunk, kind, outside)
    with bounded(), pytest.raises(ClusterStoreError) as got:
        store = LayerStore(folder, SIGNATURE, 8, SIZES, 1, np.float64)
        store.read(1)
    text = str(got.value)
    assert "layer_1/c/1" in text and text.endswith("delete the folder to start over"), text
    words = {"dev_zero": "a symbolic link (to /dev/zero)", "fifo": "a named pipe (FIFO)", "outside": "symbolic link",
             "directory": "a directory", "cut": "not a chunk's 64", "grown": "at most 64 bytes"}  # fmt: skip
    assert words[kind] in text, text
    assert outside.read_bytes() == b"y" * 100


def test_the_worker_reads_a_layer_through_the_same_checks(tmp_path):
    from dicecup.cluster.store import read_layer

    folder = tmp_path / "store"
    layers = make_store(folder, 3)
    assert read_layer(folder, 1, (20, 3)).tobytes() == layers[1].tobytes()
    spoil(Path(chunk_path(folder, 1, 0, 3)), "dev_zero", tmp_path)
    with bounded(), pytest.raises(ClusterStoreError, match="symbolic link"):
        read_layer(folder, 1, (20, 3))
    with pytest.raises(ClusterStoreError, match=r"describes \(20, 3\) in chunks \(8, 3\), not \(21, 3\)"):
        read_layer(folder, 1, (21, 3))


# ---------------------------------------------------------------------- --work-dir folders


@pytest.mark.parametrize("target", [VALUES, PROGRESS])
@pytest.mark.parametrize("kind", ["dev_zero", "fifo", "outside", "directory", "cut", "grown", "garbage", "deep_json"])
def test_a_spoiled_work_folder_is_one_clear_error(tmp_path, target, kind):
    signature = {"variant": "fuzz"}
    work = tmp_path / "work"
    outside = tmp_path / "mine.bin"
    outside.write_bytes(b"z" * 100)
    WorkDir(work, signature, (40, 2), np.float64).finish(0, 0, 40)
    spoil(work / target, kind, outside)
    with bounded(), pytest.raises(WorkDirError) as got:
        WorkDir(work, signature, (40, 2), np.float64)
    text = str(got.value)
    assert text.startswith(f"{work}: ") and ("delete the folder" in text or "remove it" in text), text
    assert (target in text or "progress record" in text) and len(text) < 400, text
    assert outside.read_bytes() == b"z" * 100


def _read_either_way(path: Any, table: dict[str, Any], mapped: bool) -> tuple[str, Any]:
    """("ok", (header, arrays)) or ("refused", its message) of reading `path` as the table's kind of file."""
    try:
        header, arrays = read_signed_npz(
            path, secret=table["key"], fmt=cache.FORMAT, names=cache._ARRAYS,
            limit=1 << 24, what="strategy table", mapped=mapped,
        )  # fmt: skip
    except (cache.CacheInvalid, FileError) as exc:
        return "refused", str(exc)
    return "ok", (header, {k: (a.dtype.str, a.shape, a.tobytes()) for k, a in arrays.items()})


@FUZZ
@given(data=st.data())
def test_a_mapped_read_checks_exactly_what_a_read_checks(table, data, tmp_path_factory):
    """Mapped (large tables: read-only views of the file) or read, a file is accepted or refused alike: the
    same checks, the same message, the same arrays; an empty file is refused, not mapped."""
    raw = bytearray(table["raw"])
    how = data.draw(st.sampled_from(["whole", "cut", "flipped", "junk"]))
    if how == "cut":
        raw = raw[: data.draw(st.integers(min_value=0, max_value=len(raw) - 1))]
    elif how == "flipped":
        for at in data.draw(st.lists(st.integers(min_value=0, max_value=len(raw) - 1), min_size=1, max_size=8)):
            raw[at] ^= data.draw(st.integers(min_value=1, max_value=255))
    elif how == "junk":
        raw = bytearray(data.draw(st.binary(max_size=2048)))
    path = tmp_path_factory.mktemp("mapped") / "table.npz"
    path.write_bytes(bytes(raw))
    read = _read_either_way(path, table, mapped=False)
    assert _read_either_way(path, table, mapped=True) == read
    if how == "whole":
        assert read[0] == "ok"
