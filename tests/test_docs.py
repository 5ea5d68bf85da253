"""The documentation is tested as a reader would use it: the site builds strictly, and every code
block of the README and the docs runs as written.

Each page runs in a folder of its own, its blocks in order (docs/development.md says how each
language runs, and what `<!-- norun: why -->`, `<!-- slow: why -->` and `<!-- input: ... -->`
before a block mean). Commands are typed as the pages write them, `.venv/bin/dicecup ...`, with
`.venv/bin/` meaning the folder of the Python running the tests.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

import dicecup
from dicecup import Engine, VariantError
from dicecup.language import hookspecs, keys

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
BIN = Path(sys.executable).parent
#: What an interactive game reads when a block gives no input: Enter (a hand-over pause, if any), quit, yes.
DEFAULT_INPUT = "\nq\ny\n"
LANGUAGES = {"sh", "python", "yaml", "toml", "json", "text"}
MAX_NORUN = 14
MAX_SLOW = 8


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    text: str
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def module(self) -> str | None:
        """The file a block defines, from its first line `# NAME.py: ...` or `# NAME.yaml: ...`."""
        m = re.match(r"# ([\w.-]+\.(?:py|yaml)):", self.text)
        return m.group(1) if m else None


_FENCE = re.compile(r"^( *)```(\S*)\s*$")
_MARK = re.compile(r"^\s*<!-- (norun|slow|input): (.*?) -->\s*$")


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a page, dedented, with the marks on the lines just before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2), i
        body = []
        i += 1
        while i < len(lines) and lines[i].rstrip() != f"{indent}```":
            body.append(lines[i][len(indent) :])
            i += 1
        marks: dict[str, str] = {}
        j = start - 1
        while j >= 0 and (mark := _MARK.match(lines[j])):
            marks[mark.group(1)] = mark.group(2)
            j -= 1
        out.append(Block(page, start + 1, lang, "\n".join(body) + "\n", marks))
        i += 1
    return out


ALL_BLOCKS = [b for page in PAGES for b in blocks(page)]


def commands(block: Block) -> list[str]:
    """The commands of an sh block: continuation lines joined, comment lines dropped."""
    joined = block.text.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def as_written(command: str) -> str:
    """The command with `.venv/bin/` meaning this test run's environment."""
    return re.sub(r"(?<![\w/.])\.venv/bin/", f"{BIN}/", command)


def environment(folder: Path) -> dict[str, str]:
    env = {**os.environ, "DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "NO_COLOR": "1", "PYTHONPATH": str(folder)}
    env.pop("PYTHONHASHSEED", None)
    return env


def run(args: list[str] | str, folder: Path, stdin: str = "", timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        args,
        input=stdin,
        capture_output=True,
        text=True,
        cwd=folder,
        env=environment(folder),
        timeout=timeout,
        shell=isinstance(args, str),
        executable="/bin/bash" if isinstance(args, str) else None,
    )


def _report(block: Block, what: str, proc: subprocess.CompletedProcess) -> str:
    return f"{block.where}: {what} exited {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"


class PageRun:
    """Runs a page's blocks in order, in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.plugins: list[str] = []

    def sh(self, block: Block) -> None:
        stdin = block.marks.get("input", "").encode().decode("unicode_escape") or DEFAULT_INPUT
        for command in commands(block):
            proc = run(as_written(command), self.folder, stdin)
            assert proc.returncode == 0, _report(block, command, proc)

    def python(self, block: Block) -> None:
        if block.module:
            (self.folder / block.module).write_text(block.text, encoding="utf-8")
            self.plugins.append(block.module)
            return
        script = self.folder / f"block_{block.line}.py"
        script.write_text(block.text, encoding="utf-8")
        proc = run([sys.executable, str(script)], self.folder, timeout=900)
        assert proc.returncode == 0, _report(block, "the block", proc)
        said = re.findall(r"^\s*print\(.*\)  # -> (.*)$", block.text, flags=re.M)
        printed = iter(proc.stdout.splitlines())
        for want in said:  # each `# -> X` in order, as a line the block printed
            assert any(line == want for line in printed), f"{block.where}: no line {want!r} in\n{proc.stdout}"

    def yaml(self, block: Block) -> None:
        assert block.module and block.module.endswith(".yaml"), f"{block.where}: a variant starts `# NAME.yaml: ...`"
        (self.folder / block.module).write_text(block.text, encoding="utf-8")
        with_plugins = [arg for p in self.plugins for arg in ("--plugin", p)]
        proc = run([f"{BIN}/dicecup", *with_plugins, "validate", block.module], self.folder)
        assert proc.returncode == 0 and proc.stdout.startswith(f"ok: {block.module}"), _report(block, "validate", proc)
        game = ["play", "-v", block.module, "-p", "bot:greedy", "-p", "bot:random", "--seed", "1", "--json", "-q"]
        proc = run([f"{BIN}/dicecup", *with_plugins, *game], self.folder)
        assert proc.returncode == 0, _report(block, "a game between two bots", proc)
        for card in json.loads(proc.stdout)["final_cards"].values():
            assert None not in card["boxes"].values(), block.where
            assert sum(card["boxes"].values()) + sum(card["bonuses"].values()) == card["total"], block.where

    def run_block(self, block: Block) -> None:
        if block.lang == "sh":
            self.sh(block)
        elif block.lang == "python":
            self.python(block)
        elif block.lang == "yaml":
            self.yaml(block)
        elif block.lang == "toml":
            tomllib.loads(block.text)
        elif block.lang == "json":
            json.loads(block.text)


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=_page_id)
def test_every_code_block_of_the_page_runs(page, tmp_path):
    runner = PageRun(tmp_path)
    for block in blocks(page):
        if "norun" in block.marks or "slow" in block.marks:
            continue
        runner.run_block(block)


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if any("slow" in b.marks for b in blocks(p))], ids=_page_id)
def test_the_slow_code_blocks_of_the_page_run(page, tmp_path):
    """The blocks marked slow, after the files the page defines (its variants and modules)."""
    runner = PageRun(tmp_path)
    for block in blocks(page):
        if "norun" not in block.marks and (block.module or "slow" in block.marks):
            runner.run_block(block)


def test_every_block_names_a_known_language():
    bad = [f"{b.where}: {b.lang or 'no language'}" for b in ALL_BLOCKS if b.lang not in LANGUAGES]
    assert not bad, "code blocks must be one of " + ", ".join(sorted(LANGUAGES)) + ":\n" + "\n".join(bad)


def test_blocks_that_do_not_run_are_few_and_say_why():
    norun = [b for b in ALL_BLOCKS if "norun" in b.marks]
    slow = [b for b in ALL_BLOCKS if "slow" in b.marks]
    assert len(norun) <= MAX_NORUN, [b.where for b in norun]
    assert len(slow) <= MAX_SLOW, [b.where for b in slow]
    for b in norun + slow:
        reason = b.marks.get("norun") or b.marks.get("slow") or ""
        assert len(reason.split()) >= 3, f"{b.where}: say why the block does not run ({reason!r})"
    for b in norun:  # only what cannot run in a test: set-ups, installs, servers
        assert b.lang == "sh", f"{b.where}: only shell blocks may be left unrun"
        assert re.search(r"pip install|python3 -m venv|mkdocs serve|dicecup serve|dask (scheduler|worker)", b.text), (
            f"{b.where}: a block left unrun must install, set up or serve something"
        )


def test_commands_are_written_as_they_run_after_the_set_up():
    """After the README's first command nothing is on PATH: every command names `.venv/bin/`, or is the
    set-up itself."""
    for b in ALL_BLOCKS:
        if b.lang != "sh":
            continue
        for command in commands(b):
            command = re.sub(r"\s+#.*$", "", command)
            assert re.match(r"(\.venv/bin/|python3 -m venv \.venv && \.venv/bin/)", command), (
                f"{b.where}: {command!r} does not run as written after the set-up (write .venv/bin/...)"
            )


def _install_lines() -> list[tuple[str, str]]:
    texts = [ROOT / "README.md", ROOT / "CHANGELOG.md", *DOCS.rglob("*.md")]
    return [
        (f"{path.relative_to(ROOT)}:{n}", line)
        for path in texts
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "pip install" in line
    ]


def test_every_install_line_works_from_a_checkout():
    """dicecup is not on PyPI: an extra is installed from the checkout, and only extras that exist."""
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    seen = set()
    for path in [ROOT / "README.md", ROOT / "CHANGELOG.md", *DOCS.rglob("*.md")]:
        assert "dicecup[" not in path.read_text(encoding="utf-8"), f"{path.name}: an extra is installed as '.[extra]'"
    for where, line in _install_lines():
        assert not re.search(r"pip install\s+['\"]?dicecup\b", line), f"{where}: dicecup is not on PyPI: {line}"
        for names in re.findall(r"\.\[([^\]]*)\]", line):
            for extra in names.split(","):
                assert extra.strip() in extras, f"{where}: no extra {extra!r} in pyproject.toml: {line}"
                seen.add(extra.strip())
        for command in re.findall(r"([\w./]*pip install [^`;&|]*)", line):
            assert command.startswith(".venv/bin/pip install"), f"{where}: write {command!r} as .venv/bin/pip ..."
    assert {"test", "rl", "cluster", "web", "plot", "docs"} <= seen, "every extra's install line is shown somewhere"


# --------------------------------------------------------------------------- the site


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built strictly: any warning (a broken link, a missing page or reference) fails it."""
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    return out


def test_the_site_builds_strictly_with_every_page(site):
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(nav):
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            yield from pages(value) if isinstance(value, list) else [value]

    listed = set(pages(config["nav"]))
    wanted = {"index.md", "getting-started.md", "command-line.md", "games/index.md", "variants.md", "language.md"}
    wanted |= {"plugins.md", "hooks.md", "embedding.md", "api.md", "solving.md", "learning.md", "cluster.md"}
    wanted |= {"scaling.md", "performance.md", "changelog.md"}
    wanted |= {f"games/{vid}.md" for vid in Engine(entry_points=False).variant_ids()}
    assert wanted <= listed, sorted(wanted - listed)
    for page in listed:
        assert (site / page.replace(".md", ".html")).is_file(), page


def test_the_site_fetches_nothing_from_the_internet(site):
    """No CDN fonts, scripts, styles or images: the pages work, and search works, offline. (Material's
    script bundle can load two polyfills from a CDN, only for an old browser or a page with mermaid
    diagrams, which these pages have none of.)"""
    external = re.compile(r"<(script|img|iframe)\b[^>]*\bsrc=\"https?://|<link\b[^>]*\bhref=\"https?://")
    for page in site.rglob("*.html"):
        found = external.search(page.read_text(encoding="utf-8"))
        assert found is None, f"{page.relative_to(site)} loads {found.group(0)}"
    for sheet in site.rglob("*.css"):
        assert not re.search(r"url\([\"']?https?://|@import", sheet.read_text(encoding="utf-8")), sheet.name
    assert "mermaid" not in "".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert any("multiply" in doc["text"] for doc in index["docs"]), "the search index holds the pages"


def _text(html: Path) -> str:
    return re.sub(r"<[^>]+>", " ", html.read_text(encoding="utf-8"))


def test_the_language_reference_is_the_compilers(site):
    """Every key the compiler takes, every pattern, scorer and rule the engine registers, is on the page."""
    page = _text(site / "language.html")
    engine = Engine(entry_points=False)
    for section in keys.SECTIONS:
        for key in section:
            assert re.search(rf"\b{re.escape(key.name)}\b", page), (section.name, key.name)
    for name in [*engine.patterns, *engine.scorers, *engine.rules]:
        assert re.search(rf"\b{re.escape(name)}\b", page), name
    assert "<!-- generated" not in (site / "language.html").read_text(encoding="utf-8")


def test_every_hook_is_on_the_hooks_page(site):
    page = _text(site / "hooks.html")
    for name in vars(hookspecs):
        if name.startswith("dicecup_"):
            assert name in page, name


def test_the_api_reference_covers_every_public_name(site):
    """Each name a public module exports has its entry: one mkdocstrings wrote (an anchor ending in the
    name), or a heading naming it."""
    page = (site / "api.html").read_text(encoding="utf-8")
    headings = " ".join(re.findall(r"<h\d[^>]*>(.*?)</h\d>", page, flags=re.S))
    modules = {"dicecup": dicecup}
    for name in ("solver", "simulate", "rankings", "testing", "rl", "cluster"):
        modules[f"dicecup.{name}"] = __import__(f"dicecup.{name}", fromlist=["__all__"])
    for module_name, module in modules.items():
        for name in module.__all__:
            anchor = re.search(rf'id="[\w.]*\.{re.escape(name)}"', page)
            assert anchor or f"{module_name}.{name}" in headings, f"{module_name}.{name} has no entry"


def test_declared_defaults_are_what_the_compiler_gives(tmp_path):
    """The reference's defaults are read by the compiler, not written beside it: a variant that leaves every
    optional key out compiles to them."""
    path = tmp_path / "bare.yaml"
    path.write_text("id: bare\ndice: {count: 2}\nboxes:\n  any: {pattern: always, score: total}\n")
    v = Engine(entry_points=False).load_file(path)
    box = v.box("any")
    assert (v.faces, v.rolls, v.carry_over) == (
        keys.DICE["faces"].default,
        keys.TURN["rolls"].default,
        keys.TURN["carry_over"].default,
    )
    assert (box.section, box.stage, box.extra, box.help, box.scorer.multiply) == (
        keys.BOX["section"].default,
        keys.BOX["stage"].default,
        keys.BOX["extra"].default,
        keys.BOX["help"].default,
        keys.SCORER["multiply"].default,
    )
    assert (v.match.rounds_for(2), v.match.replay_ties) == (
        keys.MATCH["rounds"].default,
        keys.MATCH["replay_ties"].default,
    )


@pytest.mark.parametrize("section", [s for s in keys.SECTIONS if s.keys], ids=lambda s: s.name)
def test_an_unknown_key_is_refused_with_the_declared_ones(tmp_path, section):
    """Each section refuses a key it does not declare, and its hint lists exactly the declared ones."""
    docs = {
        "variant": "id: v\ndice: {count: 2}\nboxes: {a: {pattern: always, score: total}}\nzzz: 1\n",
        "dice": "id: v\ndice: {count: 2, zzz: 1}\nboxes: {a: {pattern: always, score: total}}\n",
        "turn": "id: v\ndice: {count: 2}\nturn: {zzz: 1}\nboxes: {a: {pattern: always, score: total}}\n",
        "column": "id: v\ndice: {count: 2}\ncolumns: {c: {zzz: 1}, d: {}}\nboxes: {a: {pattern: always, score: total}}\n",
        "box": "id: v\ndice: {count: 2}\nboxes: {a: {pattern: always, score: total, zzz: 1}}\n",
        "first_roll": "id: v\ndice: {count: 2}\nboxes: {a: {pattern: always, score: total, first_roll: {zzz: 1}}}\n",
        "pattern": "id: v\ndice: {count: 2}\nboxes: {a: {pattern: {kind: always, zzz: 1}, score: total}}\n",
        "scorer": "id: v\ndice: {count: 2}\nboxes: {a: {pattern: always, score: {kind: total, zzz: 1}}}\n",
        "bonus": "id: v\ndice: {count: 2}\nboxes: {a: {pattern: always, score: total}}\n"
        "bonuses: {b: {kind: nonzero, boxes: [a], points: 1, zzz: 1}}\n",
        "match": "id: v\ndice: {count: 2}\nboxes: {a: {pattern: always, score: total}}\nmatch: {zzz: 1}\n",
        "option": "id: v\ndice: {count: 2}\nboxes: {a: {pattern: always, score: total}}\n"
        "options: {o: {default: 1, choices: [1], zzz: 1}}\n",
        "figure": "id: v\ndice: {count: 2}\nboxes: {a: {pattern: always, score: total}}\nfigures: {f: {zzz: 1}}\n",
        "translation": "id: v\ndice: {count: 2}\nboxes: {a: {pattern: always, score: total}}\n"
        "translations: {fr: {zzz: 1}}\n",
    }
    path = tmp_path / "v.yaml"
    path.write_text(docs[section.name])
    with pytest.raises(VariantError) as err:
        Engine(entry_points=False).load_file(path)
    assert err.value.path[-1] == "zzz", err.value
    if section.name not in ("pattern", "scorer", "bonus"):  # their other keys are the kind's own parameters
        assert err.value.hint == f"allowed keys: {', '.join(section.names)}"
