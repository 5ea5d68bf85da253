"""The strategy-table cache never raises a traceback, never hangs and never trusts a tampered table;
engines with different plugins never share a cached result.

Every test has its own cache folder and its own key folder ($DICECUP_STATE_DIR).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dicecup import Award, Card, Engine, hookimpl
from dicecup.simulate import batch, simulate
from dicecup.solver import cache, solve

TIMEOUT = 60


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    """A cache folder and a key folder of this test's own (so no table read by another test is remembered: the
    engine remembers them by path)."""
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))


@pytest.fixture(scope="module")
def yacht_value(engine) -> float:
    return solve(engine.variant("yacht")).expected_score


def cli_solve(*env_pairs: tuple[str, str]) -> subprocess.CompletedProcess:
    """`dicecup solve -v yacht --json` as a subprocess (a hang is a timeout, not a stuck test run)."""
    env = dict(os.environ, DICECUP_DISABLE_PLUGIN_AUTOLOAD="1", **dict(env_pairs))
    return subprocess.run(
        [sys.executable, "-m", "dicecup", "solve", "-v", "yacht", "--json", "-q"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
    )


def answered_uncached(done: subprocess.CompletedProcess, value: float, warning: str) -> None:
    """Exit 0 with the exact value on stdout, and one `warning:` line saying `warning` on stderr."""
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["expected_score"] == value
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings and warning in warnings[0], done.stderr
    assert "Traceback" not in done.stderr


# ----------------------------------------------------------------------------- things in the way


def test_a_directory_at_the_tables_path(engine, yacht_value):
    path = cache.cache_path(engine.variant("yacht"))
    path.mkdir(parents=True)
    answered_uncached(cli_solve(), yacht_value, "is a directory, not a strategy table")
    assert path.is_dir()  # never removed: it is not ours


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_fifo_at_the_tables_path_does_not_hang(engine, yacht_value):
    path = cache.cache_path(engine.variant("yacht"))
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    answered_uncached(cli_solve(), yacht_value, "named pipe (FIFO)")
    assert stat.S_ISFIFO(os.stat(path).st_mode)


def test_a_file_where_the_cache_folder_should_be(tmp_path, yacht_value):
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")
    answered_uncached(cli_solve(), yacht_value, f"{blocker} is not a folder")
    assert blocker.read_text() == "not a folder"


def test_a_file_where_the_key_folder_should_be(tmp_path, yacht_value):
    blocker = tmp_path / "state"
    blocker.write_text("not a folder")
    answered_uncached(cli_solve(), yacht_value, "cannot read the key file")
    assert not (tmp_path / "cache").exists()  # no table without a key


def test_a_read_only_cache_folder(engine, tmp_path, monkeypatch, yacht_value):
    folder = tmp_path / "cache"
    folder.mkdir()
    if os.name == "posix" and os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            answered_uncached(cli_solve(), yacht_value, "could not write the cache")
        finally:
            folder.chmod(0o755)
    else:  # root writes anywhere: make the write itself fail as a read-only folder would

        def refuse(path, write):
            raise PermissionError(13, "Permission denied", str(path))

        monkeypatch.setattr(cache, "write_atomic_with", refuse)
        warnings: list[str] = []
        solution, cached = cache.load_or_solve(engine.variant("yacht"), warn=warnings.append)
        assert not cached and solution.expected_score == yacht_value
        assert len(warnings) == 1 and "could not write the cache" in warnings[0] and "Permission denied" in warnings[0]
    assert list(folder.iterdir()) == []


def test_a_key_others_can_read_is_not_used(engine, tmp_path, yacht_value):
    cache.load_or_solve(engine.variant("yacht"))  # creates the key
    key = tmp_path / "state" / cache.KEY_FILE
    key.chmod(0o644)
    if os.name == "posix":
        answered_uncached(cli_solve(), yacht_value, "is not private to this user")


def test_the_key_is_private_and_outside_the_cache(engine, tmp_path, monkeypatch, yacht_value):
    cache.load_or_solve(engine.variant("yacht"))
    key = tmp_path / "state" / cache.KEY_FILE
    assert key.stat().st_size == cache.KEY_BYTES
    if os.name == "posix":
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "cache" / "keys"))
    warnings: list[str] = []
    solution, cached = cache.load_or_solve(engine.variant("yacht"), warn=warnings.append)
    assert not cached and solution.expected_score == yacht_value
    assert "would be inside the cache folder" in warnings[0]


def test_file_names_stay_short_for_the_longest_id(tmp_path):
    vid = "a" * 64
    path = tmp_path / "long.yaml"
    path.write_text(f"id: {vid}\ndice: {{count: 1, faces: 2}}\nboxes:\n  x: {{pattern: always, score: total}}\n")
    v = Engine(entry_points=False).load_file(path)
    assert v.id == vid
    name = cache.cache_path(v).name
    assert len(name) < 150 and name.startswith(vid)
    solution, _ = cache.load_or_solve(v)
    assert cache.load_or_solve(v)[1] and solution.expected_score == pytest.approx(1.875)  # keep a 2, else roll again


# ----------------------------------------------------------------------------- tampering


def _read(path) -> tuple[dict, dict[str, np.ndarray]]:
    with np.load(path) as data:
        arrays = {k: data[k].copy() for k in data.files}
    return json.loads(bytes(arrays.pop("header")).decode()), arrays


def _write(path, header: dict, arrays: dict[str, np.ndarray]) -> None:
    buf = io.BytesIO()
    np.savez(buf, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    path.write_bytes(buf.getvalue())


def _plain_sha256(arrays: dict[str, np.ndarray]) -> str:
    """The checksum the cache used to trust: anyone can recompute it."""
    h = hashlib.sha256()
    for name in ("values", "codes", "pmin", "dims"):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _start_slot(solution) -> int:
    """Where the value of the start of the game is in the table."""
    code, prog = solution.index.state_of_card(Card())
    return int(solution.index.lookup(np.array([code]), prog)[0])


def _rejected_and_rebuilt(variant, good: float, reason: str) -> None:
    warnings: list[str] = []
    again, cached = cache.load_or_solve(variant, warn=warnings.append)
    assert not cached and again.expected_score == good
    assert len(warnings) == 1 and "ignored and rebuilt" in warnings[0] and reason in warnings[0], warnings
    assert cache.load(variant, verify_values=True).expected_score == good  # the rebuilt file is good


@pytest.mark.parametrize("sign", ["plain-sha256", "wrong-key"])
def test_replaced_values_with_a_recomputed_checksum_are_rejected(engine, sign):
    v = engine.variant("yacht")
    good = cache.load_or_solve(v)[0].expected_score
    path = cache.cache_path(v)
    header, arrays = _read(path)
    arrays["values"] = np.where(np.isfinite(arrays["values"]), arrays["values"] + 7.0, arrays["values"])
    if sign == "plain-sha256":
        header["sha256"] = _plain_sha256(arrays)
    else:
        header["hmac"] = cache._mac(os.urandom(cache.KEY_BYTES), header, arrays)
    _write(path, header, arrays)
    _rejected_and_rebuilt(v, good, "signature does not match")


def test_a_signed_table_with_a_wrong_start_value_is_rejected(engine, tmp_path):
    """Even with the right key (leaked, or a solver bug), the start state is recomputed on load."""
    v = engine.variant("yacht")
    good = cache.load_or_solve(v)[0].expected_score
    path = cache.cache_path(v)
    header, arrays = _read(path)
    solution = cache.load(v)
    start = _start_slot(solution)
    arrays["values"][start] += 0.5
    header["hmac"] = cache._mac((tmp_path / "state" / cache.KEY_FILE).read_bytes(), header, arrays)
    _write(path, header, arrays)
    cache.load(v)  # the signature is fine ...
    _rejected_and_rebuilt(v, good, "wrong values")  # ... the values are not


def test_signed_tables_with_wrong_values_elsewhere_fail_the_sample(engine, tmp_path):
    """Half the states off by a little, the start state right: a random sample of 16 finds one."""
    v = engine.variant("yahtzee")
    cache.load_or_solve(v)
    solution = cache.load(v)
    values = solution.values.copy()
    start = _start_slot(solution)
    rng = np.random.default_rng(7)
    off = rng.random(len(values)) < 0.5
    off[start] = False
    values[off] += 1e-6
    tampered = cache.Solution(v, solution.index, values, solution.states, solution.seconds)
    with pytest.raises(cache.CacheInvalid, match="wrong values"):
        cache.verify(tampered, rng=np.random.default_rng(1))
    cache.verify(solution, rng=np.random.default_rng(1))  # the true table passes the same sample


def test_more_states_than_the_limit_is_refused_for_a_cached_table_too(engine):
    v = engine.variant("yacht")
    cache.load_or_solve(v)
    with pytest.raises(
        cache.StateSpaceTooLarge, match=r"has 4,096 states, above the limit of 100; raise it with --max-states"
    ):
        cache.load_or_solve(v, max_states=100)
    with pytest.raises(cache.StateSpaceTooLarge, match=r"has 4,096 states, above the limit of 100"):
        cache.load(v, max_states=100)
    assert cache.load_or_solve(v, max_states=4096)[1]


# ----------------------------------------------------------------------------- plugins


class FullCard:
    """10 points once every box is filled: a plugin that applies to every variant."""

    @hookimpl
    def dicecup_end_bonuses(self, variant, card):
        return [Award("full_card", 10, "Full card")] if len(card.scores) == len(variant.boxes) else None


def test_engines_with_different_plugins_share_no_cached_result():
    plain = Engine(entry_points=False).variant("yacht")
    plugged = Engine(plugins=[FullCard()], entry_points=False).variant("yacht")
    assert cache.cache_path(plain) != cache.cache_path(plugged)
    a, _ = cache.load_or_solve(plain)
    b, cached = cache.load_or_solve(plugged)
    assert not cached and b.expected_score == pytest.approx(a.expected_score + 10, abs=1e-9)
    fast_a = simulate(plain, "greedy", 3000, seed=5)
    fast_b = simulate(plugged, "greedy", 3000, seed=5)
    assert fast_a.method == fast_b.method == "batched"
    assert batch.batched_for(plain) is not batch.batched_for(plugged)
    assert (fast_b.totals - fast_a.totals == 10).all()  # the same games, the bonus in every one
    slow_a = simulate(plain, "greedy", 12, seed=6, method="engine")
    slow_b = simulate(plugged, "greedy", 12, seed=6, method="engine")
    assert (slow_b.totals - slow_a.totals == 10).all()
    for fast, slow in ((fast_a, slow_a), (fast_b, slow_b)):
        se = np.hypot(fast.totals.std(ddof=1) / np.sqrt(fast.games), slow.totals.std(ddof=1) / np.sqrt(slow.games))
        assert abs(fast.totals.mean() - slow.totals.mean()) < 4 * se


class Points:
    """`points` once every box is filled: two instances differ only in their argument."""

    def __init__(self, points: int) -> None:
        self.points = points

    @hookimpl
    def dicecup_end_bonuses(self, variant, card):
        return [Award("full_card", self.points)] if len(card.scores) == len(variant.boxes) else None


def test_plugin_instances_with_other_arguments_share_no_result_in_a_process():
    """A plugin object's settings count in the fingerprint: no table, cache file or simulator table is shared."""
    ten = Engine(plugins=[Points(10)], entry_points=False).variant("yacht")
    twenty = Engine(plugins=[Points(20)], entry_points=False).variant("yacht")
    assert ten.fingerprint != twenty.fingerprint and cache.cache_path(ten) != cache.cache_path(twenty)
    a = simulate(ten, "greedy", 200, seed=3)
    b = simulate(twenty, "greedy", 200, seed=3)
    assert (b.totals - a.totals == 10).all()
    first, _ = cache.load_or_solve(ten)
    second, cached = cache.load_or_solve(twenty)
    assert not cached
    assert second.expected_score == pytest.approx(first.expected_score + 10, abs=1e-9)
    from dicecup.simulate.optimal import solution_for

    got_a, got_b = solution_for(ten), solution_for(twenty)  # what simulate -s optimal plays from
    assert got_b.expected_score == pytest.approx(got_a.expected_score + 10, abs=1e-9)


def _count_verifies(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = cache.verify

    def counting(solution, *args, **kwargs):
        calls.append(1)
        return real(solution, *args, **kwargs)

    monkeypatch.setattr(cache, "verify", counting)
    return calls


def test_a_table_is_checked_against_the_solver_once_not_on_every_load(engine, monkeypatch):
    """A table the solver just wrote is recorded as verified; a table from elsewhere is checked once."""
    v = engine.variant("yacht")
    calls = _count_verifies(monkeypatch)
    cache.load_or_solve(v)  # solved and written here: its values are the solver's own
    cache.load(v, verify_values=True)
    assert calls == []
    (cache.state_dir() / cache.VERIFIED_FILE).unlink()  # as if the table had been copied in from elsewhere
    cache.load(v, verify_values=True)
    cache.load(v, verify_values=True)
    assert calls == [1]


@pytest.mark.parametrize("record", [b"", b"\x00\xff garbage\n" * 50, b"z" * 64 + b"\n"])
def test_a_garbled_verified_record_only_means_checking_again(engine, monkeypatch, record):
    v = engine.variant("yacht")
    cache.load_or_solve(v)
    (cache.state_dir() / cache.VERIFIED_FILE).write_bytes(record)
    calls = _count_verifies(monkeypatch)
    assert cache.load(v, verify_values=True).expected_score == pytest.approx(solve(v).expected_score)
    assert calls == [1]
    cache.load(v, verify_values=True)
    assert calls == [1]  # the record was rewritten whole, with this table's signature


def test_a_verified_record_that_is_a_folder_is_ignored(engine, monkeypatch):
    v = engine.variant("yacht")
    cache.load_or_solve(v)
    record = cache.state_dir() / cache.VERIFIED_FILE
    record.unlink()
    record.mkdir()
    calls = _count_verifies(monkeypatch)
    cache.load(v, verify_values=True)
    cache.load(v, verify_values=True)
    assert calls == [1, 1]  # cannot be recorded: checked every time, and no error


# ----------------------------------------------------------------------------- the rules' code in the key


def test_the_key_covers_every_rule_plugin_the_language_layer_the_numeric_core_and_the_solver():
    """The source files hashed into every key: each built-in rule plugin, the engine's language layer, the
    numeric core the solver computes with (its turn recursion and layer kernels), the solver."""
    import dicecup.language.engine
    import dicecup.numeric.layer
    import dicecup.numeric.play
    import dicecup.numeric.turn
    import dicecup.plugins.joker

    files = {p.resolve() for p in cache._rules_files()}
    for module in (dicecup.plugins.joker, dicecup.language.engine, dicecup.numeric.layer, dicecup.numeric.turn, cache):
        assert module.__file__ is not None and Path(module.__file__).resolve() in files
    # the simulator's kernels decide no solved value: editing them keeps every table
    assert dicecup.numeric.play.__file__ is not None
    assert Path(dicecup.numeric.play.__file__).resolve() not in files


def test_a_rule_file_edited_in_place_with_its_size_and_time_kept_changes_the_key(tmp_path):
    """The files' bytes are hashed, not their size and time: an edit that keeps both (`cp -p`, a wheel's
    fixed timestamps, two edits within the clock's tick) still makes every table stale."""
    copies = []
    for path in cache._rules_files():
        copy = tmp_path / f"{len(copies):02d}-{path.name}"
        copy.write_bytes(path.read_bytes())
        copies.append(copy)
    before = cache._digest("1.0", copies)
    assert cache._digest("1.0", copies) == before and cache._digest("1.1", copies) != before
    rule = next(c for c in copies if c.name.endswith("-joker.py"))
    kept = rule.stat()
    text = rule.read_bytes()
    rule.write_bytes(text.replace(b"joker", b"JOKER", 1))  # the same length
    os.utime(rule, ns=(kept.st_atime_ns, kept.st_mtime_ns))
    assert rule.stat().st_size == kept.st_size and rule.stat().st_mtime_ns == kept.st_mtime_ns
    assert cache._digest("1.0", copies) != before


def test_a_changed_rule_source_gives_the_variant_another_table():
    """Through the whole key: the same variant, a rule plugin's source changed, another cache file."""
    v = Engine(entry_points=False).variant("yahtzee")
    before = cache.cache_path(v)
    real = Path.read_bytes

    def edited(path: Path) -> bytes:
        data = real(path)
        return data + b"\n# edited\n" if path.name == "joker.py" else data

    cache._rules_digest.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(Path, "read_bytes", edited)
            assert cache.cache_path(v) != before
    finally:
        cache._rules_digest.cache_clear()
    assert cache.cache_path(v) == before


# ---------------------------------------------------------------------- mapped files: aligned, vouched for


def _kept_arrays(engine):
    """The signed arrays file of a kind of our own for yacht, written as the cache writes them."""
    v = engine.variant("yacht")
    arrays = {"big": np.arange(5000, dtype=np.float32), "odd": np.arange(7, dtype=np.int64)}
    cache.save_arrays(v, "test-kind", {"n": 1}, arrays)
    return v, arrays, cache.arrays_path(v, "test-kind")


def test_a_mapped_file_s_arrays_are_views_of_the_map_not_copies(engine):
    v, arrays, _ = _kept_arrays(engine)
    meta, got = cache.load_arrays(v, "test-kind", mapped=True)
    assert meta == {"n": 1}
    for name, a in arrays.items():
        assert np.array_equal(got[name], a)
        assert not got[name].flags.owndata and not got[name].flags.writeable  # the file's bytes in place


def test_a_kept_file_reads_back_with_numpy_load(engine):
    _, arrays, path = _kept_arrays(engine)
    with np.load(path, allow_pickle=False) as data:
        assert np.array_equal(data["a_big"], arrays["big"])


def _count_macs(monkeypatch) -> list[int]:
    from dicecup.solver import signed

    calls: list[int] = []
    real = signed.mac
    monkeypatch.setattr(signed, "mac", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(signed, "VOUCH_AGE_NS", -1)  # vouch at once (the file is seconds old)
    return calls


def test_a_mapped_file_checked_once_is_not_hashed_again_while_unchanged(engine, monkeypatch):
    v, arrays, _ = _kept_arrays(engine)
    calls = _count_macs(monkeypatch)
    assert cache.load_arrays(v, "test-kind", mapped=True) is not None
    assert cache.load_arrays(v, "test-kind", mapped=True) is not None
    assert len(calls) == 1


def test_a_vouched_file_edited_in_place_is_hashed_again_and_refused(engine, monkeypatch):
    from _solver_helpers import flip_array_byte

    v, arrays, path = _kept_arrays(engine)
    calls = _count_macs(monkeypatch)
    assert cache.load_arrays(v, "test-kind", mapped=True) is not None
    ino = path.stat().st_ino
    flip_array_byte(path, "a_big")
    assert path.stat().st_ino == ino  # the same file, its bytes changed in place
    warned: list[str] = []
    assert cache.load_arrays(v, "test-kind", warned.append, mapped=True) is None
    assert len(calls) == 2 and any("damaged, stale or not ours" in w for w in warned)


def test_a_forged_vouch_line_vouches_for_nothing(engine, monkeypatch):
    from _solver_helpers import flip_array_byte

    from dicecup.solver import signed

    v, arrays, path = _kept_arrays(engine)
    calls = _count_macs(monkeypatch)
    flip_array_byte(path, "a_big")
    with np.load(path, allow_pickle=False) as data:
        sig = json.loads(bytes(data["header"]).decode())["hmac"]
    st = path.stat()
    record = signed.state_dir() / signed.VOUCHED_FILE
    stamp = f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {sig}"
    record.write_text(f"{stamp} {'f' * 64}\n")  # a line not signed with the user's key
    assert cache.load_arrays(v, "test-kind", mapped=True) is None
    assert len(calls) == 1
