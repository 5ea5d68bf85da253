// The lobby: a new table (variant, options, seats of people and bots, the bots' pace, a turn timer), or
// a table joined by its link or code. Everything offered comes from GET /api/variants.

import {$, api, el, forgetTable, keepToken, myTables, tokens} from "./dom.js";
import {choiceName, localVariant, optionName, t} from "./i18n.js";

const HUMAN = "human";
const ARGUMENT_DEFAULTS = {THETA: "0.05", T: "200"}; // a bot's parameter, as its usage names it
let catalogue = [];

export async function lobby() {
  $("lobby").hidden = false;
  $("create").addEventListener("click", createTable);
  $("add-seat").addEventListener("click", () => addSeat("bot:greedy"));
  $("join").addEventListener("click", joinByCode);
  $("join-code").addEventListener("keydown", (event) => { if (event.key === "Enter") joinByCode(); });
  $("name").value = t("lobby.defaultName");
  fillPace();
  catalogue = (await api("/api/variants")).map(localVariant);
  const wanted = new URLSearchParams(location.search).get("variant");
  $("variant").replaceChildren(...catalogue.map((v) => el("option", {value: v.id, selected: v.id === wanted}, v.name)));
  $("variant").addEventListener("change", pickVariant);
  pickVariant();
  addSeat("bot:greedy");
  $("create").disabled = false;
  listMyTables();
}

const LISTED = 8;

/** The tables this browser plays at (its seats' tokens are kept here): each one's game now, and its link. */
async function listMyTables() {
  const codes = myTables().slice(0, LISTED);
  const found = await Promise.all(codes.map(async (code) => {
    try {
      return {code, view: await api(`/api/tables/${code}`)};
    } catch (error) {
      if (error.code === "unknown_table") forgetTable(code);
      return null;
    }
  }));
  const rows = found.filter(Boolean).map(({code, view}) => {
    const g = view.game;
    const mine = Object.keys(tokens(code)).map(Number);
    const scores = g.players.map((p, i) => `${p.name}${mine.includes(i) ? ` (${t("room.you")})` : ""} ${p.total}`);
    const status = t(`mine.${g.status}`);
    const name = localVariant(view.table.variant).name;
    const reviewed = g.status === "over" && view.table.reviewable
      ? el("a", {href: `/t/${code}/review${mine.length ? `?seat=${mine[0]}` : ""}`, class: "review",
        "aria-label": `${t("mine.review")}: ${name}`}, t("mine.review")) : null;
    return el("li", {}, el("a", {href: `/t/${code}`}, name),
      el("span", {class: "status"}, status), reviewed, el("span", {class: "scores"}, scores.join(" · ")));
  });
  $("my-tables").replaceChildren(...rows);
  $("mine").hidden = rows.length === 0;
}

function fillPace() {
  const paces = [["normal", ""], ["slow", "1.5"], ["fast", "0.3"], ["instant", "0"]];
  $("pace").replaceChildren(...paces.map(([key, value]) => el("option", {value}, t(`lobby.pace.${key}`))));
  const timers = [["", t("lobby.timer.none")], ["30", t("lobby.timer.seconds", {n: 30})],
    ["60", t("lobby.timer.minutes", {n: 1})], ["180", t("lobby.timer.minutes", {n: 3})]];
  $("timer").replaceChildren(...timers.map(([value, text]) => el("option", {value}, text)));
}

function chosenVariant() {
  return catalogue.find((v) => v.id === $("variant").value);
}

function pickVariant() {
  const v = chosenVariant();
  $("description").textContent = v.description;
  $("options").replaceChildren(...v.options.map((o, i) => el("div", {class: "field"},
    el("label", {for: `option-${i}`}, optionName(o.name)),
    el("select", {id: `option-${i}`, "data-option": o.name}, ...o.choices.map((c) => el("option", {
      value: JSON.stringify(c), selected: c === o.default,
    }, choiceName(o.name, c)))))));
  $("options-box").hidden = v.options.length === 0;
  for (const row of document.querySelectorAll("#others li")) fillSeatChoices(row, row.querySelector("select").value);
}

function botLabel(bot) {
  const [name, arg] = bot.slice(4).split(":");
  const key = `bot.${name}`;
  const text = t(key);
  return (text === key ? name : text) + (arg ? ` (${arg})` : "");
}

function fillSeatChoices(row, wanted) {
  const v = chosenVariant();
  const select = row.querySelector("select");
  const choices = [["invite", t("lobby.invite")], ["hotseat", t("lobby.hotseat")],
    ...v.bots.map((b) => [b, t("lobby.bot", {name: botLabel(b)})])];
  const keep = choices.some(([value]) => value === wanted) ? wanted : "bot:greedy";
  select.replaceChildren(...choices.map(([value, text]) => el("option", {value, selected: value === keep}, text)));
  showArgument(row);
}

function showArgument(row) {
  // a bot with a parameter (bot:risk:THETA, bot:target:T) gets a field for it
  const kind = row.querySelector("select").value;
  const arg = kind.startsWith("bot:") ? kind.split(":")[2] : undefined;
  const field = row.querySelector(".seat-arg");
  field.hidden = !arg;
  if (arg) {
    const input = field.querySelector("input");
    if (field.dataset.arg !== arg) input.value = ARGUMENT_DEFAULTS[arg] || "";
    field.dataset.arg = arg;
    const key = `lobby.arg.${arg}`;
    const name = t(key) === key ? arg : t(key);
    field.querySelector(".arg-name").textContent = name;
    input.setAttribute("aria-label", t("lobby.seatArg", {arg: name, n: row.dataset.n}));
  }
}

function renumber() {
  const rows = [...document.querySelectorAll("#others li")];
  rows.forEach((row, i) => {
    const n = i + 2;
    row.dataset.n = n;
    row.querySelector(".seat-title").textContent = t("lobby.seat", {n});
    row.querySelector("select").setAttribute("aria-label", t("lobby.seatKind", {n}));
    row.querySelector(".seat-name").setAttribute("aria-label", t("lobby.seatName", {n}));
    row.querySelector(".remove").setAttribute("aria-label", t("lobby.removeSeat", {n}));
    showArgument(row);
  });
  const v = chosenVariant();
  $("add-seat").disabled = v !== undefined && rows.length + 1 >= v.seats;
}

function addSeat(kind) {
  const row = el("li", {class: "seat-row"},
    el("span", {class: "seat-title"}),
    el("select", {class: "seat-kind", onchange: () => showArgument(row)}),
    el("span", {class: "seat-arg", hidden: true}, el("span", {class: "arg-name", "aria-hidden": "true"}), el("input", {inputmode: "decimal", size: 6})),
    el("input", {class: "seat-name", placeholder: t("lobby.nameOptional"), maxlength: 64, autocomplete: "off"}),
    el("button", {type: "button", class: "remove", onclick: () => { row.remove(); renumber(); }}, t("lobby.remove")));
  $("others").append(row);
  fillSeatChoices(row, kind);
  renumber();
}

/** The seats as the lobby shows them, as POST /api/tables takes them. */
function seatSpecs() {
  const seats = [{player: HUMAN, name: $("name").value.trim() || t("lobby.defaultName"), mine: true}];
  for (const row of document.querySelectorAll("#others li")) {
    let kind = row.querySelector(".seat-kind").value;
    const name = row.querySelector(".seat-name").value.trim() || undefined;
    if (kind === "invite") seats.push({player: HUMAN, name});
    else if (kind === "hotseat") seats.push({player: HUMAN, name: name || t("lobby.player", {n: seats.length + 1}), mine: true});
    else {
      const arg = row.querySelector(".seat-arg");
      if (!arg.hidden) kind = `${kind.split(":").slice(0, 2).join(":")}:${arg.querySelector("input").value.trim()}`;
      seats.push({player: kind, name});
    }
  }
  return seats;
}

async function createTable() {
  const v = chosenVariant();
  const options = {};
  for (const select of document.querySelectorAll("[data-option]")) options[select.dataset.option] = JSON.parse(select.value);
  const timer = $("timer").value;
  const pace = $("pace").value;
  const body = {variant: v.id, options, seats: seatSpecs(), turn_seconds: timer ? Number(timer) : null};
  if (pace !== "") body.bot_delay = Number(pace);
  $("create").disabled = true;
  lobbySay(t("lobby.creating"));
  try {
    await createAndGo(body, (text) => lobbySay(text));
  } catch (error) {
    lobbySay(error.message, true);
    $("create").disabled = false;
  }
}

const PREPARE_RETRY_SECONDS = 5;
const PREPARE_RETRIES = 60; // a bot's tables for a large variant are prepared once: minutes at most

/** Create a table from a POST /api/tables body, keep the creator's tokens, and open it; while a bot's tables
 * are being prepared (`preparing`), say so and ask again. `waiting` is told each refusal's words. */
export async function createAndGo(body, waiting = () => {}) {
  let made;
  for (let tries = 1; ; tries += 1) {
    try {
      made = await api("/api/tables", body);
      break;
    } catch (error) {
      if (error.code !== "preparing" || tries >= PREPARE_RETRIES) throw error;
      waiting(error.message);
      await new Promise((done) => { setTimeout(done, PREPARE_RETRY_SECONDS * 1000); });
    }
  }
  for (const {seat, token} of made.tokens) keepToken(made.code, seat, token);
  location.href = made.link;
  return made;
}

function lobbySay(text, isError = false) {
  $("lobby-message").textContent = text;
  $("lobby-message").className = isError ? "error" : "";
}

function joinByCode() {
  const text = $("join-code").value.trim();
  const code = text.includes("/t/") ? text.split("/t/")[1].split(/[#?/]/)[0] : text;
  if (/^[A-Za-z0-9_-]{16}$/.test(code)) location.href = `/t/${code}`;
  else lobbySay(t("lobby.badCode"), true);
}
