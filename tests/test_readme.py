"""README.md is tested as a new user meets it: its first two commands are the ones that set up a fresh
machine (to play, and to run the tests) and CI runs exactly the second; it stays short, and its links
lead somewhere. Its other code blocks run in tests/test_docs.py, as every page's do."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    """The fenced code blocks of one language, in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```$", README, flags=re.S | re.M)


def test_first_lines_are_the_two_fresh_machine_commands():
    head = README.split("## ", 1)[0]
    play, test = blocks("sh")[:2]
    assert play in head and test in head
    assert play.strip() == (
        "python3 -m venv .venv && .venv/bin/pip install -e . && "
        ".venv/bin/dicecup play --variant yahtzee --player you --player bot:greedy"
    )
    assert "pip install -e '.[test]'" in test and "-m pytest" in test


def test_ci_runs_exactly_the_readme_test_command():
    test = blocks("sh")[1].strip()
    script = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in script
    commands = [line for line in script.splitlines() if line.strip() and not line.startswith("#")]
    assert commands[-1] == test


def test_the_readme_fits_a_screen_or_two():
    assert len(README.splitlines()) <= 120


def test_the_readme_says_how_commands_run_after_the_set_up():
    head = README.split("## ", 1)[0]
    assert "`.venv/bin/dicecup ...`" in head and ". .venv/bin/activate" in head


def test_every_relative_link_leads_to_a_file():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert local, "the README links into the docs"
    for link in local:
        assert (ROOT / link).exists(), link
    for page in ("getting-started", "command-line", "variants", "language", "plugins", "embedding", "solving"):
        assert f"docs/{page}.md" in local, page
