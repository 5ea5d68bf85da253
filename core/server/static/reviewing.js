// A table's game reviewed move by move (/t/CODE/review?seat=N): each decision of one player, the best move
// there and the expected points it cost, from the server's review (GET /api/tables/CODE/review, the exact
// solver's analysis, as `dicecup review` gives it). The page computes nothing: it lays the review out.

import {boxName} from "./card.js";
import {$, api, el, tokens} from "./dom.js";
import {language, localVariant, t} from "./i18n.js";

export async function review(code) {
  $("review").hidden = false;
  $("review-back").href = `/t/${code}`;
  const asked = new URLSearchParams(location.search).get("seat");
  const mine = Object.keys(tokens(code)).map(Number).sort((a, b) => a - b);
  say(t("review.loading"));
  try {
    const view = await api(`/api/tables/${code}`);
    const variant = localVariant(view.table.variant);
    $("title").textContent = variant.name;
    const seats = view.game.seats;
    const seat = /^\d+$/.test(asked || "") && Number(asked) < seats.length ? Number(asked) : (mine[0] ?? 0);
    const got = await reviewed(code);
    say("");
    drawPicker(code, got, seat, mine);
    drawReview(got, variant, seat);
  } catch (error) {
    say(error.message, true);
  }
}

const RETRY_SECONDS = 5;
const RETRIES = 60; // the solver's table of a large variant is prepared once: minutes at most

/** The review, asked again while the server prepares the solver's table (503), saying so meanwhile. */
async function reviewed(code) {
  for (let tries = 1; ; tries += 1) {
    try {
      return await api(`/api/tables/${code}/review`);
    } catch (error) {
      if (error.status !== 503 || tries >= RETRIES) throw error;
      say(t("review.preparing"));
      await new Promise((done) => { setTimeout(done, RETRY_SECONDS * 1000); });
    }
  }
}

function say(text, isError = false) {
  $("review-message").textContent = text;
  $("review-message").className = isError ? "error" : "";
}

/** The players to review: one link each (the page's own seats marked), the one shown current. */
function drawPicker(code, got, seat, mine) {
  $("review-players").hidden = got.players.length < 2;
  $("review-players").replaceChildren(...got.players.map((p, i) => el("li", {},
    el("a", {href: `/t/${code}/review?seat=${i}`, "aria-current": i === seat ? "page" : null},
      mine.includes(i) ? `${p.name} (${t("room.you")})` : p.name))));
}

function number(value, digits = 2) {
  return new Intl.NumberFormat(language(), {minimumFractionDigits: digits, maximumFractionDigits: digits}).format(value);
}

/** A reviewed move in words, the variant's box names in the page's language. */
function moveText(option, v) {
  if (option.action === "score") return t("review.score", {box: boxName(v, option.box), points: option.points});
  return option.keep.length ? t("review.keep", {dice: option.keep.join(" ")}) : t("review.keepNothing");
}

function drawReview(got, v, seat) {
  const player = got.players[seat];
  const moves = got.decisions.filter((d) => d.seat === seat);
  $("review-heading").textContent = t("review.title", {name: player.name});
  $("review-summary").textContent = [
    t("review.lost", {points: number(player.total_loss)}),
    t("review.optimal", {n: player.optimal, of: player.decisions}),
    t("review.score", {box: t("room.total"), points: player.score}),
  ].join(" · ");
  $("review-notes").replaceChildren(...[got.over ? null : t("review.running"), ...got.notes]
    .filter(Boolean).map((line) => el("li", {}, line)));
  const rounds = moves.some((d) => d.round > 1);
  const head = [t("review.turn"), t("review.dice"), t("review.played"), t("review.best"), t("review.loss")];
  const rows = moves.map((d) => {
    const costly = d.loss > 0;
    return el("tr", {class: costly ? "costly" : null},
      el("th", {scope: "row"}, rounds ? `${d.round}.${d.turn}` : String(d.turn)),
      el("td", {class: "dice"}, d.dice.join(" ")),
      el("td", {}, moveText(d.played, v)),
      el("td", {}, costly ? moveText(d.best, v) : t("review.same")),
      el("td", {class: "loss"}, costly ? `−${number(d.loss)}` : "0"));
  });
  $("review-table").replaceChildren(
    el("caption", {}, t("review.caption", {name: player.name})),
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {scope: "col"}, h)))),
    el("tbody", {}, ...rows),
    el("tfoot", {}, el("tr", {}, el("th", {scope: "row", colspan: "4"}, t("review.totalLost")),
      el("td", {class: "loss"}, number(player.total_loss)))));
  $("review-body").hidden = false;
  $("review-heading").focus();
}
