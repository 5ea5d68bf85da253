// What is said aloud (the live region: dice, keeps, scores, whose turn) and the end of a game: the
// ranking by the variant's own keys, each game's totals, the settlement, and a rematch.

import {boxName} from "./card.js";
import {$, el} from "./dom.js";
import {t} from "./i18n.js";
import {createAndGo} from "./lobby.js";

const HUMAN = "human";

/** Say `text` in the page's live region (screen readers read it when they are free). */
export function announce(text) {
  if (!text) return;
  const live = $("live");
  // the same words twice in a row are still read: the region is emptied first
  live.textContent = "";
  setTimeout(() => { live.textContent = text; }, 30);
}

/** An update's moves in words: who kept what, rolled what, scored which box for how much. */
export function describeUpdate(moves, s) {
  const g = s.game;
  const v = s.table.variant;
  const rolls = moves.filter((m) => m.move[0] === "roll");
  const lastRoll = rolls[rolls.length - 1];
  const parts = [];
  for (const entry of moves) {
    const who = (g.seats[entry.seat] || {}).name || t("lobby.seat", {n: entry.seat + 1});
    const [kind, arg] = entry.move;
    if (kind === "keep") {
      parts.push(arg.length ? t("say.keeps", {who, dice: arg.join(" ")}) : t("say.keepsNothing", {who}));
    } else if (kind === "roll" && entry === lastRoll && g.status === "playing") {
      parts.push(t("say.rolled", {who, dice: [...g.dice].sort((a, b) => a - b).join(" ")}));
    } else if (kind === "score") {
      const written = g.players[entry.seat] ? g.players[entry.seat].scores[arg] : null;
      const box = boxName(v, arg);
      parts.push(t("say.scored", {who, label: written === null || written === undefined ? box : `${box} ${written}`}));
    } else if (kind !== "roll") {
      parts.push(t("say.move", {who, label: entry.label}));
    }
  }
  return parts.join(" ");
}

function winnerLine(result) {
  return result.winners.length > 1
    ? t("end.tie", {names: result.winners.join(", ")})
    : t("end.winner", {name: result.winners[0]});
}

/** The end of the game in `box` (hidden while it runs); `s`: the room's state. */
export function drawResult(box, s) {
  const result = s.game.result;
  const wasHidden = box.hidden;
  box.hidden = !result;
  if (!result) return;
  const names = s.game.players.map((p) => p.name);
  const ranking = el("table", {id: "ranking"},
    el("caption", {}, t("end.ranking")),
    el("thead", {}, el("tr", {}, el("th", {scope: "col"}, t("end.place")), el("th", {scope: "col"}, t("end.player")),
      ...result.rank_by.map((k) => el("th", {scope: "col"}, k)))),
    el("tbody", {}, ...result.ranking.map((r) => el("tr", {class: r.place === 1 ? "first" : null},
      el("td", {}, String(r.place)), el("th", {scope: "row"}, r.name), ...r.keys.map((k) => el("td", {}, String(k)))))));
  const parts = [el("h2", {class: "winner", tabindex: "-1"}, winnerLine(result))];
  const last = [...document.querySelectorAll("#log li")].pop();
  if (last) parts.push(el("p", {class: "last-move"}, t("end.last", {move: last.textContent.trim()})));
  parts.push(ranking);
  if (result.games.length > 1) {
    parts.push(el("table", {class: "games"}, el("caption", {}, t("end.games")),
      el("thead", {}, el("tr", {}, el("th", {scope: "col"}, "#"), ...names.map((n) => el("th", {scope: "col"}, n)))),
      el("tbody", {}, ...result.games.map((totals, k) => el("tr", {}, el("th", {scope: "row"}, String(k + 1)),
        ...totals.map((x) => el("td", {}, String(x))))))));
  }
  if (result.settlement) {
    parts.push(el("table", {class: "settlement"}, el("caption", {}, t("end.settlement")),
      el("tbody", {}, ...Object.entries(result.settlement).map(([name, amount]) => el("tr", {},
        el("th", {scope: "row"}, name),
        el("td", {class: amount > 0 ? "plus" : amount < 0 ? "minus" : null}, `${amount > 0 ? "+" : ""}${amount}`))))));
  }
  const rematch = el("button", {type: "button", id: "rematch", onclick: () => startRematch(s, rematch)}, t("end.rematch"));
  const reviewLink = s.table.reviewable ? el("a", {href: `/t/${s.code}/review${s.mine.length ? `?seat=${s.mine[0]}` : ""}`,
    class: "button", id: "review-link"}, t(s.mine.length ? "end.review" : "end.reviewAll")) : null;
  parts.push(el("div", {class: "end-actions"}, s.mine.length ? rematch : null, reviewLink,
    el("a", {href: "/", class: "button"}, t("end.newTable"))), el("p", {id: "rematch-message", role: "status"}));
  box.replaceChildren(...parts);
  if (wasHidden) {
    announce(t("say.over", {winner: winnerLine(result)}));
    box.querySelector(".winner").focus();
  }
}

/** A new table like this one: the same variant, options, pace and timer; my seats mine again, bots again,
 * other people's seats open for them to take by the new link. */
async function startRematch(s, button) {
  const seats = s.game.seats.map((seat) => {
    if (s.mine.includes(seat.seat)) return {player: HUMAN, name: seat.name, mine: true};
    if (seat.player === HUMAN) return {player: HUMAN};
    return {player: seat.player, name: seat.name};
  });
  button.disabled = true;
  try {
    await createAndGo({variant: s.table.variant.id, options: s.table.options, seats,
      turn_seconds: s.table.turn_seconds, bot_delay: s.table.bot_delay});
  } catch (error) {
    $("rematch-message").textContent = error.message;
    button.disabled = false;
  }
}
