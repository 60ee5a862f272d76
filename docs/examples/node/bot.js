// node-first: a Morris Arena bot in JavaScript (Node.js) that knows no rules.
//
// Its bot.yaml says `legal_moves: true`, so just before each `go` the referee sends
// `legalmoves <m1> <m2> ...` listing every legal turn (captures included, e.g. d6xa1).
// The bot remembers the first move of the last such line and plays it on `go`.
// No build step: node runs bot.js as it is.
"use strict";
const readline = require("readline");

function send(line) {
  process.stdout.write(line + "\n"); // a pipe: node writes it out asynchronously, in order
}

let firstMove = "";
const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  const words = line.trim().split(/\s+/);
  switch (words[0]) {
    case "morris":
      send("id name node-first");
      send("id author Morris Arena examples");
      send("morrisok");
      break;
    case "isready":
      send("readyok");
      break;
    case "legalmoves":
      firstMove = words[1] || "";
      break;
    case "go":
      send("bestmove " + firstMove);
      break;
    case "quit":
      rl.close();
      process.exit(0);
  }
});
