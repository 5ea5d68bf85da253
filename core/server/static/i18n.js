// Every text the page shows, in one table of English (the messages of the gettext catalogs the command line
// uses too: `N_` and `NP_` mark them for Babel), and `t(key, params)` to read it in the page's language.
// Another language's table is built from its catalog, which the server sends (`/api/messages/LANG`); a key
// it lacks falls back to English; `{name}` is a parameter.

export const messages = {};

/** The languages the page speaks, each named in itself (those of the command line: dicecup.locales). */
export const LANGUAGES = {en: "English", ru: "Русский", de: "Deutsch", es: "Español", sv: "Svenska"};

const N_ = (text) => text; // a message, as written in English
const NP_ = (one, many) => [one, many]; // a message with a count `{n}`: its singular and plural

messages.en = {
  "app.title": N_("dicecup"),
  "app.skip": N_("Skip to the game"),
  "app.language": N_("Language"),
  "status.connecting": N_("connecting…"),
  "status.lost": N_("connection lost: reconnecting…"),
  "status.watching": N_("watching"),
  "status.clock": N_("{seconds} s left for this turn"),

  "lobby.new": N_("New table"),
  "lobby.variant": N_("Variant"),
  "lobby.options": N_("Options"),
  "lobby.seats": N_("Seats"),
  "lobby.you": N_("You"),
  "lobby.yourName": N_("Your name"),
  "lobby.defaultName": N_("you"),
  "lobby.seat": N_("Seat {n}"),
  "lobby.seatKind": N_("Who plays seat {n}"),
  "lobby.seatName": N_("Name for seat {n}"),
  "lobby.seatArg": N_("{arg} for seat {n}"),
  "lobby.nameOptional": N_("name (optional)"),
  "lobby.arg.THETA": N_("Taste for risk (θ)"),
  "lobby.arg.T": N_("Target score"),
  "lobby.invite": N_("a friend (joins by the link)"),
  "lobby.hotseat": N_("someone at this device"),
  "lobby.bot": N_("bot: {name}"),
  "lobby.remove": N_("Remove"),
  "lobby.removeSeat": N_("Remove seat {n}"),
  "lobby.addSeat": N_("Add a seat"),
  "lobby.pace": N_("Bots' pace"),
  "lobby.pace.slow": N_("slow (1.5 s a move)"),
  "lobby.pace.normal": N_("normal (the server's)"),
  "lobby.pace.fast": N_("fast (0.3 s a move)"),
  "lobby.pace.instant": N_("at once"),
  "lobby.timer": N_("Turn timer"),
  "lobby.timer.none": N_("none"),
  "lobby.timer.seconds": N_("{n} s a turn"),
  "lobby.timer.minutes": N_("{n} min a turn"),
  "lobby.create": N_("Create the table"),
  "lobby.creating": N_("Creating the table…"),
  "lobby.join": N_("Join a table"),
  "lobby.joinCode": N_("Link or code"),
  "lobby.joinPlaceholder": N_("https://…/t/… or the code"),
  "lobby.joinButton": N_("Join"),
  "lobby.badCode": N_("A table's code is the 16 letters and digits after /t/ in its link."),
  "lobby.player": N_("player {n}"),
  "train.link": N_("Trainer"),
  "train.title": N_("Trainer"),
  "train.next": N_("Next drill"),
  "train.dailyButton": N_("Today's puzzle"),
  "train.loading": N_("Finding a position…"),
  "train.drill": N_("Drill {n}"),
  "train.daily": N_("Today's puzzle ({day})"),
  "train.dice": N_("dice {dice}"),
  "train.keys": N_("Tap the dice to keep, then roll the others, or tap a box to score it. Keys: 1–9 keep a die, R rolls, N next drill."),
  "train.best": N_("Best move: {move} (expected final score {value})."),
  "train.lost": N_("{move} gives up {loss} points; best was {best} (expected {value})."),
  "train.options": N_("The best options:"),
  "train.none": N_("no move graded yet"),
  "train.tally": NP_("{best} of {n} move best ({share}%); {move} points lost a move, about {game} a game in real play",
    "{best} of {n} moves best ({share}%); {move} points lost a move, about {game} a game in real play"),
  "train.session": N_("This session: {line}"),
  "train.all": N_("All sessions in this browser: {line}"),
  "mine.title": N_("Your games"),
  "mine.waiting": N_("waiting for players"),
  "mine.playing": N_("being played"),
  "mine.over": N_("finished"),
  "bot.greedy": N_("greedy: the best points now"),
  "bot.random": N_("random: any legal move"),
  "bot.optimal": N_("optimal: the highest expected score"),
  "bot.strong": N_("strong: each part of the card solved"),
  "bot.risk": N_("risk: bold or careful"),
  "bot.target": N_("target: reach a score"),
  "bot.win": N_("win: the best chance of finishing first"),

  "room.invite": N_("Invite others with this link:"),
  "room.copy": N_("Copy"),
  "room.copied": N_("Copied."),
  "room.players": N_("Players"),
  "room.openSeat": N_("(open seat)"),
  "room.you": N_("you"),
  "room.handoff": N_("play this seat on another device"),
  "room.takeName": N_("Your name"),
  "room.take": N_("Take this seat"),
  "room.waiting": N_("The game starts when every seat is taken."),
  "room.gameOver": N_("Game over"),
  "room.yourTurn": N_("Your turn, {name}"),
  "room.theirTurn": N_("{name} to play"),
  "room.rollsLeft": NP_("{n} roll left", "{n} rolls left"),
  "room.noRolls": N_("no rolls left: choose a box"),
  "room.gameOf": N_("game {n} of {of}"),
  "room.dice": N_("Dice"),
  "room.die": N_("Die {n}: {face}"),
  "room.dieKept": N_("Die {n}: {face}, kept"),
  "room.die.colour": N_("{face} {colour}"),
  "room.roll": NP_("Roll {n} die", "Roll {n} dice"),
  "room.rollAll": N_("Roll all the dice"),
  "room.keyHelp": N_("Keys: 1–{n} keep a die, R rolls, then Tab to a box and Enter scores it."),
  "room.rules": N_("Moves the rules offer"),
  "room.hint": N_("Hint"),
  "room.hintIs": N_("Hint ({bot}): {label}"),
  "room.keyHelpHint": N_("H asks for a hint."),
  "room.keyHelpUndo": N_("U takes back your last score."),
  "room.undo": N_("Undo: {move}"),
  "room.undoSeen": N_("The dice to come have been seen: no reroll now, score a box."),
  "room.log": N_("What happened"),
  "room.save": N_("Download the game"),
  "room.saveFor": N_("(for dicecup review or dicecup resume)"),
  "room.thinking": N_("…"),
  "room.card": N_("Score card"),
  "room.cardOf": N_("Score card of {name}"),
  "room.columns": N_("Columns"),
  "room.box": N_("Box"),
  "room.total": N_("Total"),
  "room.columnTotal": N_("Column total"),
  "room.ruleGo": N_("Play"),
  "room.banked": N_("Banked rolls"),
  "room.scoreBox": N_("Score {box} for {points}"),
  "room.scoreBoxAs": N_("Score {box}: {written} ({points} points)"),
  "room.toMove": N_("to move"),

  "end.review": N_("Review your moves"),
  "end.reviewAll": N_("Review the moves"),
  "mine.review": N_("review"),

  "review.heading": N_("Review"),
  "review.title": N_("Review of {name}'s moves"),
  "review.back": N_("Back to the game"),
  "review.loading": N_("Reviewing the game against the best play…"),
  "review.preparing": N_("The best play of this game is being worked out (once for each variant): the review follows in a moment…"),
  "review.lost": N_("{points} expected points lost"),
  "review.optimal": N_("best moves: {n} of {of}"),
  "review.running": N_("The game is not over: reviewed up to its last move."),
  "review.caption": N_("Every decision of {name}, with the best move there"),
  "review.turn": N_("Turn"),
  "review.dice": N_("Dice"),
  "review.played": N_("Played"),
  "review.best": N_("Best"),
  "review.loss": N_("Lost"),
  "review.same": N_("the same"),
  "review.score": N_("{box}: {points}"),
  "review.keep": N_("keep {dice}"),
  "review.keepNothing": N_("reroll all"),
  "review.totalLost": N_("Expected points lost in all"),
  "review.help": N_("Lost: the expected final score of the best move minus that of the move played, both played the best way after; as if the player played alone, on their own card."),

  "end.winner": N_("Winner: {name}"),
  "end.tie": N_("Tie: {names}"),
  "end.ranking": N_("Final ranking"),
  "end.last": N_("The last move: {move}"),
  "end.place": N_("Place"),
  "end.player": N_("Player"),
  "end.settlement": N_("Settlement"),
  "end.games": N_("Games"),
  "end.rematch": N_("Rematch"),
  "end.newTable": N_("New table"),

  "say.rolled": N_("{who} rolled {dice}."),
  "say.keeps": N_("{who} keeps {dice}."),
  "say.keepsNothing": N_("{who} keeps nothing."),
  "say.scored": N_("{who}: {label}."),
  "say.move": N_("{who}: {label}."),
  "say.yourTurn": N_("Your turn, {name}."),
  "say.turn": N_("{name} to play."),
  "say.over": N_("Game over. {winner}"),
  "say.kept": N_("Die {n} kept."),
  "say.released": N_("Die {n} back to the roll."),
  "say.undone": N_("{who} took back: {label}. The dice are as they were."),

  // the server's refusals by their code (server.json's `error`), with its `params`
  "refused.malformed": N_("The server could not read what the page sent: reload the page."),
  "refused.too_large": N_("What the page sent is too long: at most {limit} bytes, it was {size}."),
  "refused.rate_limited": N_("Too many messages at once (at most {rate} a second): slow down."),
  "refused.unsupported_version": N_("The server speaks another version of the game (version {version}): reload the page."),
  "refused.unknown_table": N_("There is no such table: check its link or code."),
  "refused.bad_token": N_("A seat this page holds is not one of this table's: nothing was joined."),
  "refused.not_joined": N_("The page is not at the table yet: reload the page."),
  "refused.already_joined": N_("This connection is at a table already."),
  "refused.not_your_seat": N_("This device does not hold seat {seat}."),
  "refused.not_started": N_("The game starts when every seat is taken."),
  "refused.game_over": N_("The game is over."),
  "refused.not_your_turn": N_("It is {name}'s turn."),
  "refused.illegal_move": N_("The rules do not allow this move."),
  "refused.cannot_undo": N_("That cannot be taken back now."),
  "refused.bot_failed": N_("A bot at this table could not move."),
  "refused.unavailable": N_("The server's database did not answer: try again."),
  "refused.internal": N_("The server failed on this message (it is logged): try again."),
  // the HTTP API's refusals (http.json's `error`) that are not the WebSocket's
  "refused.not_found": N_("There is nothing at this address."),
  "refused.cross_site": N_("Another site's page may not do this."),
  "refused.unknown_variant": N_("This server offers no variant {variant}."),
  "refused.bad_options": N_("These options do not suit the variant: {detail}"),
  "refused.bad_name": N_("A name is 1 to {most} printable characters."),
  "refused.name_needed": N_("A seat you take needs a name."),
  "refused.name_repeated": N_("The name {name} is given to two seats: names must differ."),
  "refused.name_taken": N_("The name {name} is taken at this table: choose another."),
  "refused.bad_bot": N_("bot:{bot} cannot play this table: {detail}"),
  "refused.bot_needs_players": N_("bot:{bot} plays against others: give the table two seats or more."),
  "refused.too_many_tables": NP_(
    "You have {n} unfinished table (at most {most}): finish or leave one first.",
    "You have {n} unfinished tables (at most {most}): finish or leave one first.",
  ),
  "refused.no_such_seat": N_("This table has no seat {seat}: its seats are 0 to {last}."),
  "refused.seat_taken": N_("Seat {seat} is taken: watch the game, or take another seat."),
  "refused.unknown_token": N_("This device holds no seat at this table."),
  "refused.hint_off_turn": N_("A hint is given on your turn only."),
  "refused.beyond_solver": N_("The exact solver does not reach this variant, so it cannot grade moves here."),
  "refused.preparing": N_("bot:{bot} is getting ready for {variant} (the first time takes a minute or more): try again soon."),
  "refused.busy": N_("The server is busy: try again in a moment."),

  // the variants' options in the lobby: each option's name, and its choices (`choice.OPTION.VALUE`, else
  // `choice.VALUE`); an option or a value the table lacks is shown as the variant names it
  "option.joker": N_("Joker rule"),
  "option.straight": N_("Straight"),
  "option.served_bonus": N_("Bonus for a served roll"),
  "option.saved_rolls": N_("Saved rolls"),
  "option.upper_bonus": N_("Upper section bonus"),
  "option.bonus_at": N_("Stage bonus"),
  "option.chance": N_("Chance"),
  "option.settle_two": N_("Settlement of two players"),
  "option.stake": N_("Stake per point"),
  "choice.true": N_("yes"),
  "choice.false": N_("no"),
  "choice.none": N_("none"),
  "choice.joker.free": N_("free: any box"),
  "choice.joker.forced": N_("forced: the official rules"),
  "choice.joker.none": N_("no joker"),
  "choice.straight.ace_high": N_("the ace also ends a straight (3-4-5-6-1)"),
  "choice.straight.plain": N_("only 1-2-3-4-5 and 2-3-4-5-6"),
  "choice.saved_rolls.true": N_("unused rolls are saved for later turns"),
  "choice.saved_rolls.false": N_("3 rolls every turn"),
  "choice.upper_bonus.100": N_("100 points at 84 or more"),
  "choice.upper_bonus.50": N_("50 points at 75 or more"),
  "choice.bonus_at.positive": N_("when the stage's total is above zero"),
  "choice.bonus_at.nonnegative": N_("when the stage's total is zero or more"),
  "choice.chance.none_of_the_above": N_("only a roll that meets no other box"),
  "choice.chance.any": N_("any roll"),
  "choice.settle_two.difference": N_("the loser pays the difference"),
  "choice.settle_two.fixed": N_("a fixed stake"),
};

let lang = "en";
let pluralIndex = (n) => (n === 1 ? 0 : 1);

/** The language to speak: the one chosen on this page before, else the browser's first the page speaks. */
export function preferredLanguage() {
  const chosen = localStorage.getItem("dicecup.lang");
  if (chosen && chosen in LANGUAGES) return chosen;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const code = tag.toLowerCase().split("-")[0];
    if (code in LANGUAGES) return code;
  }
  return "en";
}

/** Speak `code`: its catalog fetched from the server and made into a table of the page's keys. */
export async function loadLanguage(code) {
  if (code !== "en" && code in LANGUAGES && !messages[code]) {
    const answer = await fetch(`/api/messages/${code}`);
    if (answer.ok) {
      const catalog = await answer.json();
      const table = {};
      for (const [key, english] of Object.entries(messages.en)) {
        const said = catalog.messages[Array.isArray(english) ? english[0] : english];
        if (said !== undefined) table[key] = said;
      }
      messages[code] = table;
      messages[code][PLURAL] = catalog.plural;
    }
  }
  setLanguage(code);
}

const PLURAL = Symbol("plural forms");

/** Pick the language (a table of `messages`), English when there is none for `code`. */
export function setLanguage(code) {
  lang = messages[code] ? code : "en";
  document.documentElement.lang = lang;
  const forms = messages[lang][PLURAL];
  if (forms) {
    const rules = new Intl.PluralRules(lang);
    pluralIndex = (n) => forms[rules.select(n)] ?? forms.other ?? 0;
  } else {
    pluralIndex = (n) => (n === 1 ? 0 : 1);
  }
}

/** The page's language. */
export function language() {
  return lang;
}

/** The text for `key` in the page's language, its `{name}` parameters filled from `params` (a message with a
 * count picks its form for `params.n`). */
export function t(key, params = {}) {
  let text = (messages[lang] && messages[lang][key]) ?? messages.en[key] ?? key;
  if (Array.isArray(text)) {
    const english = messages.en[key];
    text = messages[lang] && messages[lang][key] ? text[pluralIndex(params.n)] ?? text[text.length - 1]
      : english[params.n === 1 ? 0 : 1];
  }
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

/** A refusal of the server (an `error` message) in the page's language: said by its code, with the server's
 * `params`; the server's own (English) words where the page speaks English or knows no such code. */
export function refusal(message) {
  const key = `refused.${message.code}`;
  return lang === "en" || !(key in messages.en) ? message.message : t(key, message.params || {});
}

/** A variant option's name, and a choice of it, in the page's language (as the variant names them when the
 * table has no words for them). */
export function optionName(name) {
  const key = `option.${name}`;
  if (key in messages.en) return t(key);
  const words = name.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function choiceName(option, value) {
  for (const key of [`choice.${option}.${value}`, `choice.${value}`]) if (key in messages.en) return t(key);
  return String(value);
}

/** A variant's view (`/api/variants`, a table's `variant`) with its names in the page's language, from the
 * variant's own translations: the variant, its rows and boxes, columns, figures and bonuses. */
export function localVariant(v) {
  const tr = v && v.translations && v.translations[lang];
  if (!tr) return v;
  const col = (id) => (tr.columns && tr.columns[id]) || ((v.columns || []).find((c) => c.id === id) || {}).name || id;
  const row = (id, name) => (tr.boxes && tr.boxes[id]) || name;
  return {
    ...v,
    name: tr.name || v.name,
    description: tr.description || v.description,
    rows: v.rows && v.rows.map((r) => ({...r, name: row(r.id, r.name)})),
    boxes: v.boxes && v.boxes.map((b) => ({...b, name: row(b.row || b.id, b.name)})),
    columns: Array.isArray(v.columns) ? v.columns.map((c) => ({...c, name: col(c.id)})) : v.columns,
    figures: v.figures && Object.fromEntries(Object.entries(v.figures).map(([id, name]) => [id, (tr.figures && tr.figures[id]) || name])),
  };
}

/** A bonus line's name in the page's language (`x1.upper_bonus`: the bonus of a column, named with it). */
export function bonusName(v, id, name) {
  const tr = v && v.translations && v.translations[lang];
  if (!tr || !tr.bonuses) return name;
  const [column, base] = id.includes(".") ? id.split(".", 2) : [null, id];
  const said = tr.bonuses[base];
  if (!said) return name;
  return column ? `${said} (${(tr.columns && tr.columns[column]) || column})` : said;
}


/** Fill every element marked `data-t` (text), `data-t-label` (aria-label) or `data-t-placeholder`. */
export function translatePage(root = document) {
  for (const node of root.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
  for (const node of root.querySelectorAll("[data-t-label]")) node.setAttribute("aria-label", t(node.dataset.tLabel));
  for (const node of root.querySelectorAll("[data-t-placeholder]")) node.placeholder = t(node.dataset.tPlaceholder);
}
