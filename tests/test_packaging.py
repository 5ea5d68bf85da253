"""Both a plain wheel install and an editable install import `dicecup`, find the bundled
variant files and run the `dicecup` console script, in fresh virtual environments.

Offline by design: the venvs are made without pip and see the running environment's
third-party packages (pip, setuptools, attrs, ...) through a folder of links that
leaves out every dicecup installation, so the dicecup they import is the one just
installed. The repository is found from this file (CI runs from a fresh clone
elsewhere) and copied first, so building never writes into the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILTIN = {
    "yahtzee",
    "yatzy",
    "yacht",
    "generala",
    "russian",
    "kniffel",
    "russian-simple",
    "maxi-yatzy",
    "triple-yahtzee",
    "yamb",
    "kismet",
    "balut",
    "yatzy-forced",
}
IGNORE = shutil.ignore_patterns(
    ".git", "build", "dist", "*.egg-info", "__pycache__", ".venv", "venv", ".pytest_cache", ".hypothesis", "_kernels*"
)
BIN = "Scripts" if os.name == "nt" else "bin"

PROBE = """\
import json, dicecup
from dicecup import Engine
engine = Engine(entry_points=False)
from importlib.metadata import version
print(json.dumps({"file": dicecup.__file__, "ids": engine.variant_ids(),
                  "yahtzee_boxes": len(engine.variant("yahtzee").boxes),
                  "version": dicecup.__version__, "dist_version": version("dicecup")}))
"""


def run(*args, cwd: Path, env: dict | None = None) -> str:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def is_dicecup(name: str) -> bool:
    return "dicecup" in name.lower()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A copy of the repository, and a folder linking to the running environment's packages."""
    root = tmp_path_factory.mktemp("packaging")
    shutil.copytree(REPO, root / "src", ignore=IGNORE)
    deps = root / "deps"
    deps.mkdir()
    folders = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    for folder in map(Path, folders):
        if not folder.is_dir():
            continue
        for entry in folder.iterdir():
            if is_dicecup(entry.name) or entry.suffix == ".pth" or (deps / entry.name).exists():
                continue
            (deps / entry.name).symlink_to(entry)
    return root


def fresh_venv(root: Path, name: str) -> tuple[Path, dict]:
    """A venv without pip whose interpreter also sees the linked third-party packages."""
    venv = root / name
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=root)
    python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
    purelib = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=root).strip())
    (purelib / "_dicecup_test_deps.pth").write_text(str(root / "deps") + "\n")
    env = {**os.environ, "DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONNOUSERSITE": "1"}
    env.pop("PYTHONPATH", None)
    return python, env


def probe(python: Path, root: Path, env: dict) -> dict:
    return json.loads(run(python, "-c", PROBE, cwd=root, env=env))


def test_wheel_install(workdir):
    dist = workdir / "dist"
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        dist,
        workdir / "src",
        cwd=workdir,
    )
    (wheel,) = dist.glob("dicecup-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {f"dicecup/variants/{v}.yaml" for v in BUILTIN} <= set(names)
    assert "dicecup/plugins/joker.py" in names and "dicecup/testing.py" in names
    built = {n for n in names if n.startswith("dicecup/numeric/_kernels")}
    if shutil.which("cc"):  # the kernels built ahead of time travel in the wheel, with the CPU they need
        assert "dicecup/numeric/_kernels_cpu.py" in built and any(n.endswith((".so", ".pyd")) for n in built)
    assert not [n for n in names if n.startswith(("core/", "plugins/", "variants/", "tests/"))]

    python, env = fresh_venv(workdir, "wheel-venv")
    run(python, "-m", "pip", "install", "--no-deps", "--no-index", wheel, cwd=workdir, env=env)
    found = probe(python, workdir, env)
    assert Path(found["file"]).is_relative_to(workdir / "wheel-venv")
    if built:
        mode = run(python, "-c", "from dicecup.numeric import compiled; print(compiled.MODE)", cwd=workdir, env=env)
        assert mode.strip() == "aot"
    assert set(found["ids"]) == BUILTIN and found["yahtzee_boxes"] == 13
    assert found["dist_version"] == found["version"]  # one version, read from dicecup.__version__
    assert wheel.name.startswith(f"dicecup-{found['version']}-")
    out = run(python.parent / "dicecup", "variants", cwd=workdir, env=env)
    assert all(v in out for v in BUILTIN)


def test_editable_install(workdir):
    src = workdir / "src"
    python, env = fresh_venv(workdir, "editable-venv")
    env = {**env, "DICECUP_BUILD_KERNELS": "0"}  # the wheel test builds them; this one is about the layout
    run(
        python,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-e",
        src,
        cwd=workdir,
        env=env,
    )
    found = probe(python, workdir, env)
    assert Path(found["file"]) == src / "core" / "__init__.py"
    assert set(found["ids"]) == BUILTIN
    # editable means live: a variant file added to the folder is found without reinstalling
    (src / "variants" / "zz-probe.yaml").write_text(
        "id: zz-probe\ndice: {count: 1}\nboxes: {a: {pattern: always, score: total}}\n"
    )
    try:
        assert "zz-probe" in probe(python, workdir, env)["ids"]
    finally:
        (src / "variants" / "zz-probe.yaml").unlink()
    out = run(python.parent / "dicecup", "variants", cwd=workdir, env=env)
    assert all(v in out for v in BUILTIN)


LOADED = """\
import sys, dicecup
assert dicecup.__version__
before = sorted(m for m in sys.modules if m.startswith("dicecup."))
engine = dicecup.Engine(entry_points=False)  # resolved on first use
try:
    dicecup.NoSuchThing
except AttributeError as exc:
    missing = str(exc)
everything = all(getattr(dicecup, name) is not None for name in dicecup.__all__)
print(before, missing, everything, sep="|")
"""


def test_import_dicecup_loads_no_layer_until_a_name_is_used(tmp_path):
    """Embedders pay only for what they use: `import dicecup` loads no layer; each public name loads its
    module on first use, an unknown one is an AttributeError, and every name in `__all__` resolves."""
    before, missing, everything = run(sys.executable, "-c", LOADED, cwd=tmp_path).strip().split("|")
    assert before == "[]"
    assert missing == "module 'dicecup' has no attribute 'NoSuchThing'"
    assert everything == "True"


ADVISE = """\
import sys
from dicecup.cli import main
try:
    main(["advise", "-v", "yacht", "-d", "11256", "-q", "--json", "-r", "1", "-c", "ones=3"])
except SystemExit as exc:
    assert not exc.code, exc.code
print("|", sorted(m for m in HEAVY if m in sys.modules))
"""
#: what `dicecup advise` from a cached table has no use for: the compiler, the simulator, the terminal game,
#: the other command groups, rich (no table printed with --json or progress bar with -q), pydantic (typer's coercion)
HEAVY = (
    "numba",
    "dicecup.simulate",
    "dicecup.solver.jit",
    "dicecup.terminal",
    "dicecup.cli.catalogue",
    "dicecup.cli.playing",
    "dicecup.cli.simulating",
    "rich",
    "pydantic",
    "numpy.ma",  # np.unique imports it (15 ms): the advisor does without
    "dicecup.game.bots",  # advise makes no bot (the bot plugin imports a bot's code when one is asked for)
    "importlib.metadata",  # the installed plugins are read from their entry_points.txt (`language.entry_points`)
    "dicecup.cluster",  # the cluster extra: only with --cluster
    "dicecup.game.state",  # advising a card needs no game state (nor its save format): 5 to 7 ms
    "importlib.resources",  # the bundled variants are read from their folder (`plugins.builtin_variants`): 7 ms
    "distributed",
    "dask",
    "zarr",
)


def test_advise_from_a_cached_table_imports_no_compiler(tmp_path):
    """`dicecup advise --json -q` with the table cached imports none of `HEAVY` (its start-up time)."""
    env = {**os.environ, "DICECUP_CACHE_DIR": str(tmp_path)}
    run(sys.executable, "-m", "dicecup", "solve", "-v", "yacht", "-q", cwd=tmp_path, env=env)
    out = run(sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{ADVISE}", cwd=tmp_path, env=env)
    assert json.loads(out.split("|")[0])["best"]["action"] == "keep"
    assert out.rsplit("|", 1)[1].strip() == "[]"


BOTS = """\
import sys
from dicecup import Engine
engine = Engine(entry_points=False)
before = sorted(m for m in sys.modules if m.startswith("dicecup.game"))
bots = engine.bot_names()
made = [type(engine.make_bot(name)).__name__ for name in ("random", "greedy")]
engine.check_bot("greedy", engine.variant("yacht"))
print(before, bots, made, sep="|")
"""


def test_an_engine_lists_its_bots_without_importing_the_game(tmp_path):
    """Every engine loads the bot plugin, which imports the game layer only when a bot is made or checked:
    the bots are all listed, and made and checked as before."""
    before, bots, made = run(sys.executable, "-c", BOTS, cwd=tmp_path).strip().split("|")
    assert before == "[]"
    assert {"random", "greedy", "optimal", "strong", "risk", "target", "win"} <= set(eval(bots))
    assert eval(made) == ["RandomBot", "GreedyBot"]


FROZEN = """\
import gc
from dicecup.cli import main
for extra in (["--json"], []):  # then the table, with rich
    try:
        main(["advise", "-v", "yacht", "-d", "11256", "-q", "-r", "1", *extra])
    except SystemExit as exc:
        assert not exc.code, exc.code
import numpy, rich.table, dicecup.language.engine, dicecup.rankings, dicecup.solver.advice_tables
made = {
    "the command line": dicecup.language.engine.Engine.variant,
    "numpy": numpy.unique,
    "the solver": dicecup.solver.advice_tables.recall_tables,
    "the rankings": dicecup.rankings.side_by_side,
    "rich": rich.table.Table.add_row,
}
tracked = {id(o) for o in gc.get_objects()}  # what collections still scan (frozen objects are not listed)
print("|", sorted(what for what, obj in made.items() if id(obj) in tracked))
"""


def test_advise_imports_with_the_collector_paused_and_freezes_what_they_made(tmp_path):
    """The modules `advise` imports, the command line's and those it imports once its arguments parsed
    (numpy, the solver, the rankings, rich for a table), are frozen: no collection made while importing
    them, or after, scans their objects again."""
    env = {**os.environ, "DICECUP_CACHE_DIR": str(tmp_path)}
    run(sys.executable, "-m", "dicecup", "solve", "-v", "yacht", "-q", cwd=tmp_path, env=env)
    out = run(sys.executable, "-c", FROZEN, cwd=tmp_path, env=env)
    assert json.loads(out.splitlines()[0])["best"]["action"] == "keep" and "keep 5" in out
    assert out.rsplit("|", 1)[1].strip() == "[]"


ADVISE_JSON = """\
import sys
from dicecup.cli import main
try:
    main(["advise", "-v", "yacht", "-d", "11256", "--json", "-r", "1"])
except SystemExit as exc:
    assert not exc.code, exc.code
print("|", sorted(m for m in sys.modules if m == "rich" or m.startswith("rich.")))
"""


def test_advise_json_from_a_cached_table_imports_no_rich(tmp_path):
    """Without -q, `dicecup advise --json` with the table cached imports no rich either: the progress bar is
    made only when a solve starts, and JSON prints no table."""
    env = {**os.environ, "DICECUP_CACHE_DIR": str(tmp_path)}
    run(sys.executable, "-m", "dicecup", "solve", "-v", "yacht", "-q", cwd=tmp_path, env=env)
    out = run(sys.executable, "-c", ADVISE_JSON, cwd=tmp_path, env=env)
    assert json.loads(out.split("|")[0])["best"]["action"] == "keep"
    assert out.rsplit("|", 1)[1].strip() == "[]"


SOLVE = """\
import sys
from dicecup.cli import main
for args in (["solve", "-v", "yacht", "-q", "--no-cache"], ["simulate", "-v", "yacht", "-n", "100", "-q", "--json"]):
    try:
        main(args)
    except SystemExit as exc:
        assert not exc.code, exc.code
print("|", sorted(m for m in ("dicecup.cluster", "distributed", "dask", "zarr") if m in sys.modules))
"""


def test_solve_and_simulate_without_cluster_import_no_cluster_package(tmp_path):
    """Without --cluster nothing changes: neither the cluster package nor Dask or Zarr is imported."""
    env = {**os.environ, "DICECUP_CACHE_DIR": str(tmp_path)}
    out = run(sys.executable, "-c", SOLVE, cwd=tmp_path, env=env)
    assert out.rsplit("|", 1)[1].strip() == "[]"
