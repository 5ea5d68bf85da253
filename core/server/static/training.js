// The trainer (/train): a decision met in real play, the player's keep or box, and its grade: the expected
// points it gives up against the best move (the server's, POST /api/train/drill and /grade, the same loss as a
// review's). The running figures and the history of every session are kept in this browser.

import {drawCards} from "./card.js";
import {dieButton} from "./dice.js";
import {$, api, el, reducedMotion} from "./dom.js";
import {language, localVariant, t} from "./i18n.js";
import {announce} from "./result.js";

const HISTORY = "dicecup.training";
const HISTORY_KEPT = 2000; // graded moves kept in this browser, the oldest out first
const RETRY_SECONDS = 5;
const RETRIES = 60; // the solver's table of a large variant is prepared once: minutes at most

const NOTHING = {moves: 0, best: 0, lost: 0, weighted: 0, per_game: 0};
const s = {variants: [], drill: null, variant: null, kept: new Set(), seed: null, k: 0, busy: false, graded: false,
  session: NOTHING};

export async function training() {
  $("training").hidden = false;
  $("title").textContent = t("train.title");
  $("to-trainer").hidden = true; // (the page it links to)
  const all = await api("/api/variants");
  s.variants = all.filter((v) => v.bots.includes("bot:optimal")); // the exact solver's variants: a grade needs it
  $("train-variant").replaceChildren(...s.variants.map((v) =>
    el("option", {value: v.id}, localVariant(v).name)));
  const asked = new URLSearchParams(location.search).get("variant");
  if (s.variants.some((v) => v.id === asked)) $("train-variant").value = asked;
  $("train-variant").addEventListener("change", () => {
    Object.assign(s, {seed: null, k: 0, session: NOTHING});
    drawSummary();
  });
  $("train-next").addEventListener("click", () => next(false));
  $("train-daily").addEventListener("click", () => next(true));
  $("train-keep").addEventListener("click", keep);
  document.addEventListener("keydown", keys);
  drawSummary();
}

function say(text, isError = false) {
  $("train-message").textContent = text;
  $("train-message").className = isError ? "error" : "";
}

/** Ask again while the server prepares the solver's table (503), saying so meanwhile. */
async function patiently(path, body) {
  for (let tries = 1; ; tries += 1) {
    try {
      return await api(path, body);
    } catch (error) {
      if (error.status !== 503 || tries >= RETRIES) throw error;
      say(t("review.preparing"));
      await new Promise((done) => { setTimeout(done, RETRY_SECONDS * 1000); });
    }
  }
}

async function next(daily) {
  if (s.busy) return;
  s.busy = true;
  say(t("train.loading"));
  const variant = $("train-variant").value;
  const body = {variant, lang: language(), ...(daily ? {daily: true} : {k: s.k})};
  if (!daily && s.seed !== null) body.seed = s.seed;
  try {
    const drill = await patiently("/api/train/drill", body);
    if (!daily) { s.seed = drill.seed; s.k += 1; }
    s.drill = drill;
    s.variant = localVariant(drill.variant);
    s.kept.clear();
    s.graded = false;
    say("");
    $("train-grade").replaceChildren();
    $("train-board").hidden = false;
    draw();
    const heading = daily ? t("train.daily", {day: drill.day}) : t("train.drill", {n: s.k});
    $("train-heading").textContent = heading;
    $("train-heading").focus();
    announce(`${heading}. ${diceWords()}`);
  } catch (error) {
    say(error.message, true);
  } finally {
    s.busy = false;
  }
}

function diceWords() {
  const g = s.drill.game;
  const rolls = g.rolls_left === 0 ? t("room.noRolls") : t("room.rollsLeft", {n: g.rolls_left});
  return `${t("train.dice", {dice: g.dice.join(" ")})} · ${rolls}`;
}

function deciding() {
  return s.drill !== null && !s.graded;
}

function draw() {
  const g = s.drill.game;
  $("train-detail").textContent = diceWords();
  const active = deciding() && g.may_reroll;
  $("train-dice").style.setProperty("--dice", String(Math.min(g.dice.length, 8)));
  $("train-dice").replaceChildren(...g.dice.map((face, i) => dieButton(s.variant, i, face, {
    active, kept: s.kept.has(i), classes: [!reducedMotion() && !s.graded ? "rolling" : ""],
    onclick: () => toggle(i),
  })));
  $("train-keep").hidden = !active;
  const free = g.dice.length - s.kept.size;
  $("train-keep").disabled = free === 0;
  $("train-keep").textContent = free === g.dice.length ? t("room.rollAll") : t("room.roll", {n: free});
  $("train-notes").replaceChildren(...[...g.notes, ...g.progress].map((line) => el("li", {}, line)));
  drawCards($("train-cards"), {
    table: {variant: s.variant}, game: deciding() ? g : {...g, status: "over"}, mine: [0], column: 0, hint: null,
    onScore: (box) => grade(["score", box]), onColumn: () => draw(),
  });
}

function toggle(i) {
  if (!deciding() || !s.drill.game.may_reroll) return;
  if (s.kept.has(i)) s.kept.delete(i);
  else s.kept.add(i);
  announce(t(s.kept.has(i) ? "say.kept" : "say.released", {n: i + 1}));
  draw();
  const die = document.querySelector(`#train-dice [data-die="${i}"]`);
  if (die) die.focus();
}

function keep() {
  if (!deciding() || s.kept.size === s.drill.game.dice.length) return;
  grade(["keep", [...s.kept].map((i) => s.drill.game.dice[i]).sort((a, b) => a - b)]);
}

function keys(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || $("training").hidden) return;
  if (event.target.closest && event.target.closest("input, select, textarea")) return;
  if (/^[1-9]$/.test(event.key) && deciding()) {
    toggle(Number(event.key) - 1);
    event.preventDefault();
  } else if ((event.key === "r" || event.key === "R") && deciding()) {
    keep();
    event.preventDefault();
  } else if ((event.key === "n" || event.key === "N") && !deciding()) {
    next(false);
    event.preventDefault();
  }
}

function number(value) {
  return new Intl.NumberFormat(language(), {minimumFractionDigits: 2, maximumFractionDigits: 2}).format(value);
}

async function grade(move) {
  if (!deciding() || s.busy) return;
  s.busy = true;
  try {
    const got = await patiently("/api/train/grade", {
      variant: s.drill.variant.id, moves: s.drill.moves, move, lang: language(),
    });
    s.graded = true;
    remember(got);
    draw();
    drawGrade(got);
    drawSummary();
    $("train-next").focus();
  } catch (error) {
    say(error.message, true);
  } finally {
    s.busy = false;
  }
}

function drawGrade(got) {
  const head = got.optimal
    ? t("train.best", {move: got.played.label, value: number(got.played.expected_score)})
    : t("train.lost", {move: got.played.label, loss: number(got.loss), best: got.best.label,
      value: number(got.best.expected_score)});
  const options = got.options.map((o, i) => el("li", {class: i === 0 ? "best" : null},
    i === 0 ? `${o.label} (${number(o.expected_score)})` : `${o.label} −${number(o.loss)}`));
  $("train-grade").replaceChildren(el("p", {class: got.optimal ? "good" : "lost"}, head),
    el("p", {}, t("train.options")), el("ol", {}, ...options), el("p", {class: "why"}, got.explanation.text));
  announce(head);
}

function history() {
  try {
    const kept = JSON.parse(localStorage.getItem(HISTORY));
    return Array.isArray(kept) ? kept.filter((m) => m && typeof m.loss === "number" && m.loss >= 0
      && typeof m.importance === "number" && m.importance > 0 && typeof m.variant === "string") : [];
  } catch (error) {
    return []; // not a history (edited by hand): a new one starts
  }
}

function remember(got) {
  const d = s.drill;
  const move = {variant: d.variant.id, day: new Date().toISOString().slice(0, 10), loss: got.loss,
    best: got.optimal, importance: d.importance, per_game: d.per_game, daily: d.day !== null};
  const all = [...history(), move].slice(-HISTORY_KEPT);
  try {
    localStorage.setItem(HISTORY, JSON.stringify(all));
  } catch (error) {
    // a full or refused storage: the session's figures still count
  }
  const t0 = s.session;
  s.session = {moves: t0.moves + 1, best: t0.best + got.optimal, lost: t0.lost + got.loss,
    weighted: t0.weighted + d.importance * got.loss, per_game: d.per_game};
}

/** `7 of 10 moves best (70%); 0.42 points lost a move, about 5.5 a game in real play`. */
function tallyLine(tally, perGame) {
  if (!tally.moves) return t("train.none");
  return t("train.tally", {best: tally.best, n: tally.moves, share: Math.round(100 * tally.best / tally.moves),
    move: number(tally.lost / tally.moves), game: number(tally.weighted / tally.moves * perGame)});
}

function drawSummary() {
  const variant = $("train-variant").value;
  const mine = history().filter((m) => m.variant === variant);
  const all = mine.reduce((a, m) => ({moves: a.moves + 1, best: a.best + (m.best ? 1 : 0), lost: a.lost + m.loss,
    weighted: a.weighted + m.importance * m.loss}), {moves: 0, best: 0, lost: 0, weighted: 0});
  const perGame = mine.length ? mine[mine.length - 1].per_game || 0 : 0;
  $("train-session").textContent = t("train.session", {line: tallyLine(s.session, s.session.per_game)});
  $("train-all").textContent = t("train.all", {line: tallyLine(all, perGame)});
}
