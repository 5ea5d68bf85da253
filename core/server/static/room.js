// A table, played over the server's WebSocket protocol (schemas/v1). The page holds no rules: it draws what
// the server sends and sends each tap as a move; a move the engine refuses comes back as an error in the
// engine's own words. Names are put in the page as text, never as markup.

import {drawCards} from "./card.js";
import {dieButton} from "./dice.js";
import {$, api, el, keepToken, reducedMotion, tokens} from "./dom.js";
import {language, localVariant, refusal, t} from "./i18n.js";
import {announce, describeUpdate, drawResult} from "./result.js";

const HUMAN = "human";

const s = {
  code: null, socket: null, table: null, game: null, mine: [], retry: 0, sent: 0,
  kept: new Set(), rolled: new Set(), held: 0, column: 0, focusColumn: false, stop: false, hintBox: null,
};

export function room(code) {
  s.code = code;
  const handed = location.hash.match(/^#seat=(\d+)\.([A-Za-z0-9_-]{32})$/);
  if (handed) {
    keepToken(code, handed[1], handed[2]);
    history.replaceState(null, "", location.pathname);
  }
  $("room").hidden = false;
  $("share-link").value = `${location.origin}/t/${code}`;
  $("save").href = `/api/tables/${code}/save`;
  $("roll").addEventListener("click", roll);
  $("hint").addEventListener("click", askHint);
  $("undo").addEventListener("click", takeBack);
  $("copy").addEventListener("click", copyLink);
  document.addEventListener("keydown", keys);
  connect();
  setInterval(drawClock, 1000);
}

// ---------------------------------------------------------------------------- the connection

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws`);
  s.socket = socket;
  $("link-status").textContent = t("status.connecting");
  socket.onopen = () => {
    s.retry = 0;
    socket.send(JSON.stringify({type: "hello", v: 1, table: s.code, tokens: Object.values(tokens(s.code)), lang: language()}));
  };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
  socket.onclose = () => {
    if (s.stop || socket !== s.socket) return;
    $("link-status").textContent = t("status.lost");
    s.retry = Math.min(s.retry + 1, 5);
    setTimeout(connect, 700 * s.retry);
  };
}

function send(message) {
  if (s.socket && s.socket.readyState === WebSocket.OPEN) s.socket.send(JSON.stringify(message));
}

function receive(message) {
  if (message.type === "welcome") {
    s.table = {...message.table, variant: localVariant(message.table.variant)};
    s.mine = message.seats;
    s.game = message.game;
    s.kept.clear();
    s.rolled.clear();
    $("link-status").textContent = s.mine.length ? "" : t("status.watching");
    $("log").replaceChildren(...message.recent.map(logLine));
    announce(turnLine());
  } else if (message.type === "update" || message.type === "state") {
    const before = s.game;
    s.game = message.game;
    if (message.type === "update") {
      $("log").append(...message.moves.map(logLine));
      const turnChanged = !before || before.to_move !== s.game.to_move || s.game.status !== before.status;
      announce([describeUpdate(message.moves, s), turnChanged ? turnLine() : ""].filter(Boolean).join(" "));
    }
    if (!before || before.seq !== s.game.seq) {
      s.kept.clear();
      s.hintBox = null;
    }
    if (message.type === "update") noteRoll(message.moves, before);
  } else if (message.type === "undone") {
    s.game = message.game;
    s.kept.clear();
    s.rolled.clear();
    s.hintBox = null;
    s.held = 0;
    $("log").replaceChildren(...message.recent.map(logLine));
    const decision = message.moves[0];
    const seen = myTurn() && !s.game.may_reroll && s.game.rolls_left > 0;
    const said = [t("say.undone", {who: seatName(message.seat), label: decision.label}),
      seen ? t("room.undoSeen") : "", turnLine()];
    announce(said.filter(Boolean).join(" "));
    say(seen ? t("room.undoSeen") : "");
  } else if (message.type === "error") {
    if (message.code === "stale") {
      // a double tap, or a move raced by another device: nothing to say, the page catches up
      send({type: "sync"});
      say("");
      return;
    }
    say(refusal(message), true);
    if (message.code === "unknown_table") s.stop = true;
    if (!s.game) return;
  } else if (message.type === "ack") {
    say("");
  }
  if (s.table && s.game) draw();
}

/** Which dice an update rolled (the last ones: the kept dice come first), to show them tumbling. */
function noteRoll(moves, before) {
  s.rolled.clear();
  s.held = 0;
  const rolls = moves.filter((m) => m.move[0] === "roll");
  if (!rolls.length) return;
  const count = rolls[rolls.length - 1].move[1].length;
  const dice = s.game.dice.length;
  s.held = dice - count;
  for (let i = dice - count; i < dice; i += 1) s.rolled.add(i);
  // the dice a player kept stay kept for their next roll, until they let them go
  const sameTurn = before && before.to_move === s.game.to_move && s.game.may_reroll;
  if (sameTurn && myTurn()) for (let i = 0; i < s.held; i += 1) s.kept.add(i);
}

function seatName(seat) {
  const entry = s.game && s.game.seats[seat];
  return entry && entry.name ? entry.name : t("lobby.seat", {n: seat + 1});
}

function logLine(entry) {
  return el("li", {class: `by-${entry.by}`}, el("span", {class: "who"}, seatName(entry.seat)), ` ${entry.label}`);
}

function turnLine() {
  const g = s.game;
  if (g.status === "over") return "";
  if (g.to_move === null) return t("room.waiting");
  const name = seatName(g.to_move);
  return myTurn() ? t("say.yourTurn", {name}) : t("say.turn", {name});
}

// ---------------------------------------------------------------------------- moves

function play(move) {
  if (!myTurn()) return;
  s.sent += 1;
  send({type: "move", seat: s.game.to_move, at: s.game.seq, move, id: String(s.sent)});
  say(t("room.thinking"));
}

function roll() {
  if (!canRoll()) return;
  play(["keep", [...s.kept].sort((a, b) => a - b).map((i) => s.game.dice[i])]);
}

function toggle(i) {
  if (!myTurn() || !s.game.may_reroll || i >= s.game.dice.length) return;
  if (s.kept.has(i)) s.kept.delete(i);
  else s.kept.add(i);
  announce(t(s.kept.has(i) ? "say.kept" : "say.released", {n: i + 1}));
  s.rolled.clear();
  draw();
  const die = document.querySelector(`[data-die="${i}"]`);
  if (die && document.activeElement && document.activeElement.dataset.die !== undefined) die.focus();
}

function keys(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || !s.game) return;
  if (event.target.closest && event.target.closest("input, select, textarea")) return;
  if (/^[1-9]$/.test(event.key)) {
    toggle(Number(event.key) - 1);
    event.preventDefault();
  } else if (event.key === "r" || event.key === "R") {
    roll();
    event.preventDefault();
  } else if ((event.key === "h" || event.key === "H") && myTurn()) {
    askHint();
    event.preventDefault();
  } else if ((event.key === "u" || event.key === "U") && canUndo()) {
    takeBack();
    event.preventDefault();
  }
}

/** Ask the server what a bot would play now, and show it (with why, where the server explains it): the dice it
 * would keep picked, the box marked. */
async function askHint() {
  if (!myTurn()) return;
  const at = s.game.seq;
  $("hint").disabled = true;
  try {
    const hint = await api(`/api/tables/${s.code}/hint`, {token: tokens(s.code)[s.game.to_move], lang: language()});
    if (s.game.seq !== at || hint.seq !== at) return;
    const said = t("room.hintIs", {bot: hint.bot, label: hint.label});
    const text = hint.explanation ? `${said} ${hint.explanation.text}` : said; // why: in the language asked
    say(text);
    announce(text);
    s.hintBox = null;
    if (hint.move[0] === "keep") {
      const left = [...hint.move[1]];
      s.kept.clear();
      s.game.dice.forEach((face, i) => {
        const k = left.indexOf(face);
        if (k >= 0) { s.kept.add(i); left.splice(k, 1); }
      });
    } else if (hint.move[0] === "score") {
      s.hintBox = hint.move[1];
      const box = s.table.variant.boxes.find((b) => b.id === hint.move[1]);
      const column = box ? s.table.variant.columns.findIndex((c) => c.id === box.column) : -1;
      if (column >= 0) s.column = column; // on a phone, the tab of the box's column
    }
    draw();
  } catch (error) {
    say(error.message, true);
  } finally {
    $("hint").disabled = false;
  }
}

/** Whether a seat of this page may take back its last move now (the server says who may: `game.undo`). */
function canUndo() {
  const u = s.game && s.game.undo;
  return Boolean(u) && s.game.status === "playing" && s.mine.includes(u.seat);
}

/** Take back this page's seat's last score or announcement (the server checks it may, and says so to all). */
function takeBack() {
  if (!canUndo()) return;
  s.sent += 1;
  send({type: "undo", seat: s.game.undo.seat, at: s.game.seq, id: String(s.sent)});
  say(t("room.thinking"));
}

function myTurn() {
  return s.game.status === "playing" && s.game.to_move !== null && s.mine.includes(s.game.to_move);
}

function canRoll() {
  return myTurn() && s.game.may_reroll && s.kept.size < s.game.dice.length;
}

function say(text, isError = false) {
  // before the table's first state its panel is hidden: a refusal then (no such table) is the room's own line
  const line = s.game ? $("message") : $("room-message");
  line.textContent = text;
  line.className = isError ? "error" : "";
}

async function claim(seat, input) {
  try {
    const got = await api(`/api/tables/${s.code}/seats/${seat}`, {name: input.value.trim()});
    keepToken(s.code, got.seat, got.token);
    const old = s.socket;
    s.socket = null;
    old.close();
    connect();
  } catch (error) {
    say(error.message, true);
  }
}

async function copyLink() {
  try {
    await navigator.clipboard.writeText($("share-link").value);
    say(t("room.copied"));
  } catch (error) {
    $("share-link").select();
  }
}

// ---------------------------------------------------------------------------- drawing

function draw() {
  // the page is drawn anew from each message: a focus inside the game goes back to the next thing to do
  const focused = document.activeElement;
  const hadFocus = focused && focused !== document.body && $("game").contains(focused);
  drawAll();
  if (hadFocus && !$("game").contains(document.activeElement)) {
    const next = [$("roll"), document.querySelector("button.score"), $("result").querySelector(".winner"), $("turn")]
      .find((node) => node && !node.disabled && node.offsetParent !== null);
    if (next) next.focus();
  }
}

function drawAll() {
  const g = s.game;
  const v = s.table.variant;
  $("title").textContent = v.name;
  drawSeats();
  $("share").hidden = g.status !== "waiting";
  $("game").hidden = g.status === "waiting";
  if (g.status === "waiting") {
    say(t("room.waiting"));
    return;
  }
  $("table-panel").hidden = g.status === "over";
  drawTurn();
  drawDice();
  const mineNow = myTurn();
  $("controls").hidden = !mineNow;
  $("key-help").textContent = `${t("room.keyHelp", {n: g.dice.length})} ${t("room.keyHelpHint")} ${t("room.keyHelpUndo")}`;
  $("undo").hidden = !canUndo();
  if (canUndo()) $("undo").textContent = t("room.undo", {move: g.undo.label});
  const free = g.dice.length - s.kept.size;
  $("roll").textContent = free === g.dice.length ? t("room.rollAll") : t("room.roll", {n: free});
  $("roll").disabled = !canRoll();
  drawRuleActions(g.rule_actions);
  $("actions").hidden = !mineNow || g.rule_actions.length === 0;
  $("notes").replaceChildren(...[...g.notes, ...g.progress].map((line) => el("li", {}, line)));
  const focusedTab = s.focusColumn;
  drawCards($("cards"), {
    table: s.table, game: g, mine: s.mine, column: s.column, hint: s.hintBox, onScore: (box) => play(["score", box]),
    onColumn: (k, focus = false) => { s.column = k; s.focusColumn = focus; draw(); },
  });
  if (focusedTab) {
    s.focusColumn = false;
    const tab = document.querySelector(`.tabs [data-column="${s.column}"]`);
    if (tab) tab.focus();
  }
  drawClock();
  drawResult($("result"), s);
}

function drawRuleActions(actions) {
  // a few moves of the rules are buttons; many (Yamb's announcements) one list and one button
  if (actions.length <= 3) {
    $("actions").replaceChildren(...actions.map((a) =>
      el("button", {type: "button", "data-move": JSON.stringify(a.move), onclick: () => play(a.move)}, a.label)));
    return;
  }
  const select = el("select", {id: "rule-choice", "aria-label": t("room.rules")},
    ...actions.map((a, i) => el("option", {value: i}, a.label)));
  $("actions").replaceChildren(select, el("button", {type: "button", id: "rule-go",
    onclick: () => play(actions[Number(select.value)].move)}, t("room.ruleGo")));
}

function drawSeats() {
  const g = s.game;
  $("seats").replaceChildren(...g.seats.map((seat) => {
    const bits = [seat.player === HUMAN ? null : seat.player, s.mine.includes(seat.seat) ? t("room.you") : null];
    const playing = g.status === "playing" && g.to_move === seat.seat;
    const score = g.players[seat.seat] ? String(g.players[seat.seat].total) : "";
    const label = el("span", {class: "seat-label"},
      el("span", {class: "name"}, seat.name || t("room.openSeat")),
      el("span", {class: "what"}, bits.filter(Boolean).join(" · ")));
    const item = el("li", {class: playing ? "moving" : null, "aria-current": playing ? "true" : null},
      label, score ? el("span", {class: "score"}, score) : null);
    if (s.mine.includes(seat.seat) && g.status !== "over") {
      // the seat's own link, its token after # (a browser never sends it): the seat on another device
      const handoff = `${location.origin}/t/${s.code}#seat=${seat.seat}.${tokens(s.code)[seat.seat]}`;
      item.append(el("a", {href: handoff, class: "handoff"}, t("room.handoff")));
    } else if (!seat.taken && g.status === "waiting") {
      const id = `take-${seat.seat}`;
      const input = el("input", {id, maxlength: 64, autocomplete: "nickname", placeholder: t("room.takeName")});
      item.append(el("span", {class: "take"}, el("label", {for: id, class: "visually-hidden"}, t("room.takeName")), input,
        el("button", {type: "button", onclick: () => claim(seat.seat, input)}, t("room.take"))));
    }
    return item;
  }));
}

function drawTurn() {
  const g = s.game;
  if (g.status === "over") {
    $("turn").textContent = t("room.gameOver");
    $("turn-detail").textContent = "";
    return;
  }
  const name = seatName(g.to_move ?? g.current);
  $("turn").textContent = myTurn() ? t("room.yourTurn", {name}) : t("room.theirTurn", {name});
  const rolls = g.rolls_left === 0 ? t("room.noRolls") : t("room.rollsLeft", {n: g.rolls_left});
  const parts = [myTurn() ? rolls : null, g.rounds > 1 ? t("room.gameOf", {n: g.round, of: g.rounds}) : null];
  $("turn-detail").textContent = parts.filter(Boolean).join(" · ");
  $("table-panel").classList.toggle("mine", myTurn());
}

function drawDice() {
  const g = s.game;
  const active = myTurn() && g.may_reroll;
  const animate = !reducedMotion();
  $("dice").style.setProperty("--dice", String(Math.min(g.dice.length, 8)));
  $("dice").replaceChildren(...g.dice.map((face, i) => dieButton(s.table.variant, i, face, {
    active, kept: s.kept.has(i),
    classes: [s.rolled.has(i) && animate ? "rolling" : "", !myTurn() && i < s.held && g.status === "playing" ? "held" : ""],
    delay: animate ? (i % 5) * 40 : null,
    onclick: () => toggle(i),
  })));
  s.rolled.clear();
}

function drawClock() {
  const g = s.game;
  if (!g || g.deadline === null || g.status !== "playing") return;
  const left = Math.max(0, Math.round(g.deadline - Date.now() / 1000));
  $("link-status").textContent = t("status.clock", {seconds: left});
}
