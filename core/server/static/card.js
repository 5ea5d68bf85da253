// The score card, drawn from what the server sends: one column of boxes with a column per player, or (the
// column games: Triple Yahtzee, Yamb) one card per player with the variant's columns, shown as tabs on a
// narrow screen. Bonus lines, figures (Balut's points), banked rolls and totals come from the server too.
// On the player's turn every legal box is a button showing what it would write.

import {el} from "./dom.js";
import {bonusName, t} from "./i18n.js";

/** Draw every card into `container`. `view`: {table, game, mine, column, onScore(box), onColumn(i)}. */
export function drawCards(container, view) {
  const v = view.table.variant;
  const cards = v.columns.length > 1
    ? view.game.players.map((_, i) => columnCard(view, i))
    : [singleCard(view)];
  container.replaceChildren(...cards);
}

function deciding(view, player) {
  const g = view.game;
  return g.status === "playing" && g.to_move === player && g.current === player && view.mine.includes(player);
}

function boxName(v, id) {
  const box = v.boxes.find((b) => b.id === id);
  return box ? box.name : id;
}

function boxLabel(v, box) {
  if (v.columns.length <= 1) return box.name;
  const column = v.columns.find((c) => c.id === box.column);
  return `${box.name} (${column ? column.name : box.column})`;
}

/** One box of one player's card: as written, a button to score it (the player deciding), or empty. */
function boxCell(view, player, box, extra = "") {
  const g = view.game;
  const written = g.players[player].scores[box.id];
  const base = {"data-box": box.id, "data-player": player, class: extra || null};
  if (written !== null && written !== undefined) {
    return el("td", {...base, class: `filled ${extra}`.trim()}, String(written));
  }
  const preview = deciding(view, player) ? g.legal[box.id] : undefined;
  if (!preview) return el("td", {...base, class: `open ${extra}`.trim()});
  const label = String(preview.written) === String(preview.points)
    ? t("room.scoreBox", {box: boxLabel(view.table.variant, box), points: preview.points})
    : t("room.scoreBoxAs", {box: boxLabel(view.table.variant, box), written: preview.written, points: preview.points});
  return el("td", {...base, class: `legal ${extra}`.trim()},
    el("button", {type: "button", "aria-label": label,
      class: `score${preview.points > 0 ? "" : " zero"}${view.hint === box.id ? " hinted" : ""}`,
      "data-score": box.id, onclick: () => view.onScore(box.id)}, String(preview.written)));
}

function playerHead(view, i) {
  const g = view.game;
  const p = g.players[i];
  const moving = g.status === "playing" && g.current === i;
  return el("th", {scope: "col", class: moving ? "moving" : null, title: p.name},
    el("span", {class: "name"}, p.name), moving ? el("span", {class: "visually-hidden"}, ` (${t("room.toMove")})`) : null);
}

function sectionBreak(list, k) {
  return k > 0 && list[k - 1].section !== list[k].section ? "section" : null;
}

/** Rows under the boxes: bonus lines, figures, banked rolls, the total; `cells(i, kind)` per player. */
function footRows(view, players, cellsFor) {
  const g = view.game;
  const v = view.table.variant;
  const rows = [];
  const bonusIds = [...new Set(players.flatMap((i) => g.players[i].bonuses.map((b) => b.id)))];
  for (const id of bonusIds) {
    const name = bonusName(v, id, players.map((i) => g.players[i].bonuses.find((b) => b.id === id)).find(Boolean).name);
    rows.push(el("tr", {class: "bonus"}, el("th", {scope: "row"}, name),
      ...cellsFor((i) => (g.players[i].bonuses.find((b) => b.id === id) || {text: ""}).text)));
  }
  for (const [id, name] of Object.entries(v.figures)) {
    if (id === "score") continue;
    rows.push(el("tr", {class: "figure"}, el("th", {scope: "row"}, name),
      ...cellsFor((i) => String((g.players[i].figures || {})[id] ?? ""))));
  }
  if (v.carry_over) {
    rows.push(el("tr", {class: "banked"}, el("th", {scope: "row"}, t("room.banked")),
      ...cellsFor((i) => String(g.players[i].banked ?? 0))));
  }
  rows.push(el("tr", {class: "total"}, el("th", {scope: "row"}, t("room.total")),
    ...cellsFor((i) => String(g.players[i].total), (i) => ({"data-total": g.players[i].name}))));
  return rows;
}

function singleCard(view) {
  const g = view.game;
  const v = view.table.variant;
  const players = g.players.map((_, i) => i);
  const head = el("tr", {}, el("th", {scope: "col", class: "corner"}, t("room.box")), ...players.map((i) => playerHead(view, i)));
  const rows = v.boxes.map((b, k) => el("tr", {class: sectionBreak(v.boxes, k)},
    el("th", {scope: "row"}, b.name), ...players.map((i) => boxCell(view, i, b))));
  const cellsFor = (text, attrs = () => ({})) => players.map((i) => el("td", attrs(i), text(i)));
  return el("table", {class: `card players-${players.length}`, "aria-label": t("room.card")},
    el("thead", {}, head), el("tbody", {}, ...rows, ...footRows(view, players, cellsFor)));
}

function columnCard(view, player) {
  const g = view.game;
  const v = view.table.variant;
  const p = g.players[player];
  const shown = Math.min(view.column, v.columns.length - 1);
  const moving = g.status === "playing" && g.current === player;
  const off = (c) => (c === shown ? "" : "off");
  const legalIn = (column) => v.boxes.filter((b) => b.column === column.id && deciding(view, player) && g.legal[b.id]).length;
  const tabs = el("div", {class: "tabs", role: "tablist", "aria-label": t("room.columns")},
    ...v.columns.map((c, k) => el("button", {
      type: "button", role: "tab", "aria-selected": k === shown ? "true" : "false", tabindex: k === shown ? "0" : "-1",
      "data-column": k, onclick: () => view.onColumn(k), onkeydown: (event) => tabKeys(event, view, k, v.columns.length),
    }, c.name, legalIn(c) ? el("span", {class: "count"}, String(legalIn(c))) : null)));
  const head = el("tr", {}, el("th", {scope: "col", class: "corner"}, t("room.box")),
    ...v.columns.map((c, k) => el("th", {scope: "col", class: off(k) || null, title: c.name}, c.name)));
  const rows = v.rows.map((r, k) => el("tr", {class: sectionBreak(v.rows, k)}, el("th", {scope: "row"}, r.name),
    ...v.columns.map((c, n) => {
      const box = v.boxes.find((b) => b.row === r.id && b.column === c.id);
      return box ? boxCell(view, player, box, off(n)) : el("td", {class: `none ${off(n)}`.trim()});
    })));
  const colTotals = p.columns ? [el("tr", {class: "subtotal"}, el("th", {scope: "row"}, t("room.columnTotal")),
    ...v.columns.map((c, k) => el("td", {class: off(k) || null}, String(p.columns[c.id] ?? ""))))] : [];
  const one = (text, attrs = () => ({})) => [el("td", attrs(player), text(player))];
  return el("section", {class: `player-card${moving ? " moving" : ""}`, "aria-label": t("room.cardOf", {name: p.name})},
    el("h3", {}, el("span", {class: "name"}, p.name), el("span", {class: "sum"}, String(p.total)),
      moving ? el("span", {class: "visually-hidden"}, ` (${t("room.toMove")})`) : null),
    tabs,
    el("table", {class: "card columns"}, el("thead", {}, head), el("tbody", {}, ...rows, ...colTotals)),
    el("table", {class: "card foot"}, el("tbody", {}, ...footRows(view, [player], one))));
}

function tabKeys(event, view, k, count) {
  const step = {ArrowRight: 1, ArrowLeft: -1}[event.key];
  if (step === undefined) return;
  event.preventDefault();
  view.onColumn((k + step + count) % count, true);
}

export {boxName};
