"use strict";
// The dicecup page: a lobby that creates tables, and a table played over the server's WebSocket protocol
// (schemas/v1). It holds no rules: it draws what the server sends and sends each click as a move; a move
// the engine refuses comes back as an error with the engine's own words. Every text a player typed (names)
// is put in the page with textContent, never as markup.

const $ = (id) => document.getElementById(id);
const HUMAN = "human";

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error);
  return data;
}

// ---------------------------------------------------------------------------- seat tokens

// A seat's token is kept in this browser (localStorage), per table: a reload or a dropped connection
// resumes the seat. A link ending in #seat=N.TOKEN hands a seat to another device.
function tokens(code) {
  try {
    return JSON.parse(localStorage.getItem(`dicecup:${code}`)) || {};
  } catch (error) {
    return {};
  }
}

function keepToken(code, seat, token) {
  const all = tokens(code);
  all[seat] = token;
  localStorage.setItem(`dicecup:${code}`, JSON.stringify(all));
}

// ---------------------------------------------------------------------------- the lobby

let catalogue = [];

async function lobby() {
  $("lobby").hidden = false;
  $("title").textContent = "";
  catalogue = await api("/api/variants");
  const wanted = new URLSearchParams(location.search).get("variant");
  $("variant").replaceChildren(...catalogue.map((v) =>
    el("option", {value: v.id, selected: v.id === wanted}, `${v.name} (${v.id})`)));
  $("variant").addEventListener("change", pickVariant);
  pickVariant();
  addSeat("bot:greedy");
  $("create").disabled = false;
}

function chosenVariant() {
  return catalogue.find((v) => v.id === $("variant").value);
}

function pickVariant() {
  const v = chosenVariant();
  $("description").textContent = v.description;
  $("options").replaceChildren(...v.options.map((o) => el("label", {}, `${o.name} `,
    el("select", {"data-option": o.name}, ...o.choices.map((c) => el("option", {
      value: JSON.stringify(c), selected: c === o.default,
    }, String(c)))))));
  for (const select of document.querySelectorAll("#others select")) fillSeatChoices(select, select.value);
}

function fillSeatChoices(select, wanted) {
  const v = chosenVariant();
  const choices = [["invite", "a friend (they join by the link)"], ["hotseat", "someone at this device (hot seat)"],
    ...v.bots.filter((b) => !b.includes(":", 4)).map((b) => [b, b])];
  select.replaceChildren(...choices.map(([value, text]) => el("option", {value, selected: value === wanted}, text)));
}

function addSeat(kind) {
  const select = el("select", {class: "seat-kind"});
  fillSeatChoices(select, kind);
  const name = el("input", {class: "seat-name", placeholder: "name (optional)", maxlength: 64});
  const row = el("li", {}, select, " ", name, " ", el("button", {type: "button", onclick: () => row.remove()}, "remove"));
  $("others").append(row);
}

async function createTable() {
  const v = chosenVariant();
  const options = {};
  for (const select of document.querySelectorAll("[data-option]")) options[select.dataset.option] = JSON.parse(select.value);
  const seats = [{player: HUMAN, name: $("name").value.trim() || "you", mine: true}];
  for (const row of document.querySelectorAll("#others li")) {
    const kind = row.querySelector(".seat-kind").value;
    const name = row.querySelector(".seat-name").value.trim() || undefined;
    if (kind === "invite") seats.push({player: HUMAN, name});
    else if (kind === "hotseat") seats.push({player: HUMAN, name: name || `player ${seats.length + 1}`, mine: true});
    else seats.push({player: kind, name});
  }
  const timer = $("timer").value;
  $("create").disabled = true;
  lobbySay("Creating the table…");
  try {
    const made = await api("/api/tables", {variant: v.id, options, seats, turn_seconds: timer ? Number(timer) : null});
    for (const {seat, token} of made.tokens) keepToken(made.code, seat, token);
    location.href = made.link;
  } catch (error) {
    lobbySay(error.message, true);
    $("create").disabled = false;
  }
}

function lobbySay(text, isError = false) {
  $("lobby-message").textContent = text;
  $("lobby-message").className = isError ? "error" : "";
}

function joinByCode() {
  const text = $("join-code").value.trim();
  const code = text.includes("/t/") ? text.split("/t/")[1].split(/[#?/]/)[0] : text;
  if (/^[A-Za-z0-9_-]{16}$/.test(code)) location.href = `/t/${code}`;
  else lobbySay("a table's code is the 16 letters and digits after /t/ in its link", true);
}

// ---------------------------------------------------------------------------- a table

let code = null;
let socket = null;
let table = null; // what the table was created with
let game = null; // the game now
let mine = []; // the seats this page acts for
let retry = 0;
const kept = new Set(); // positions of the dice picked to keep
let sent = 0;

function room(tableCode) {
  code = tableCode;
  const handed = location.hash.match(/^#seat=(\d+)\.([A-Za-z0-9_-]{32})$/);
  if (handed) {
    keepToken(code, handed[1], handed[2]);
    history.replaceState(null, "", location.pathname);
  }
  $("room").hidden = false;
  $("share-link").value = `${location.origin}/t/${code}`;
  $("save").href = `/api/tables/${code}/save`;
  connect();
  setInterval(drawClock, 1000);
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws`);
  $("link-status").textContent = "connecting…";
  socket.onopen = () => {
    retry = 0;
    socket.send(JSON.stringify({type: "hello", v: 1, table: code, tokens: Object.values(tokens(code))}));
  };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
  socket.onclose = () => {
    $("link-status").textContent = "connection lost: reconnecting…";
    retry = Math.min(retry + 1, 5);
    setTimeout(connect, 1000 * retry);
  };
}

function receive(message) {
  if (message.type === "welcome") {
    table = message.table;
    mine = message.seats;
    game = message.game;
    $("link-status").textContent = mine.length ? "" : "watching";
    $("log").replaceChildren(...message.recent.map(logLine));
  } else if (message.type === "update" || message.type === "state") {
    const before = game;
    game = message.game;
    if (message.type === "update") $("log").append(...message.moves.map(logLine));
    if (!before || before.to_move !== game.to_move || before.dice.join() !== game.dice.join()) kept.clear();
  } else if (message.type === "error") {
    say(message.message, true);
    if (message.code === "stale") socket.send(JSON.stringify({type: "sync"}));
    if (message.code === "unknown_table") socket.onclose = null;
    if (!game) return;
  } else if (message.type === "ack") {
    say("");
  }
  if (table && game) draw();
}

function logLine(entry) {
  const seat = game && game.seats[entry.seat];
  const who = seat ? seat.name || `seat ${entry.seat}` : `seat ${entry.seat}`;
  return el("li", {}, `${who}: ${entry.label}`);
}

function play(move) {
  const seat = game.to_move;
  sent += 1;
  socket.send(JSON.stringify({type: "move", seat, at: game.seq, move, id: String(sent)}));
  say("…");
}

function say(text, isError = false) {
  $("message").textContent = text;
  $("message").className = isError ? "error" : "";
}

async function claim(seat, input) {
  try {
    const got = await api(`/api/tables/${code}/seats/${seat}`, {name: input.value.trim()});
    keepToken(code, got.seat, got.token);
    socket.onclose = null;
    socket.close();
    connect();
  } catch (error) {
    say(error.message, true);
  }
}

function myTurn() {
  return game.to_move !== null && mine.includes(game.to_move);
}

function draw() {
  const v = table.variant;
  $("title").textContent = v.name;
  $("seats").replaceChildren(...game.seats.map((s) => {
    const label = `${s.name || "(open seat)"}${s.player === HUMAN ? "" : ` · ${s.player}`}${mine.includes(s.seat) ? " · you" : ""}`;
    if (mine.includes(s.seat)) {
      // the seat's own link, with its token after # (never sent to a server): the seat on another device
      const handoff = `${location.origin}/t/${code}#seat=${s.seat}.${tokens(code)[s.seat]}`;
      return el("li", {}, label, " ", el("a", {href: handoff, class: "handoff"}, "(link to play this seat on another device)"));
    }
    if (s.taken || game.status !== "waiting") return el("li", {}, label);
    const input = el("input", {placeholder: "your name", maxlength: 64});
    return el("li", {}, label, " ", input, el("button", {onclick: () => claim(s.seat, input)}, "Take this seat"));
  }));
  $("share").hidden = game.status === "over";
  $("game").hidden = game.status === "waiting";
  if (game.status === "waiting") {
    $("turn").textContent = "";
    say("The game starts when every seat is taken.");
    return;
  }
  const who = game.current !== null ? game.seats[game.current] : null;
  const round = game.rounds > 1 ? ` · game ${game.round} of ${game.rounds}` : "";
  $("turn").textContent = game.status === "over" ? "Game over" :
    `${myTurn() ? "Your turn: " : ""}${who.name}${round} · ${game.rolls_left} roll${game.rolls_left === 1 ? "" : "s"} left`;
  $("dice").replaceChildren(...game.dice.map((face, i) => {
    const colour = dieColour(face);
    return el("button", {
      class: `die${kept.has(i) ? " kept" : ""}`, "data-die": i, style: colour ? `color: ${colour}` : null,
      disabled: !myTurn(), onclick: () => { kept.has(i) ? kept.delete(i) : kept.add(i); draw(); },
    }, String(face));
  }));
  $("dice").hidden = game.status === "over";
  $("controls").hidden = !myTurn();
  $("keep").className = game.may_reroll ? "" : "dim";
  $("actions").replaceChildren(...game.rule_actions.map((a) =>
    el("button", {"data-move": JSON.stringify(a.move), onclick: () => play(a.move)}, a.label)));
  $("notes").replaceChildren(...[...game.notes, ...game.progress].map((line) => el("li", {}, line)));
  $("cards").replaceChildren(...(v.columns.length > 1 ? game.players.map((p, i) => columnCard(i)) : [playerCard()]));
  drawClock();
  drawResult();
}

function drawClock() {
  if (!game || game.deadline === null || game.status !== "playing") return;
  const left = Math.max(0, Math.round(game.deadline - Date.now() / 1000));
  $("link-status").textContent = `${left} s left for this turn`;
}

function dieColour(face) {
  for (const [name, values] of Object.entries(table.variant.attributes)) {
    const value = String(values[face - 1]);
    if (name.toLowerCase().includes("colo") && CSS.supports("color", value)) return value;
  }
  return null;
}

function boxCell(player, box) {
  // A box: its score once filled, else (on your turn) what it would score now. Every box of the player
  // to move can be clicked: the engine decides, and says why not.
  const card = game.players[player];
  const yours = myTurn() && player === game.current;
  const written = card.scores[box];
  if (written !== null && written !== undefined) {
    return el("td", {class: yours ? "filled mine" : "filled", "data-box": box, "data-player": player,
      onclick: yours ? () => play(["score", box]) : null}, String(written));
  }
  if (!yours) return el("td", {"data-box": box, "data-player": player});
  const preview = game.legal[box];
  const cls = preview ? `open legal${preview.points > 0 ? "" : " zero"}` : "open";
  return el("td", {class: cls, "data-box": box, "data-player": player, onclick: () => play(["score", box])},
    preview ? String(preview.written) : "");
}

function playerCard() {
  const v = table.variant;
  const head = el("tr", {}, el("th", {}, ""), ...game.players.map((p, i) =>
    el("th", {}, i === game.current && game.status === "playing" ? `▶ ${p.name}` : p.name)));
  const rows = v.boxes.map((b, k) => el("tr", {class: k > 0 && v.boxes[k - 1].section !== b.section ? "section" : null},
    el("th", {class: "row"}, b.name), ...game.players.map((_, i) => boxCell(i, b.id))));
  const ids = [...new Set(game.players.flatMap((p) => p.bonuses.map((b) => b.id)))];
  const bonuses = ids.map((id) => el("tr", {},
    el("th", {class: "row"}, game.players.flatMap((p) => p.bonuses).find((b) => b.id === id).name),
    ...game.players.map((p) => el("td", {class: "bonus"}, (p.bonuses.find((b) => b.id === id) || {text: ""}).text))));
  const total = el("tr", {class: "total"}, el("th", {class: "row"}, "Total"),
    ...game.players.map((p) => el("td", {"data-total": p.name}, String(p.total))));
  return el("table", {class: "card current"}, el("thead", {}, head), el("tbody", {}, ...rows, ...bonuses, total));
}

function columnCard(player) {
  const v = table.variant;
  const p = game.players[player];
  const caption = `${player === game.current && game.status === "playing" ? "▶ " : ""}${p.name}: ${p.total}`;
  const head = el("tr", {}, el("th", {}, ""), ...v.columns.map((c) => el("th", {}, c.name)));
  const rows = v.rows.map((r) => el("tr", {}, el("th", {class: "row"}, r.name),
    ...v.columns.map((c) => boxCell(player, `${c.id}.${r.id}`))));
  const bonuses = p.bonuses.map((b) => el("tr", {}, el("th", {class: "row"}, b.name),
    el("td", {class: "bonus", colspan: v.columns.length}, b.text)));
  const total = el("tr", {class: "total"}, el("th", {class: "row"}, "Total"),
    el("td", {colspan: v.columns.length, "data-total": p.name}, String(p.total)));
  return el("table", {class: "card"}, el("caption", {}, caption), el("thead", {}, head),
    el("tbody", {}, ...rows, ...bonuses, total));
}

function drawResult() {
  const result = game.result;
  $("result").hidden = !result;
  if (!result) return;
  const head = el("tr", {}, el("th", {}, "place"), el("th", {}, "player"), ...result.rank_by.map((k) => el("th", {}, k)));
  const rows = result.ranking.map((r) => el("tr", {}, el("td", {}, String(r.place)), el("td", {}, r.name),
    ...r.keys.map((k) => el("td", {}, String(k)))));
  const winners = result.winners.length > 1 ? `Tie: ${result.winners.join(", ")}` : `Winner: ${result.winners[0]}`;
  $("result").replaceChildren(el("p", {class: "winner"}, winners), el("table", {id: "ranking"}, head, ...rows),
    el("a", {href: "/"}, "New table"));
}

// ---------------------------------------------------------------------------- start

$("create").addEventListener("click", createTable);
$("add-seat").addEventListener("click", () => addSeat("bot:greedy"));
$("join").addEventListener("click", joinByCode);
$("keep").addEventListener("click", () => play(["keep", [...kept].map((i) => game.dice[i])]));
$("copy").addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText($("share-link").value));
const at = location.pathname.match(/^\/t\/([A-Za-z0-9_-]{16})$/);
if (at) room(at[1]);
else lobby().catch((error) => lobbySay(error.message, true));
