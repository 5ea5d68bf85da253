// Every text the page shows, in one table per language, and `t(key, params)` to read it. Another language
// is one more table of the same keys (a key it lacks falls back to English); `{name}` is a parameter.

export const messages = {};

messages.en = {
  "app.title": "dicecup",
  "app.skip": "Skip to the game",
  "status.connecting": "connecting…",
  "status.lost": "connection lost: reconnecting…",
  "status.watching": "watching",
  "status.clock": "{seconds} s left for this turn",

  "lobby.new": "New table",
  "lobby.variant": "Variant",
  "lobby.options": "Options",
  "lobby.seats": "Seats",
  "lobby.you": "You",
  "lobby.yourName": "Your name",
  "lobby.defaultName": "you",
  "lobby.seat": "Seat {n}",
  "lobby.seatKind": "Who plays seat {n}",
  "lobby.seatName": "Name for seat {n}",
  "lobby.seatArg": "{arg} for seat {n}",
  "lobby.nameOptional": "name (optional)",
  "lobby.arg.THETA": "Taste for risk (θ)",
  "lobby.arg.T": "Target score",
  "lobby.invite": "a friend (joins by the link)",
  "lobby.hotseat": "someone at this device",
  "lobby.bot": "bot: {name}",
  "lobby.remove": "Remove",
  "lobby.removeSeat": "Remove seat {n}",
  "lobby.addSeat": "Add a seat",
  "lobby.pace": "Bots' pace",
  "lobby.pace.slow": "slow (1.5 s a move)",
  "lobby.pace.normal": "normal (the server's)",
  "lobby.pace.fast": "fast (0.3 s a move)",
  "lobby.pace.instant": "at once",
  "lobby.timer": "Turn timer",
  "lobby.timer.none": "none",
  "lobby.timer.seconds": "{n} s a turn",
  "lobby.timer.minutes": "{n} min a turn",
  "lobby.create": "Create the table",
  "lobby.creating": "Creating the table…",
  "lobby.join": "Join a table",
  "lobby.joinCode": "Link or code",
  "lobby.joinPlaceholder": "https://…/t/… or the code",
  "lobby.joinButton": "Join",
  "lobby.badCode": "A table's code is the 16 letters and digits after /t/ in its link.",
  "lobby.player": "player {n}",
  "mine.title": "Your games",
  "mine.waiting": "waiting for players",
  "mine.playing": "being played",
  "mine.over": "finished",
  "bot.greedy": "greedy: the best points now",
  "bot.random": "random: any legal move",
  "bot.optimal": "optimal: the highest expected score",
  "bot.strong": "strong: each part of the card solved",
  "bot.risk": "risk: bold or careful",
  "bot.target": "target: reach a score",
  "bot.win": "win: the best chance of finishing first",

  "room.invite": "Invite others with this link:",
  "room.copy": "Copy",
  "room.copied": "Copied.",
  "room.players": "Players",
  "room.openSeat": "(open seat)",
  "room.you": "you",
  "room.handoff": "play this seat on another device",
  "room.takeName": "Your name",
  "room.take": "Take this seat",
  "room.waiting": "The game starts when every seat is taken.",
  "room.gameOver": "Game over",
  "room.yourTurn": "Your turn, {name}",
  "room.theirTurn": "{name} to play",
  "room.rollsLeft": "{n} rolls left",
  "room.rollLeft": "1 roll left",
  "room.noRolls": "no rolls left: choose a box",
  "room.gameOf": "game {n} of {of}",
  "room.dice": "Dice",
  "room.die": "Die {n}: {face}",
  "room.dieKept": "Die {n}: {face}, kept",
  "room.die.colour": "{face} {colour}",
  "room.roll": "Roll {n} dice",
  "room.rollOne": "Roll 1 die",
  "room.rollAll": "Roll all the dice",
  "room.keyHelp": "Keys: 1–{n} keep a die, R rolls, then Tab to a box and Enter scores it.",
  "room.rules": "Moves the rules offer",
  "room.hint": "Hint",
  "room.hintIs": "Hint ({bot}): {label}",
  "room.keyHelpHint": "H asks for a hint.",
  "room.log": "What happened",
  "room.save": "Download the game",
  "room.saveFor": "(for dicecup review or dicecup resume)",
  "room.thinking": "…",
  "room.card": "Score card",
  "room.cardOf": "Score card of {name}",
  "room.columns": "Columns",
  "room.box": "Box",
  "room.total": "Total",
  "room.columnTotal": "Column total",
  "room.ruleGo": "Play",
  "room.banked": "Banked rolls",
  "room.scoreBox": "Score {box} for {points}",
  "room.scoreBoxAs": "Score {box}: {written} ({points} points)",
  "room.toMove": "to move",

  "end.winner": "Winner: {name}",
  "end.tie": "Tie: {names}",
  "end.ranking": "Final ranking",
  "end.last": "The last move: {move}",
  "end.place": "Place",
  "end.player": "Player",
  "end.settlement": "Settlement",
  "end.games": "Games",
  "end.rematch": "Rematch",
  "end.newTable": "New table",

  "say.rolled": "{who} rolled {dice}.",
  "say.keeps": "{who} keeps {dice}.",
  "say.keepsNothing": "{who} keeps nothing.",
  "say.scored": "{who}: {label}.",
  "say.move": "{who}: {label}.",
  "say.yourTurn": "Your turn, {name}.",
  "say.turn": "{name} to play.",
  "say.over": "Game over. {winner}",
  "say.kept": "Die {n} kept.",
  "say.released": "Die {n} back to the roll.",
};

let lang = "en";

/** Pick the language (a table of `messages`), English when there is none for `code`. */
export function setLanguage(code) {
  lang = messages[code] ? code : "en";
  document.documentElement.lang = lang;
}

/** The text for `key` in the page's language, its `{name}` parameters filled from `params`. */
export function t(key, params = {}) {
  const text = (messages[lang] && messages[lang][key]) ?? messages.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

/** Fill every element marked `data-t` (text), `data-t-label` (aria-label) or `data-t-placeholder`. */
export function translatePage(root = document) {
  for (const node of root.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
  for (const node of root.querySelectorAll("[data-t-label]")) node.setAttribute("aria-label", t(node.dataset.tLabel));
  for (const node of root.querySelectorAll("[data-t-placeholder]")) node.placeholder = t(node.dataset.tPlaceholder);
}
