"""A strategy card: an ordered list of plain rules a person can remember, over what a person can see.

A rule tests a few visible facts of a decision (rolls left, the dice's pattern, the face of the largest group,
which boxes are open or fit the dice, the upper boxes against par, how many boxes are open) and names one human
action ("keep the largest group of a kind", "score in Chance"), resolved against the dice on the table. The
first rule whose tests hold and whose action is legal decides; when none does, the default decides: keep the
largest group while rolls are left, else score the open box worth the most points. `strategy_card_learn`
distils a card from the solver's exact values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from attrs import frozen

from ..game.actions import Keep, Score
from ..language.dice import Roll
from ..language.model import Card, Variant
from ..locales import _, ngettext

__all__ = ["ANY", "SOME", "Feature", "HumanAction", "Rule", "StrategyCard", "View", "Vocabulary", "view_of"]

#: How many of a face make "par" in an upper box, per five dice (three of each face makes the classic bonus).
PAR_SHARE = 3 / 5
#: a rule's rolls test: any number of rolls left, or at least one
ANY, SOME = -2, -1
#: "at most N boxes open": the thresholds that say how late in the game it is
OPEN_AT_MOST = (1, 3, 6, 10)


class View(NamedTuple):
    """What a person sees at a decision: the dice, the rolls left, the card's open boxes and what each scores."""

    dice: tuple[int, ...]  # sorted
    counts: tuple[int, ...]  # counts[f] for f in 0..faces
    rolls_left: int
    may_reroll: bool
    points: dict[str, int]  # each box legal now -> what it scores now
    open: frozenset[str]
    upper_gap: int | None  # upper total minus par of the filled upper boxes (None: no such group)


@frozen
class Feature:
    """One visible fact: `kind` (pattern, run, face, group, open, filled, fits, par, ahead, behind, late) and
    its argument."""

    kind: str
    arg: Any = None


@frozen
class HumanAction:
    """One action a person can take: a kind of keep (face, group, pair, groups, run, window, high, none) or a
    score (box, best, target), with its argument."""

    kind: str
    arg: Any = None

    @property
    def scores(self) -> bool:
        return self.kind in ("box", "best", "target")


@frozen
class Rule:
    """When rolls left matches `rolls` (a count, `ANY` or `SOME`) and every feature of `tests` holds, take
    `action` (if legal there)."""

    rolls: int
    tests: tuple[int, ...]  # feature indices of the vocabulary
    action: int  # action index of the vocabulary


def pattern_of(counts: Sequence[int]) -> tuple[int, ...]:
    """The dice's pattern: the sizes of its groups of two or more of a kind, largest first ((3, 2): full house)."""
    return tuple(sorted((c for c in counts if c >= 2), reverse=True))


def longest_run(counts: Sequence[int]) -> tuple[int, int]:
    """(length, lowest face) of the longest run of consecutive faces showing; the higher run on a tie."""
    best, start, length = (0, 0), 0, 0
    for f in range(1, len(counts)):
        if counts[f]:
            start, length = (start, length + 1) if length else (f, 1)
            if length >= best[0]:
                best = (length, start)
        else:
            length = 0
    return best


def largest_group(counts: Sequence[int]) -> tuple[int, int]:
    """(size, face) of the largest group of a kind; the higher face on a tie."""
    size, face = 0, 0
    for f in range(1, len(counts)):
        if counts[f] >= size:
            size, face = counts[f], f
    return size, face


class Vocabulary:
    """The features and actions of the cards of one variant, with their words; resolves an action at a view."""

    def __init__(self, variant: Variant, targets: dict[str, int] | None = None) -> None:
        self.variant = variant
        self.targets = targets or {}  # box -> what a good player scores there on average (`strategy_card_learn`)
        groups = variant.state_totals()
        self.upper: tuple[str, ...] = groups[0].boxes if groups else ()
        self.par = {b: self._par(b) for b in self.upper}
        self.features = self._features()
        self.actions = self._actions()

    def _par(self, box: str) -> int:
        """What par is in an upper box: its best score with the par share of the dice alike, the rest not
        helping (three 4s in Fours: 12)."""
        v = self.variant
        k = max(1, round(PAR_SHARE * v.dice))
        best = 0
        for f in range(1, v.faces + 1):
            worst = min(
                v.declared_score(v.box(box), Roll.of((f,) * k + (g,) * (v.dice - k), v.faces))[1]
                for g in range(1, v.faces + 1)
                if g != f
            )
            best = max(best, worst)
        return best

    def _features(self) -> list[Feature]:
        v = self.variant
        out = [Feature("pattern", p) for p in _patterns(v.dice)]
        out += [Feature("run", n) for n in range(3, min(v.dice, v.faces) + 1)]
        out += [Feature("face", f) for f in range(1, v.faces + 1)]
        out += [Feature("group", n) for n in range(3, v.dice)]
        out += [Feature("open", b) for b in v.box_ids] + [Feature("filled", b) for b in v.box_ids]
        out += [Feature("fits", b) for b in v.box_ids] + [Feature("par", b) for b in self.upper if self.par[b]]
        out += [Feature("target", b) for b in v.box_ids if b not in self.upper and self.targets.get(b, 0) > 0]
        if self.upper:
            out += [Feature("ahead"), Feature("behind")]
        out += [Feature("late", n) for n in OPEN_AT_MOST if n < len(v.boxes)]
        return out

    def _actions(self) -> list[HumanAction]:
        v = self.variant
        out = [HumanAction("group"), HumanAction("pair"), HumanAction("groups"), HumanAction("run")]
        out += [HumanAction("face", f) for f in range(1, v.faces + 1)]
        for width in sorted({v.dice, v.dice - 1} - {0, 1}, reverse=True):
            out += [HumanAction("window", (a, a + width - 1)) for a in range(1, v.faces - width + 2)]
        out += [HumanAction("high", f) for f in range(max(2, v.faces - 2), v.faces + 1)] + [HumanAction("none")]
        scores = [HumanAction("best")] + ([HumanAction("target")] if self.targets else [])
        return out + scores + [HumanAction("box", b) for b in v.box_ids]

    def holds(self, view: View) -> list[bool]:
        """Each feature's truth at `view`, in the vocabulary's order."""
        pattern = pattern_of(view.counts)
        run = longest_run(view.counts)[0]
        size, face = largest_group(view.counts)
        n_open = len(view.open)
        out = []
        for feat in self.features:
            k, a = feat.kind, feat.arg
            if k == "pattern":
                out.append(pattern == a)
            elif k == "run":
                out.append(run >= a)
            elif k == "face":
                out.append(size >= 2 and face == a)
            elif k == "group":
                out.append(size >= a)
            elif k in ("open", "filled"):
                out.append((a in view.open) == (k == "open"))
            elif k == "fits":
                out.append(view.points.get(a, 0) > 0)
            elif k == "par":
                out.append(view.points.get(a, 0) >= self.par[a])
            elif k == "target":
                out.append(view.points.get(a, 0) >= self.targets[a])
            elif k in ("ahead", "behind"):
                out.append(view.upper_gap is not None and (view.upper_gap >= 0) == (k == "ahead"))
            else:
                out.append(n_open <= a)
        return out

    def resolve(self, index: int, view: View) -> Keep | Score | None:
        """Action `index` as a concrete move at `view`, or None where it is not legal there."""
        act = self.actions[index]
        if act.scores:
            box = act.arg if act.kind == "box" else best_box(view, self.targets if act.kind == "target" else {})
            return Score(box) if box in view.points else None
        if not view.may_reroll:
            return None
        kept = _kept(act, view.counts)
        if kept is None or len(kept) >= len(view.dice) or (not kept and act.kind != "none"):
            return None
        return Keep(kept)

    def feature_text(self, index: int) -> str:
        """A feature in words."""
        k, a = self.features[index].kind, self.features[index].arg
        name = self.variant.box(a).name if k in ("open", "filled", "fits", "par", "target") else ""
        if k == "pattern":
            return _("the dice show {pattern}").format(pattern=pattern_text(a))
        return {
            "run": lambda: _("a run of {n} or longer").format(n=a),
            "face": lambda: _("the largest group is of {face}s").format(face=a),
            "group": lambda: _("{n} or more of a kind").format(n=a),
            "open": lambda: _("{box} is open").format(box=name),
            "filled": lambda: _("{box} is filled").format(box=name),
            "fits": lambda: _("the dice score in {box}").format(box=name),
            "par": lambda: _("{box} would get par ({par}) or more").format(box=name, par=self.par.get(a)),
            "target": lambda: _("{box} would get its target ({target}) or more").format(
                box=name, target=self.targets.get(a)
            ),
            "ahead": lambda: _("the upper boxes are at par or ahead"),
            "behind": lambda: _("the upper boxes are behind par"),
            "late": lambda: ngettext("at most {n} box is open", "at most {n} boxes are open", a).format(n=a),
        }[k]()

    def action_text(self, index: int) -> str:
        """An action in words."""
        k, a = self.actions[index].kind, self.actions[index].arg
        return {
            "group": lambda: _("keep the largest group of a kind"),
            "pair": lambda: _("keep the highest pair"),
            "groups": lambda: _("keep every pair and group"),
            "run": lambda: _("keep the longest run toward a straight"),
            "face": lambda: _("keep all dice showing {face}").format(face=a),
            "window": lambda: _("keep one die of each face from {low} to {high}").format(low=a[0], high=a[1]),
            "high": lambda: _("keep every die showing {face} or more").format(face=a),
            "none": lambda: _("reroll all the dice"),
            "best": lambda: _("score in the open box worth the most points"),
            "target": lambda: _("score in the open box where the dice beat its target by the most"),
            "box": lambda: _("score in {box}").format(box=self.variant.box(a).name if a else ""),
        }[k]()


def rolls_match(rolls: int, left: int) -> bool:
    """Whether a rule's rolls test (`ANY`, `SOME` or a count) holds with `left` rolls left."""
    return rolls == ANY or (left > 0 if rolls == SOME else left == rolls)


def best_box(view: View, targets: dict[str, int]) -> str | None:
    """The legal box whose points now less its target (0 where none) are the most (the first in card order on a
    tie), None if none is legal."""
    if not view.points:
        return None
    return max(view.points, key=lambda b: view.points[b] - targets.get(b, 0))


def _kept(act: HumanAction, counts: Sequence[int]) -> tuple[int, ...] | None:
    """The dice a keep action keeps from `counts` (sorted), None when it has nothing to keep."""
    faces = range(1, len(counts))
    k, a = act.kind, act.arg
    if k == "group":
        size, face = largest_group(counts)
        return (face,) * size
    if k == "pair":
        top = [f for f in faces if counts[f] >= 2]
        return (top[-1],) * 2 if top else None
    if k == "groups":
        return tuple(f for f in faces for _ in range(counts[f] if counts[f] >= 2 else 0)) or None
    if k == "run":
        length, low = longest_run(counts)
        return tuple(range(low, low + length))
    if k == "face":
        return (a,) * counts[a] or None
    if k == "window":
        return tuple(f for f in range(a[0], a[1] + 1) if counts[f]) or None
    if k == "high":
        return tuple(f for f in faces if f >= a for _ in range(counts[f])) or None
    return ()


def _patterns(dice: int) -> list[tuple[int, ...]]:
    """Every pattern of `dice` dice (`pattern_of`), fewest matched dice first."""
    out: set[tuple[int, ...]] = set()

    def parts(left: int, most: int, got: tuple[int, ...]) -> None:
        out.add(got)
        for n in range(min(left, most), 1, -1):
            parts(left - n, n, (*got, n))

    parts(dice, dice, ())
    return sorted(out, key=lambda p: (sum(p), p))


def pattern_text(pattern: tuple[int, ...]) -> str:
    """A pattern in words: "a pair", "two pairs", "a full house", "4 of a kind", "all different"."""
    if not pattern:
        return _("all different")
    if pattern == (2, 2):
        return _("two pairs")
    if pattern == (3, 2):
        return _("a full house")
    words = [_("a pair") if n == 2 else _("{n} of a kind").format(n=n) for n in pattern]
    return _(" and ").join(words)


def view_of(variant: Variant, vocab: Vocabulary, card: Card, roll: Roll, rolls_left: int, may_reroll: bool,
            points: dict[str, int]) -> View:  # fmt: skip
    """The `View` of a decision, `points` what each legal box scores now."""
    scores = card.scores
    gap = None
    if vocab.upper:
        filled = [b for b in vocab.upper if b in scores]
        gap = sum(variant.written(b, scores[b]) for b in filled) - sum(vocab.par[b] for b in filled)
    opened = frozenset(b for b in variant.box_ids if b not in scores)
    return View(roll.dice, roll.counts, rolls_left, may_reroll, points, opened, gap)


class StrategyCard:
    """An ordered list of rules over a vocabulary; `choose` the move the card makes at a view."""

    def __init__(self, vocab: Vocabulary, rules: Sequence[Rule]) -> None:
        self.vocab = vocab
        self.rules = tuple(rules)
        self.default_keep = next(i for i, a in enumerate(vocab.actions) if a.kind == "group")
        score = "target" if vocab.targets else "best"
        self.default_score = next(i for i, a in enumerate(vocab.actions) if a.kind == score)

    def choose(self, view: View) -> Keep | Score:
        """The move of the first rule that holds and is legal at `view`, else the default's."""
        truth = self.vocab.holds(view)
        for rule in self.rules:
            if rolls_match(rule.rolls, view.rolls_left) and all(truth[t] for t in rule.tests):
                move = self.vocab.resolve(rule.action, view)
                if move is not None:
                    return move
        return self.default(view)

    def default(self, view: View) -> Keep | Score:
        """Keep the largest group while rolls are left, else (or when that is no move) score the best box."""
        move = self.vocab.resolve(self.default_keep, view) if view.rolls_left > 0 else None
        move = move or self.vocab.resolve(self.default_score, view)
        if move is None:
            raise ValueError("no legal box at a decision")  # (the rules always leave a box to score)
        return move

    def rule_text(self, rule: Rule) -> str:
        """A rule in words: "with 2 rolls left and Yatzy is open: keep the largest group of a kind"."""
        if rule.rolls == ANY:
            when = []
        elif rule.rolls == 0:
            when = [_("with no rolls left")]
        elif rule.rolls == SOME:
            when = [_("with rolls left")]
        else:
            when = [ngettext("with {n} roll left", "with {n} rolls left", rule.rolls).format(n=rule.rolls)]
        when += [self.vocab.feature_text(t) for t in rule.tests]
        head = _(" and ").join(when)
        action = self.vocab.action_text(rule.action)
        return f"{head[:1].upper()}{head[1:]}: {action}" if head else action[:1].upper() + action[1:]

    def default_text(self) -> str:
        """The default in words."""
        return _("Otherwise: {keep}; with no rolls left, {score}").format(
            keep=self.vocab.action_text(self.default_keep), score=self.vocab.action_text(self.default_score)
        )

    def targets_text(self) -> str:
        """The boxes' targets in words ("" when the card has none)."""
        v = self.vocab.variant
        shown = ", ".join(f"{v.box(b).name} {n}" for b, n in self.vocab.targets.items())
        return _("Targets: {targets}").format(targets=shown) if shown else ""

    def lines(self) -> list[str]:
        """The card in words, rule by rule, the default last."""
        return (
            [self.rule_text(r) for r in self.rules]
            + [self.default_text()]
            + [self.targets_text()][: bool(self.vocab.targets)]
        )

    def to_json(self) -> list[dict[str, Any]]:
        """The rules as JSON: words, rolls left, tests and action in machine form."""
        out = []
        for r in self.rules:
            act = self.vocab.actions[r.action]
            tests = [{"kind": self.vocab.features[t].kind, "arg": self.vocab.features[t].arg} for t in r.tests]
            out.append({"text": self.rule_text(r), "rolls_left": {ANY: "any", SOME: "some"}.get(r.rolls, r.rolls), "tests": tests,
                        "action": {"kind": act.kind, "arg": act.arg}})  # fmt: skip
        return out
