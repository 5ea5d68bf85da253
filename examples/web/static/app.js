"use strict";
// The page of the dicecup web game. It holds no rules: it draws what the server sends (the engine's
// state and its answers: legal boxes with what they score, rule actions, progress in the rules' own
// words) and sends every click back as a move; a move the engine refuses comes back with its message.

const $ = (id) => document.getElementById(id);
let catalogue = [];
let game = null;
const kept = new Set(); // positions of the dice the player has picked to keep
let shown = []; // the dice as drawn: after a reroll the kept dice stay where they were
const held = new Set(); // positions of the dice kept at the last reroll (marked)

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  // 503: the server is still preparing the tables this game needs; it says so, and when to ask again
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(path, init);
    const data = await response.json();
    if (response.status === 503 && attempt < 120) {
      say(`${data.error} (asking again shortly)`);
      await new Promise((done) => setTimeout(done, 1000 * Number(response.headers.get("Retry-After") || 5)));
      continue;
    }
    if (!response.ok) throw new Error(data.error);
    return data;
  }
}

function say(text, isError = false) {
  $("message").textContent = text;
  $("message").className = isError ? "error" : "";
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

// ---------------------------------------------------------------------------- choosing a game

async function loadCatalogue() {
  catalogue = await api("/api/variants");
  const wanted = new URLSearchParams(location.search).get("variant");
  for (const v of catalogue) {
    $("variant").append(el("option", {value: v.id, selected: v.id === wanted}, `${v.name} (${v.id})`));
  }
  $("variant").addEventListener("change", pickVariant);
  pickVariant();
  $("start").disabled = false; // a game can be chosen now
  const id = new URLSearchParams(location.search).get("game");
  if (id) {
    try {
      game = await api(`/api/games/${encodeURIComponent(id)}`);
      showGame();
    } catch (error) {
      say(error.message, true);
    }
  }
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
  // the server prepares the tables bot:optimal, bot:strong and hints need when it starts: until they are
  // ready they are marked, and a game that needs them waits for them
  const best = v.bots.includes("greedy") ? "greedy" : v.bots[0];
  const preparing = new Set(v.preparing || []);
  $("bot").replaceChildren(...v.bots.map((b) => el("option", {value: b, selected: b === best},
    `bot:${b}${preparing.has(b) ? " (being prepared)" : ""}`)));
  $("hints").disabled = !v.hints;
  $("hints").checked = false;
  $("hint-source").textContent = ({
    exact: "(the exact solver's advice)", estimate: "(an estimate: the card's parts, each solved exactly)",
  }[v.hints] || "(none for this variant)") + (preparing.has("hints") ? " (being prepared)" : "");
}

async function startGame() {
  const v = chosenVariant();
  const options = {};
  for (const select of document.querySelectorAll("[data-option]")) {
    options[select.dataset.option] = JSON.parse(select.value);
  }
  const players = [{name: $("name").value.trim() || "you", kind: "human"}];
  const bot = $("bot").value;
  for (let i = 1; i <= Number($("opponents").value); i++) {
    players.push({name: i === 1 ? bot : `${bot} ${i}`, kind: bot});
  }
  const seed = $("seed").value === "" ? null : Number($("seed").value);
  $("start").disabled = true;
  say("Starting…");
  $("setup").append($("message"));
  try {
    game = await api("/api/games", {variant: v.id, options, players, seed, hints: $("hints").checked});
  } catch (error) {
    say(error.message, true);
    return;
  } finally {
    $("start").disabled = false;
  }
  say("");
  showGame();
}

function showGame() {
  // The address names the game, so a reload (or another tab) shows it again.
  history.replaceState(null, "", `?variant=${encodeURIComponent(game.variant.id)}&game=${game.id}`);
  $("table").insertBefore($("message"), $("advice"));
  $("setup").hidden = true;
  $("game").hidden = false;
  $("new-game").hidden = false;
  draw();
}

function newGame() {
  location.search = `?variant=${encodeURIComponent(game.variant.id)}`;
}

// ---------------------------------------------------------------------------- playing

async function play(move) {
  const before = {dice: shown, picked: [...kept], rollsLeft: game.rolls_left};
  $("advice").replaceChildren();
  say("…"); // the server plays the bots' turns before it answers
  try {
    game = await api(`/api/games/${game.id}/move`, {move});
    arrange(before, move);
    kept.clear();
    say("");
  } catch (error) {
    say(error.message, true); // the engine's own words; the game is as it was
  }
  draw();
}

function arrange(before, move) {
  // The server lists the kept dice first, then the new ones. After a reroll of this turn, draw the
  // kept dice where they were (the ones picked, or any showing the kept values) and the new ones around them.
  held.clear();
  const n = move[0] === "keep" ? move[1].length : 0;
  const sameTurn = n > 0 && game.your_turn && game.rolls_left === before.rollsLeft - 1;
  if (!sameTurn || game.dice.length !== before.dice.length) return;
  const want = [...move[1]];
  for (const i of [...before.picked, ...before.dice.keys()]) {
    const k = want.indexOf(before.dice[i]);
    if (k >= 0 && !held.has(i)) {
      want.splice(k, 1);
      held.add(i);
    }
  }
  const rolled = game.dice.slice(n);
  shown = before.dice.map((face, i) => (held.has(i) ? face : rolled.shift()));
}

function sorted(dice) {
  return [...dice].sort((a, b) => a - b).join();
}

async function showHint() {
  try {
    const hint = await api(`/api/games/${game.id}/hint`);
    const source = hint.source === "exact" ? "expected final score" : "estimated final score";
    $("advice").replaceChildren(
      el("div", {}, "Best: ", el("button", {class: "best", "data-move": JSON.stringify(hint.best.move),
        onclick: () => play(hint.best.move)}, hint.best.label)),
      el("ol", {}, ...hint.options.map((o) => el("li", {}, el("button", {"data-move": JSON.stringify(o.move),
        onclick: () => play(o.move)}, o.label), ` ${source} ${o.value.toFixed(1)}`))));
  } catch (error) {
    say(error.message, true);
  }
}

function dieColour(face) {
  // A face attribute naming a colour (Kismet's red, green and black dice) colours the die.
  for (const [name, values] of Object.entries(game.variant.attributes)) {
    const value = String(values[face - 1]);
    if (name.toLowerCase().includes("colo") && CSS.supports("color", value)) return value;
  }
  return null;
}

function draw() {
  const v = game.variant;
  const who = game.players[game.current];
  $("title").textContent = v.name;
  const round = game.rounds > 1 ? ` · game ${game.round} of ${game.rounds}` : "";
  const banked = who.banked ? ` (${who.banked} banked)` : "";
  $("turn").textContent = game.over ? "Game over" :
    `${who.name} to play${round} · ${game.rolls_left} roll${game.rolls_left === 1 ? "" : "s"} left${banked}`;

  if (sorted(shown) !== sorted(game.dice)) {
    shown = game.dice; // a new turn (or another player's dice): as the server lists them
    held.clear();
  }
  $("dice").replaceChildren(...shown.map((face, i) => {
    const colour = dieColour(face);
    return el("button", {
      class: `die${kept.has(i) ? " kept" : ""}${held.has(i) ? " held" : ""}`, "data-die": i,
      title: held.has(i) ? "kept at the last roll; click to keep again" : "click to keep or release",
      style: colour ? `color: ${colour}` : null, disabled: !game.your_turn,
      onclick: () => { kept.has(i) ? kept.delete(i) : kept.add(i); draw(); },
    }, String(face));
  }));
  $("dice").hidden = game.over;
  $("controls").hidden = !game.your_turn;
  $("keep").title = game.may_reroll ? "" : "the engine will say why not";
  $("keep").className = game.may_reroll ? "" : "dim";
  $("actions").replaceChildren(...ruleActions());
  $("hint").hidden = !game.hints;
  $("notes").replaceChildren(...[...game.status, ...game.progress].map((line) => el("li", {}, line)));
  $("cards").replaceChildren(...(v.columns.length > 1 ? game.players.map((p, i) => columnCard(i)) : [playerCard()]));
  $("log").replaceChildren(...game.log.map((line) => el("li", {}, line)));
  $("log").scrollTop = $("log").scrollHeight;
  drawResult();
}

function ruleActions() {
  // The moves the variant's rules add (Yamb's announcements): a button each, or a list and one button
  // for a verb offered many times.
  const verbs = Map.groupBy(game.rule_actions, (a) => a.move[2]);
  return [...verbs].map(([verb, actions]) => {
    if (actions.length <= 3) {
      return el("span", {}, ...actions.map((a) => el("button", {"data-move": JSON.stringify(a.move),
        onclick: () => play(a.move)}, a.label)));
    }
    const list = el("select", {"data-verb": verb}, ...actions.map((a) =>
      el("option", {value: JSON.stringify(a.move)}, a.label.slice(verb.length + 1))));
    return el("span", {}, list, el("button", {"data-verb": verb,
      onclick: () => play(JSON.parse(list.value))}, verb));
  });
}

function boxCell(player, box) {
  // A box of a card: its score once filled, else (on your turn) what it would score now.
  // Every box of the player to move can be clicked: the engine decides, and says why not.
  const card = game.players[player];
  const mine = game.your_turn && player === game.current;
  const written = card.scores[box];
  if (written !== null && written !== undefined) {
    return el("td", {class: mine ? "filled mine" : "filled", "data-box": box, "data-player": player,
      onclick: mine ? () => play(["score", box]) : null}, String(written));
  }
  if (!mine) return el("td", {"data-box": box, "data-player": player});
  const preview = game.previews[box];
  const cls = preview ? `open legal${preview.points > 0 ? "" : " zero"}` : "open";
  return el("td", {class: cls, "data-box": box, "data-player": player, onclick: () => play(["score", box])},
    preview ? String(preview.written) : "");
}

function bonusRows(players, cells) {
  // The bonus lines of the cards (earned points, or progress such as 42/63), one per bonus id.
  const ids = [...new Set(players.flatMap((p) => p.bonuses.map((b) => b.id)))];
  return ids.map((id) => {
    const name = players.flatMap((p) => p.bonuses).find((b) => b.id === id).name;
    return el("tr", {}, el("th", {class: "row"}, name), ...cells(id));
  });
}

function playerCard() {
  // One column of boxes: the players side by side.
  const v = game.variant;
  const head = el("tr", {}, el("th", {}, ""), ...game.players.map((p, i) =>
    el("th", {}, i === game.current && !game.over ? `▶ ${p.name}` : p.name)));
  const rows = v.boxes.map((b, k) => el("tr", {class: k > 0 && v.boxes[k - 1].section !== b.section ? "section" : null},
    el("th", {class: "row"}, b.name), ...game.players.map((_, i) => boxCell(i, b.id))));
  const bonuses = bonusRows(game.players, (id) => game.players.map((p) =>
    el("td", {class: "bonus"}, (p.bonuses.find((b) => b.id === id) || {text: ""}).text)));
  const figures = Object.keys(game.players[0].figures || {}).filter((f) => f !== "score").map((f) =>
    el("tr", {class: "total"}, el("th", {class: "row"}, v.figures[f]), ...game.players.map((p) => el("td", {}, String(p.figures[f])))));
  const total = el("tr", {class: "total"}, el("th", {class: "row"}, "Total"),
    ...game.players.map((p) => el("td", {"data-total": p.name}, String(p.total))));
  return el("table", {class: "card current"}, el("thead", {}, head), el("tbody", {}, ...rows, ...bonuses, ...figures, total));
}

function columnHead(c) {
  // the fill order: an arrow for down and up, the order's name when the column's name does not say it
  const name = c.name.toLowerCase();
  const said = c.order === "any" || c.order.startsWith(name) || name.startsWith(c.order);
  const arrow = {down: " ↓", up: " ↑"}[c.order] || (said ? "" : ` (${c.order})`);
  const times = c.multiplier !== 1 && !c.name.includes(`x${c.multiplier}`) ? ` ×${c.multiplier}` : "";
  return `${c.name}${times}${arrow}`;
}

function columnCard(player) {
  // One player's card as rows × columns (Triple Yahtzee, Yamb, Balut).
  const v = game.variant;
  const p = game.players[player];
  const caption = `${player === game.current && !game.over ? "▶ " : ""}${p.name}: ${p.total}`;
  const head = el("tr", {}, el("th", {}, ""), ...v.columns.map((c) => el("th", {}, columnHead(c))));
  const rows = v.rows.map((r, k) => el("tr", {class: k > 0 && v.rows[k - 1].section !== r.section ? "section" : null},
    el("th", {class: "row"}, r.name), ...v.columns.map((c) => boxCell(player, `${c.id}.${r.id}`))));
  // A bonus of one column (`x2.upper_bonus`) sits in its column; a bonus of the whole card in the last one.
  const perColumn = new Map();
  const whole = [];
  for (const b of p.bonuses) {
    const [col, short] = b.id.split(".");
    if (short && v.columns.some((c) => c.id === col)) {
      if (!perColumn.has(short)) perColumn.set(short, {name: b.name.replace(/ \(.*\)$/, ""), cells: {}});
      perColumn.get(short).cells[col] = b.text;
    } else whole.push(b);
  }
  const across = v.columns.length; // a line of the whole card fills the width of its columns
  const bonusLines = [
    ...[...perColumn.values()].map((b) => el("tr", {}, el("th", {class: "row"}, b.name),
      ...v.columns.map((c) => el("td", {class: "bonus"}, b.cells[c.id] || "")))),
    ...whole.map((b) => el("tr", {}, el("th", {class: "row"}, b.name),
      el("td", {class: "bonus", colspan: across}, b.text))),
  ];
  const columnTotals = el("tr", {class: "total"}, el("th", {class: "row"}, "Column total"),
    ...v.columns.map((c) => el("td", {}, String(p.columns[c.id]))));
  const figures = Object.entries(p.figures || {}).filter(([f]) => f !== "score").map(([f, n]) =>
    el("tr", {class: "total"}, el("th", {class: "row"}, v.figures[f]), el("td", {colspan: across}, String(n))));
  const total = el("tr", {class: "total"}, el("th", {class: "row"}, "Total"),
    el("td", {colspan: across, "data-total": p.name}, String(p.total)));
  return el("table", {class: player === game.current && !game.over ? "card current" : "card"},
    el("caption", {}, caption), el("thead", {}, head),
    el("tbody", {}, ...rows, ...bonusLines, columnTotals, ...figures, total));
}

function drawResult() {
  const result = game.result;
  $("result").hidden = !result;
  if (!result) return;
  const settle = result.settlement;
  const head = el("tr", {}, el("th", {}, "place"), el("th", {}, "player"),
    ...result.rank_by.map((k) => el("th", {}, k)), settle ? el("th", {}, "settlement") : null);
  const rows = result.ranking.map((r) => el("tr", {}, el("td", {}, String(r.place)), el("td", {}, r.name),
    ...r.keys.map((k) => el("td", {}, String(k))),
    settle ? el("td", {class: settle[r.name] > 0 ? "plus" : settle[r.name] < 0 ? "minus" : null},
      (settle[r.name] > 0 ? "+" : "") + (Math.round(settle[r.name] * 100) / 100)) : null));
  const games = result.games.length > 1 ? el("p", {}, "Games: " + result.games.map((t, k) =>
    `${k + 1}: ${t.join(" – ")}`).join("; ")) : null;
  const winners = result.winners.length > 1 ? `Tie: ${result.winners.join(", ")}` : `Winner: ${result.winners[0]}`;
  $("result").replaceChildren(...[el("p", {class: "winner"}, winners), el("table", {id: "ranking"}, head, ...rows), games,
    el("button", {onclick: newGame}, "Play again")].filter(Boolean));
}

$("start").addEventListener("click", startGame);
$("keep").addEventListener("click", () => play(["keep", [...kept].map((i) => shown[i])]));
$("hint").addEventListener("click", showHint);
$("new-game").addEventListener("click", newGame);
loadCatalogue().catch((error) => say(error.message, true));
