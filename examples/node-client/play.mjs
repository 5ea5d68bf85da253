#!/usr/bin/env node
// A whole dicecup game from Node.js, through the server's protocol alone: create a table over HTTP (fetch),
// then play it over the WebSocket against a bot the server runs, and print the final scores.
//
//   node play.mjs [--server http://127.0.0.1:8000] [--variant yahtzee] [--bot bot:greedy] [--name node]
//
// The rules stay on the server: this client reads, for each decision, the boxes it may score and what each
// is worth (`game.legal`), and plays a simple strategy on them. No npm package is needed (Node 20 or later).

import {WebSocketClient} from "./websocket.mjs";

function options(argv) {
  const out = {server: "http://127.0.0.1:8000", variant: "yahtzee", bot: "bot:greedy", name: "node"};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in out) || argv[i + 1] === undefined) throw new Error(`unknown option ${argv[i]}; options: ${Object.keys(out).join(", ")}`);
    out[key] = argv[i + 1];
  }
  return out;
}

async function createTable(server, variant, name, bot) {
  const response = await fetch(`${server}/api/tables`, {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({variant, seats: [{player: "human", name, mine: true}, {player: bot}]}),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`the table was refused (${response.status}): ${answer.error}`);
  return answer;
}

function choose(game) {
  // Keep the dice of the face showing most (the higher face on a tie) while rolls are left and no box is
  // worth 25 points or more; otherwise score the legal box worth the most.
  const boxes = Object.entries(game.legal);
  const best = boxes.sort((a, b) => b[1].points - a[1].points)[0];
  if (!best) return game.rule_actions[0].move; // a variant whose rules want another move first
  const counts = new Map();
  for (const face of game.dice) counts.set(face, (counts.get(face) || 0) + 1);
  const [face, count] = [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0];
  if (game.rolls_left > 0 && game.may_reroll && best[1].points < 25 && count < game.dice.length) {
    return ["keep", Array(count).fill(face)];
  }
  return ["score", best[0]];
}

async function main() {
  const opts = options(process.argv.slice(2));
  const table = await createTable(opts.server, opts.variant, opts.name, opts.bot);
  const {seat, token} = table.tokens[0];
  console.log(`table ${table.code} (${opts.server}${table.link})`);
  const ws = new WebSocketClient(`${opts.server.replace(/^http/, "ws")}/ws`);
  let asked = -1;
  await new Promise((resolve, reject) => {
    ws.on("error", reject);
    ws.on("close", (code) => reject(new Error(`the connection closed (${code}) before the game ended`)));
    ws.on("open", () => ws.send(JSON.stringify({type: "hello", v: 1, table: table.code, tokens: [token]})));
    ws.on("message", (text) => {
      const message = JSON.parse(text);
      if (message.type === "error") {
        console.error(`refused: ${message.code}: ${message.message}`);
        if (["stale", "unavailable", "internal", "rate_limited"].includes(message.code)) {
          // the move was not made (another came first, the server could not store it, or this client sent
          // faster than the server's rate): ask for the position again, and move from it, a moment later
          // (a second when over the rate, so the server's bucket refills first)
          asked = -1;
          const wait = message.code === "rate_limited" ? 1000 : 200;
          setTimeout(() => ws.send(JSON.stringify({type: "sync"})), wait);
        }
        return;
      }
      if (!["welcome", "update", "state"].includes(message.type)) return;
      const game = message.game;
      if (game.status === "over") {
        for (const [i, p] of game.players.entries()) console.log(`${p.name}: ${game.result.totals[i]}`);
        console.log(`winner: ${game.result.winners.join(", ")}`);
        ws.removeAllListeners("close");
        ws.close();
        resolve();
      } else if (game.to_move === seat && game.seq !== asked) {
        asked = game.seq; // one move per position
        ws.send(JSON.stringify({type: "move", seat, at: game.seq, move: choose(game), id: String(game.seq)}));
      }
    });
  });
}

main().catch((error) => {
  console.error(`error: ${error.message}`);
  process.exit(2);
});
