"""Every screen of the terminal game fits 80 x 24: whole games of every built-in variant played through
`Session` by two humans (answering what the prompt suggests) and bots, with `c`, help, hints, the coach,
undo and mistakes; the end of a game on one screen; the hand-over pause between two humans; box names in
what the players read; and the real `dicecup play` under a pseudo-terminal of 80 x 24."""

from __future__ import annotations

import io
import os
import random
import re
import select
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import pytest
from _variants import BUILTIN_VARIANTS, FAMILY_VARIANTS
from rich.cells import cell_len
from rich.console import Console

from dicecup import GameState, Keep, Score
from dicecup.terminal.commands import ShowCard, parse_command
from dicecup.terminal.screens import Ranking
from dicecup.terminal.session import QuitGame, Session, parse_seats
from dicecup.terminal.view import View

VARIANTS = BUILTIN_VARIANTS + FAMILY_VARIANTS
WIDTH, HEIGHT = 80, 24
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
SCORE = re.compile(r"(?:\(|, )(s \d+(?: [\w-]+)?)(?:\)| score)")


def suggested(prompt: str) -> str:
    """What the prompt itself suggests typing: its example of a legal move."""
    if "press Enter" in prompt:
        return ""
    if "[y/N" in prompt:
        return "y" if "Scratch" in prompt else "n"
    if "s scores " in prompt or "type s to score" in prompt:
        return "s"
    announce = re.search(r"e\.g\. (\w+ \w+) \(\? for help\)", prompt)
    if announce:
        return announce.group(1)
    found = SCORE.search(prompt)
    assert found, f"the prompt suggests no move: {prompt!r}"
    return found.group(1)


class Players:
    """The humans at the keyboard: each prompt written to the screen, then answered with the next extra
    command of the player asked (`c`, `?`, mistakes...) or what the prompt suggests."""

    def __init__(self, out: io.StringIO, extras: dict[str, list[str]] | None = None) -> None:
        self.out = out
        self.extras = {k: list(v) for k, v in (extras or {}).items()}
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.out.write(prompt + "\n")
        self.prompts.append(prompt)
        assert len(self.prompts) < 5000, "the game does not move on: " + prompt
        who = prompt.split(",")[0].split(":")[0].split("'")[0]
        todo = self.extras.get(who, [])
        if todo and " > " in prompt:
            return todo.pop(0)
        return suggested(prompt)


def screens(text: str, prompts: Sequence[str]) -> list[list[str]]:
    """Each screen a player sees: from the last heading (or the last prompt) to the next prompt, included
    (a prompt's line may go on with what was typed, echoed by a terminal)."""
    asked = {p.rstrip() for p in prompts}
    out: list[list[str]] = []
    current: list[str] = []
    for line in ANSI.sub("", text).split("\n"):
        if line.startswith("─"):  # a heading starts a screen: what scrolled by before it is history
            current = []
        current.append(line)
        if any(line.startswith(p) for p in asked):
            out.append(current)
            current = []
    return out


def check_fits(shown: list[list[str]], widths: bool = True) -> None:
    """No screen is taller than 24 lines, nor (with `widths`) wider than 80 columns."""
    for screen in shown:
        wide = [line for line in screen if cell_len(line) > WIDTH] if widths else []
        assert not wide, "wider than 80:\n" + "\n".join(wide)
        assert len(screen) <= HEIGHT, f"{len(screen)} lines:\n" + "\n".join(screen)


def play(
    engine,
    variant: str,
    players: Sequence[str],
    extras: dict[str, list[str]] | None = None,
    seed: int = 1,
    **kw,
) -> tuple[Session, Players, str]:
    """A whole game at an 80-column terminal: the session, the humans' prompts, everything shown."""
    out = io.StringIO()
    view = View(Console(file=out, width=WIDTH, height=HEIGHT, force_terminal=True, color_system=None))
    seats = parse_seats(list(players), engine.bot_usage(), engine.bot_spec)
    humans = Players(out, extras)
    state = GameState.new(engine.variant(variant), [s.name for s in seats])
    s = Session(state, seats, rng=random.Random(seed), view=view, ask=humans, make_bot=engine.make_bot, **kw)
    s.run()
    view.final(s.state)
    s.rematch()
    return s, humans, out.getvalue()


def box_ids_shown(engine, variant: str, text: str) -> list[str]:
    """Box ids that are not also how the card names the box (`full_house`, `down.full`), found in `text`."""
    v = engine.variant(variant)
    ids = [b for b in v.box_ids if "_" in b or "." in b]
    return [b for b in ids if re.search(rf"(?<![\w.]){re.escape(b)}(?![\w.])", text)]


MISTAKES = ["c", "c 2", "?", "? undo", "hint", "kep 1", "s fulhouse", "card nobody", "zz"]


# ---------------------------------------------------------------------------- whole games


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_whole_game_of_two_humans_and_two_bots_fits_80_by_24(engine, variant):
    """Every screen between two prompts fits, `c`, help and mistakes included; the game is driven by the
    prompts' own examples, which are always legal; messages name boxes, never by id."""
    players = ["ann", "bot:random", "bob", "bot:random"]  # (random: the quickest bot)
    extras = {"ann": MISTAKES, "bob": ["c ann", "c 4", "undo"]}
    s, humans, text = play(engine, variant, players, extras, seed=3)
    assert s.state.over
    check_fits(screens(text, humans.prompts))
    problems = [line for line in text.splitlines() if line.startswith("✗")]
    assert len(problems) == 6, problems  # kep, fulhouse, hint, nobody, zz, bob's undo: none from a suggestion
    assert not box_ids_shown(engine, variant, text.split("Game over")[0])


@pytest.mark.parametrize("variant", ["yahtzee", "triple-yahtzee", "yamb"])
def test_a_game_of_two_humans_and_a_bot_with_hand_over_fits(engine, variant):
    s, humans, text = play(engine, variant, ["ann", "bob", "bot:random"], seed=5, pauses=True)
    check_fits(screens(text, humans.prompts))
    pauses = [p for p in humans.prompts if "press Enter" in p]
    turns = len(s.state.variant.boxes)
    assert pauses.count("bob's turn: press Enter ") == turns  # before each of bob's turns
    assert pauses.count("ann's turn: press Enter ") == turns - 1  # and ann's, but her first


def test_hints_the_coach_and_a_table_of_four_objectives_fit(engine):
    """With hints by four objectives side by side the dice are drawn small, and the screen still fits."""

    def advise(st: GameState) -> list[tuple[object, float]]:
        moves = [Score(b) for b in st.legal_boxes()] + (
            [Keep(()), Keep(tuple(sorted(st.dice))[:2])] if st.may_reroll() else []
        )
        return [(m, float(st.score_preview(m.box).points if isinstance(m, Score) else 10)) for m in moves]

    def rank(st: GameState):
        """The first objective's order; each other one puts a move below the first four first."""
        ranked = sorted(advise(st), key=lambda av: -av[1])
        tops = [min(3 + j, len(ranked) - 1) for j in range(4)]
        return [(a, [(v, n + 1 if n != tops[j] or j == 0 else 1) for j in range(4)]) for n, (a, v) in enumerate(ranked)]

    ranking = Ranking(["mean", "risk -0.03", "target 250", "win"], ["points"] * 3 + ["probability"], rank)
    for kw in ({"hints": True}, {"hints": True, "ranking": ranking, "coach": True}):
        s, humans, text = play(
            engine, "yahtzee", ["ann", "bob", "bot:greedy", "bot:random"], {"ann": ["hint", "c"]}, advisor=advise, **kw
        )
        check_fits(screens(text, humans.prompts))
        assert "coach: " in text if "coach" in kw else "coach: " not in text
        assert "score Chance" in text and "score chance" not in text  # hints name boxes as the card does
        if "ranking" in kw:  # the table of moves by four objectives, under dice drawn small
            first = next(screen for screen in screens(text, humans.prompts) if "hint  " in "".join(screen))
            assert first[-9].startswith("hint                  mean          risk -0.03    target 250    win")
            assert first[-11].split() == ["#1", "#2", "#3", "#4", "#5"] and not any("╭" in line for line in first)


# ---------------------------------------------------------------------------- the whole card


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("players", [2, 3, 4])
def test_c_shows_every_players_card_on_one_screen(engine, variant, players):
    names = ["annabelle", "bob", "carla-the-bot", "dmitri"][:players]
    state = GameState.new(engine.variant(variant), names).roll(
        dice=[1, 2, 3, 3, 3, 5, 6][: engine.variant(variant).dice]
    )
    asks = ["c", *(f"c {k}" for k in range(1, players + 1)), "c dm" if players == 4 else "c bo", "q", "y"]
    out = io.StringIO()
    view = View(Console(file=out, width=WIDTH, height=HEIGHT, force_terminal=True, color_system=None))
    answers = iter(asks)

    def ask(prompt: str) -> str:
        out.write(prompt + "\n")
        prompts.append(prompt)
        return next(answers)

    prompts: list[str] = []
    s = Session(state, parse_seats(names, ()), rng=random.Random(1), view=view, ask=ask)
    with pytest.raises(QuitGame):
        s.step()
    shown = screens(out.getvalue(), prompts)
    check_fits(shown)
    cards = [screen for screen in shown if "card" in screen[0] or "Scorecards" in screen[0]]
    assert len(cards) == players + 2
    for k, name in enumerate(names):  # `c K`: that player's card, whose title names them
        assert cards[k + 1][0].strip("─ ").startswith(f"{name}'s card"), cards[k + 1][0]
    v = engine.variant(variant)
    for card in cards:  # every box on it, by number, and the TOTAL
        numbers = {m for line in card for m in re.findall(r"(?:^|│ )\s*(\d+) [A-Z]", line)}
        assert numbers == {str(i) for i in range(1, len(v.rows) + 1)}, card
        assert any("TOTAL" in line for line in card)


def test_c_with_a_player_reads_a_number_a_name_or_its_start(engine):
    state = GameState.new(engine.variant("yacht"), ["ann", "bob", "Bobby"]).roll(dice=[1, 2, 3, 4, 5])
    assert parse_command("c", state) == ShowCard(None)
    assert parse_command("c 3", state) == ShowCard(2)
    assert parse_command("card ANN", state) == ShowCard(0)
    assert parse_command("c bob", state) == ShowCard(1)  # a whole name before a start of one
    assert parse_command("c bobb", state) == ShowCard(2)
    for typed, said in (
        ("c 4", "there is no player 4: players are numbered 1 to 3 in turn order"),
        ("c b", "'b' could be bob, Bobby; type more of the name"),
        ("c abn", "no player 'abn'; did you mean ann? players: ann, bob, Bobby (or 1 to 3)"),
    ):
        with pytest.raises(Exception, match=re.escape(said)):
            parse_command(typed, state)


# ---------------------------------------------------------------------------- the end


def finish(state: GameState, seed: int = 2) -> GameState:
    """Play a state to its end, every player scoring the first box the rules allow (announcing it first
    where the rules want that)."""
    rng = random.Random(seed)
    while not state.over:
        if state.is_chance:
            state = state.roll(rng=rng)
        else:
            legal = state.legal_boxes()
            state = state.score(legal[0]) if legal else state.act(state.rule_actions()[0])
    return state


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_end_is_one_screen_with_every_card_a_c_away(engine, variant):
    names = ["annabelle", "bob", "carla", "dmitri"]
    final = finish(GameState.new(engine.variant(variant), names))
    out = io.StringIO()
    view = View(Console(file=out, width=WIDTH, height=HEIGHT, force_terminal=True, color_system=None))
    answers = iter(["c", "c 3", "c zed", "n"])
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        out.write(prompt + "\n")
        prompts.append(prompt)
        return next(answers)

    s = Session(final, parse_seats(names, ()), rng=random.Random(1), view=view, ask=ask)
    view.final(final)
    assert s.rematch() is False
    shown = screens(out.getvalue(), prompts)
    check_fits(shown)
    end = shown[0]
    games = len(final.results)
    assert end[0].strip("─ ") == ("Game over" if games == 1 else f"Match over after {games} games")
    assert end[-2].startswith(("Winner: ", "Tie at "))
    notes = 1 if games > 1 or final.settlement() is not None else 0  # what the columns mean
    assert len(end) == 1 + 1 + len(names) + notes + 1 + 1  # heading, head, a line a player, notes, winner, prompt
    assert sorted(line.split()[1] for line in end[2 : 2 + len(names)]) == sorted(names)
    assert len(shown) == 4 and "carla's card" in shown[2][0] and "no player 'zed'" in shown[3][-2]
    whose = "Scorecards" if len(final.variant.columns) == 1 else "annabelle's card"  # everyone's, else a human's
    assert shown[1][0].strip("─ ") == whose


def test_an_all_bot_game_ends_with_the_results_not_the_cards(cli_builtins):
    from typer.testing import CliRunner

    from dicecup.cli.app import app

    result = CliRunner().invoke(
        app, ["play", "-v", "yamb", "-p", "bot:random", "-p", "bot:random", "--seed", "2"], env={"COLUMNS": "80"}
    )
    assert result.exit_code == 0, result.output
    end = result.stdout.split("Game over")[1].splitlines()
    assert len(end) == 1 + 1 + 2 + 1  # the heading's end, the table's head, two players, the winner
    assert end[1].split() == ["#", "player", "down", "up", "free", "announce", "TOTAL"]


# ---------------------------------------------------------------------------- hand-over


def test_hand_over_only_between_two_humans(engine):
    """The pause comes before another human's dice are shown: not for one human among bots, nor unasked."""
    for players, paused, pauses in (
        (["ann", "bot:greedy", "bob"], True, {"bob's turn: press Enter ", "ann's turn: press Enter "}),
        (["ann", "bot:greedy", "bot:random"], True, set()),
        (["ann", "bob"], False, set()),
    ):
        s, humans, text = play(engine, "yacht", players, pauses=paused)
        assert {p for p in humans.prompts if "press Enter" in p} == pauses
        if pauses:  # the pause comes before the next human's heading, after the last human's move
            first = text.index("bob's turn: press Enter")
            assert text.index("bob: turn 1 of 12") > first > text.index("You score")
            assert "greedy: " in text[text.index("You score") : first]  # the bot's turn is shown before it


def test_a_matchs_next_game_waits_for_the_players(engine):
    """Between the games of a match, the results stay on screen until Enter (a terminal only)."""
    out = io.StringIO()
    view = View(Console(file=out, width=WIDTH, height=HEIGHT, force_terminal=True, color_system=None))
    seats = parse_seats(["ann", "bot:random", "bob"], engine.bot_usage())
    humans = Players(out)
    state = GameState.new(engine.variant("yacht"), [s.name for s in seats], rounds=2)
    s = Session(state, seats, rng=random.Random(2), view=view, ask=humans, make_bot=engine.make_bot, pauses=True)
    s.run()
    text = out.getvalue()
    waits = [p for p in humans.prompts if "press Enter" in p and "turn" not in p]
    assert waits == ["Game 2 of 2: press Enter to start it "]
    between = screens(text, humans.prompts)[[p.rstrip() for p in humans.prompts].index(waits[0].rstrip())]
    assert between[0].strip("─ ") == "Game 1 of 2 finished" and len(between) == 1 + 1 + 3 + 1
    after = humans.prompts[humans.prompts.index(waits[0]) + 1]
    assert after.startswith("ann, roll 1 of 3")  # no hand-over pause right after it


# ---------------------------------------------------------------------------- the real command, 80 x 24


PROMPT_ENDS = ("> ", "] ", "press Enter ")


def run_in_pty(args: list[str], answer: Callable[[str], str | None], timeout: float = 300) -> str:
    """Run `python -m dicecup ARGS` on a pseudo-terminal of 80 x 24, answering each prompt (a line it leaves
    open, waiting) until `answer` says None; everything it wrote, escape codes taken out."""
    import fcntl
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", HEIGHT, WIDTH, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")}
    env.update(TERM="xterm-256color", DICECUP_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.Popen([sys.executable, "-m", "dicecup", *args], stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    seen, answered = b"", 0
    deadline = time.monotonic() + timeout
    try:
        while True:
            assert time.monotonic() < deadline, "the game did not end in time:\n" + _plain(seen)[-3000:]
            if select.select([master], [], [], 0.05)[0]:  # more output: read it before looking for a prompt
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the game is over and the terminal closed
                    break
                if not chunk:
                    break
                seen += chunk
                continue
            if proc.poll() is not None:
                break
            text = _plain(seen)
            if len(text) > answered and text.endswith(PROMPT_ENDS):  # quiet, on an open prompt: it waits
                reply = answer(text.rsplit("\n", 1)[-1])
                if reply is None:
                    break
                os.write(master, reply.encode() + b"\r")
                answered = len(text)
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
    return _plain(seen)


def variant_boxes(variant: str) -> tuple[str, ...]:
    from dicecup.cli.app import get_engine

    return get_engine().variant(variant).box_ids


def _plain(raw: bytes) -> str:
    """The text as a terminal leaves it: colours and cursor moves off, and of a line drawn over after a
    carriage return (a transient progress bar, then what replaced it), what was drawn last."""
    lines = ANSI.sub("", raw.decode("utf-8", "replace")).split("\n")
    return "\n".join(next((part for part in reversed(line.split("\r")) if part), "") for line in lines)


@pytest.mark.parametrize(
    ("variant", "typo", "meant"),
    [
        ("yahtzee", "fulhouse", "Full house (s 9)"),
        pytest.param("triple-yahtzee", "fulhouse", "Full house (s 9)", marks=pytest.mark.slow),
        pytest.param("yamb", "fulll", "Full (s 11)", marks=pytest.mark.slow),
    ],
)
def test_the_real_game_at_an_80_by_24_terminal(variant, typo, meant):
    """`dicecup play` with two humans and a bot on a terminal of 80 x 24: the hand-over pauses, `c`, help,
    mistakes and undo; no line wider than 80 columns, and each screen between two prompts in 24 lines."""
    extras = {"ann": ["c", "c bob", "?", "kep 1", f"s {typo}"], "bob": ["c", "undo", "? undo"]}
    prompts: list[str] = []

    def answer(prompt: str) -> str | None:
        prompts.append(prompt)
        if prompt.startswith("Rematch"):
            return None if len(prompts) > 1 and prompts[-2].startswith("Rematch") else "c"
        who = prompt.split(",")[0].split(":")[0].split("'")[0]
        if extras.get(who) and " > " in prompt:
            return extras[who].pop(0)
        return suggested(prompt)

    text = run_in_pty(["play", "-v", variant, "-p", "ann", "-p", "bob", "-p", "bot:random", "--seed", "4"], answer)
    asked = {p.rstrip() for p in prompts}
    for line in text.split("\n"):  # a prompt's line goes on with the answer the terminal echoes: not ours
        shown = next((p for p in asked if line.startswith(p)), line)
        assert cell_len(shown) <= WIDTH, line
    check_fits(screens(text, prompts), widths=False)
    assert len(prompts) > 2 * len(variant_boxes(variant))  # the whole game was played
    assert "bob's turn: press Enter" in text and "ann's turn: press Enter" in text
    assert "Game over" in text and "Rematch" in text and "Traceback" not in text
    assert "did you mean 'keep 1'?" in text and f"did you mean {meant}?" in text
    assert ("Scorecards ·" in text or "ann's card ·" in text) and "bob's card ·" in text
    assert "Rematch with the same players and new dice? [y/N; c: the cards] c\n" in text


def test_no_hand_over_when_asked_or_when_input_is_piped(cli_builtins):
    """`--no-handover` at a terminal, and piped input always, play two humans without the pause."""
    prompts: list[str] = []

    def answer(prompt: str) -> str | None:
        prompts.append(prompt)
        return (
            "q" if len(prompts) == 5 else "y" if "Quit?" in prompt else None if len(prompts) > 6 else suggested(prompt)
        )

    text = run_in_pty(["play", "-v", "yacht", "-p", "ann", "-p", "bob", "--no-handover", "--seed", "1"], answer)
    assert "bob, roll 1 of 3" in text and "press Enter" not in text and "Game stopped" in text
    from typer.testing import CliRunner

    from dicecup.cli.app import app

    piped = CliRunner().invoke(
        app, ["play", "-v", "yacht", "-p", "ann", "-p", "bob", "--seed", "1"], input="s 1\ny\n" * 3
    )
    assert "bob, roll 1 of 3" in piped.stdout and "press Enter" not in piped.stdout


# ---------------------------------------------------------------------------- words


def test_a_filled_box_and_the_prompts_example_are_named_as_the_card_names_them(engine):
    v = engine.variant("yahtzee")
    state = GameState.new(v, ["ann"])
    for box in v.box_ids[:9]:  # Ones to Full house filled: the example is box 10, the first open one
        state = state.roll(dice=[2, 2, 3, 3, 3]).score(box)
    state = state.roll(dice=[2, 2, 3, 3, 3])
    out = io.StringIO()
    view = View(Console(file=out, width=WIDTH, color_system=None))
    humans = Players(out, {"ann": ["s full house", "s fulhouse", "s 10", "y"]})
    s = Session(state, parse_seats(["ann"], ()), rng=random.Random(1), view=view, ask=humans)
    s.step()
    text = " ".join(out.getvalue().split())
    assert "✗ Full house is already filled (with 25); pick an open box" in text
    assert "✗ no open box 'fulhouse': Full house is already filled" in text
    assert "s 10 score" in humans.prompts[0] and "full_house" not in text
    assert s.state.cards[0].scores["small_straight"] == 0


def test_a_mistyped_variant_id_is_answered_with_the_closest(cli_builtins):
    from typer.testing import CliRunner

    from dicecup.cli.app import app

    for typed, meant in (("yahtze", "yahtzee"), ("Yatzi", "yatzy"), ("tripple-yahtzee", "triple-yahtzee")):
        result = CliRunner().invoke(app, ["play", "-v", typed])
        assert result.exit_code == 2
        assert result.stderr.startswith(f"error: unknown variant '{typed}'; did you mean '{meant}'? known variants: ")
    far = CliRunner().invoke(app, ["show", "-v", "zzz"])
    assert far.exit_code == 2 and "did you mean" not in far.stderr and "known variants: yahtzee" in far.stderr
