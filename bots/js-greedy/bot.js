#!/usr/bin/env node
// js-greedy: a Morris Arena bot in plain JavaScript (node, no npm packages).
//
// It has its own board tables and move generation, reads every rule parameter from
// `newgame`, and plays a greedy move: win if it can, capture as much as it can, do not let
// the opponent form a mill next turn, build "twos" (two men and an empty point on a line),
// keep the opponent's mobility low; ties are broken by a PRNG seeded from the Seed option.
//
// Supported: the boards standard, diagonals, six and three, and every rule parameter that
// affects which moves are legal (men, flying, fly_at, mill_capture, multi_mill_captures,
// optional_capture, no_immediate_reform, move_in_placement, mill_wins, placement_mill,
// one_time_mill, board_full=remove-both and blocked=remove-and-move with their removal-only
// turns (xg7); second_moves_first only changes whose turn the position text says it is).
// Parameters that only decide when a game ends (lose_below, blocked, board_full, repetition,
// no_capture_draw, three_three_draw) are read and used by the evaluation where it is cheap
// (lose_below, blocked); the bot does not track repetitions (it ignores the `moves` list of
// `position`).
//
// Everything it prints on stdout is a protocol line; its log goes to stderr.
"use strict";

const readline = require("readline");

// ------------------------------------------------------------------------------------
// Boards: lines of three points (mills) plus extra non-mill edges, as in docs/PROTOCOL.md
// ------------------------------------------------------------------------------------

function square(lo, mid, hi, rlo, rmid, rhi) {
  return [
    [lo + rlo, lo + rmid, lo + rhi],
    [lo + rhi, mid + rhi, hi + rhi],
    [hi + rlo, hi + rmid, hi + rhi],
    [lo + rlo, mid + rlo, hi + rlo],
  ];
}
const OUTER = square("a", "d", "g", 1, 4, 7);
const MIDDLE = square("b", "d", "f", 2, 4, 6);
const INNER = square("c", "d", "e", 3, 4, 5);
const SPOKES = [["a4", "b4", "c4"], ["e4", "f4", "g4"], ["d5", "d6", "d7"], ["d1", "d2", "d3"]];
const DIAGONALS = [["a1", "b2", "c3"], ["a7", "b6", "c5"], ["e5", "f6", "g7"], ["e3", "f2", "g1"]];

const BOARDS = {
  standard: { lines: [...OUTER, ...MIDDLE, ...INNER, ...SPOKES], edges: [] },
  diagonals: { lines: [...OUTER, ...MIDDLE, ...INNER, ...SPOKES, ...DIAGONALS], edges: [] },
  six: { lines: [...OUTER, ...MIDDLE], edges: [["a4", "b4"], ["f4", "g4"], ["d6", "d7"], ["d1", "d2"]] },
  three: {
    lines: [["a1", "d1", "g1"], ["a4", "d4", "g4"], ["a7", "d7", "g7"], ["a1", "a4", "a7"],
      ["d1", "d4", "d7"], ["g1", "g4", "g7"], ["a1", "d4", "g7"], ["a7", "d4", "g1"]],
    edges: [],
  },
};

// Precomputed tables of one board: points in name order (bit i = points[i]), adjacency
// masks, mill masks and the mills through each point.
function makeTopology(name) {
  const def = BOARDS[name];
  if (!def) throw new Error(`unsupported board ${name}`);
  const names = new Set();
  for (const line of def.lines) line.forEach((p) => names.add(p));
  for (const e of def.edges) e.forEach((p) => names.add(p));
  const points = [...names].sort();
  const index = {};
  points.forEach((p, i) => { index[p] = i; });
  const adjacent = points.map(() => 0);
  const link = (x, y) => {
    adjacent[index[x]] |= 1 << index[y];
    adjacent[index[y]] |= 1 << index[x];
  };
  for (const [a, b, c] of def.lines) { link(a, b); link(b, c); }
  for (const [x, y] of def.edges) link(x, y);
  const mills = def.lines.map((l) => l.reduce((m, p) => m | (1 << index[p]), 0));
  const millsAt = points.map((_, i) => mills.map((m, n) => [n, m]).filter(([, m]) => (m >> i) & 1));
  return { name, points, index, adjacent, mills, millsAt, full: (1 << points.length) - 1 };
}

// ------------------------------------------------------------------------------------
// Rules
// ------------------------------------------------------------------------------------

const DEFAULTS = {
  board: "standard", men: "9", flying: "true", fly_at: "3", mill_capture: "last-resort",
  multi_mill_captures: "1", optional_capture: "false", no_immediate_reform: "false",
  three_three_draw: "0", lose_below: "3", blocked: "lose", board_full: "draw",
  move_in_placement: "false", mill_wins: "false", placement_mill: "capture",
  one_time_mill: "false", second_moves_first: "false", repetition: "3", no_capture_draw: "100",
};

function makeRules(params) {
  const p = { ...DEFAULTS, ...params };
  const known = new Set(Object.keys(DEFAULTS));
  for (const key of Object.keys(params)) {
    if (!known.has(key)) log(`unknown rule parameter ${key}=${params[key]} (ignored)`);
  }
  return {
    topo: makeTopology(p.board),
    men: parseInt(p.men, 10),
    flying: p.flying === "true",
    flyAt: parseInt(p.fly_at, 10),
    millCapture: p.mill_capture,
    multi: parseInt(p.multi_mill_captures, 10),
    optional: p.optional_capture === "true",
    noReform: p.no_immediate_reform === "true",
    loseBelow: parseInt(p.lose_below, 10),
    blocked: p.blocked,
    boardFull: p.board_full,
    moveInPlacement: p.move_in_placement === "true",
    millWins: p.mill_wins === "true",
    placementMill: p.placement_mill,
    oneTimeMill: p.one_time_mill === "true",
    secondMovesFirst: p.second_moves_first === "true",
  };
}

function popcount(x) {
  let n = 0;
  while (x) { x &= x - 1; n++; }
  return n;
}

function bits(mask) {
  const out = [];
  for (let i = 0; mask; i++, mask >>>= 1) if (mask & 1) out.push(i);
  return out;
}

// Parse the position text: points (W, B, X for a marked point, .), side, hands, quiet turns,
// forbidden mills, ply, then optional key=value fields (used=<white's>;<black's>).
function parsePosition(rules, text) {
  const f = text.trim().split(/\s+/);
  if (f.length < 8) throw new Error(`expected 8 fields in position text: ${text}`);
  const t = rules.topo;
  if (f[0].length !== t.points.length) throw new Error(`board field has the wrong length: ${f[0]}`);
  const men = [0, 0];
  let marks = 0;
  for (let i = 0; i < f[0].length; i++) {
    if (f[0][i] === "W") men[0] |= 1 << i;
    else if (f[0][i] === "B") men[1] |= 1 << i;
    else if (f[0][i] === "X") marks |= 1 << i;
  }
  const extra = {};
  for (const kv of f.slice(8)) {
    const eq = kv.indexOf("=");
    if (eq > 0) extra[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const forbidden = (field) => {
    if (field === "-") return 0;
    let nums = 0;
    for (const triple of field.split(",")) {
      let mask = 0;
      for (let k = 0; k < triple.length; k += 2) mask |= 1 << t.index[triple.slice(k, k + 2)];
      const n = t.mills.indexOf(mask);
      if (n >= 0) nums |= 1 << n;
    }
    return nums;
  };
  const used = (extra.used || "-;-").split(";");
  const pending = (extra.remove || "0,0").split(",").map((x) => parseInt(x, 10));
  return {
    men, marks, turn: f[1] === "w" ? 0 : 1, hand: [parseInt(f[2], 10), parseInt(f[3], 10)],
    forbidden: [forbidden(f[5]), forbidden(f[6])], used: [forbidden(used[0]), forbidden(used[1])],
    pending,
  };
}

function menInMills(rules, men) {
  let out = 0;
  for (const m of rules.topo.mills) if ((men & m) === m) out |= m;
  return out;
}

// The men of `opp` that may be captured, by the mill_capture rule.
function removable(rules, opp) {
  if (rules.millCapture === "always") return opp;
  const free = opp & ~menInMills(rules, opp);
  if (rules.millCapture === "never") return free;
  return free || opp;
}

// Every set of men (a mask) a move entitled to k captures may take.
function captureSets(rules, opp, k, optional = rules.optional) {
  const found = new Set();
  const walk = (left, k, taken) => {
    const rem = k ? removable(rules, left) : 0;
    if (optional || !rem) found.add(taken);
    for (const i of bits(rem)) walk(left & ~(1 << i), k - 1, taken | (1 << i));
  };
  walk(opp, k, 0);
  return [...found];
}

// Mills completed through `dst` by `own` (count, and a mask of mill numbers).
function formed(rules, own, dst) {
  let count = 0;
  let nums = 0;
  for (const [n, m] of rules.topo.millsAt[dst]) {
    if ((own & m) === m) { count++; nums |= 1 << n; }
  }
  return [count, nums];
}

// (source or -1, destination) pairs the movement rules allow for the side to move.
function pairs(rules, pos) {
  const t = pos.turn;
  const own = pos.men[t];
  const empty = rules.topo.full & ~(own | pos.men[1 - t] | pos.marks);
  const out = [];
  if (pos.hand[t]) {
    for (const d of bits(empty)) out.push([-1, d]);
    if (!rules.moveInPlacement) return out;
  }
  const fly = pos.hand[t] === 0 && rules.flying && popcount(own) <= rules.flyAt;
  for (const s of bits(own)) {
    for (const d of bits(fly ? empty : rules.topo.adjacent[s] & empty)) out.push([s, d]);
  }
  return out;
}

// Every k-element subset (as masks) of the men in `mask`.
function subsets(mask, k) {
  const pts = bits(mask);
  const out = [];
  const walk = (from, left, acc) => {
    if (left === 0) { out.push(acc); return; }
    for (let i = from; i < pts.length; i++) walk(i + 1, left - 1, acc | (1 << pts[i]));
  };
  walk(0, Math.min(k, pts.length), 0);
  return out.filter((m) => m !== 0);
}

// Every legal move as {src, dst, caps, hand, mills}: `caps` a mask of men taken from the
// board, `hand` how many men are taken from the opponent's hand (placement_mill=hand: x*).
// A removal-only turn (xg7) has src = dst = -1: owed removals (remove=, negative: own men)
// come before anything else, and a blocked player removes a man next to one of its own.
function generate(rules, pos) {
  const t = pos.turn;
  const owed = pos.pending[t];
  const removal = (caps) => ({ src: -1, dst: -1, caps, hand: 0, mills: 0 });
  if (owed < 0) return subsets(pos.men[t], -owed).map(removal);
  if (owed > 0) {
    return captureSets(rules, pos.men[1 - t], owed, false).filter((c) => c !== 0).map(removal);
  }
  const out = ordinaryMoves(rules, pos);
  if (out.length === 0 && rules.blocked === "remove-and-move") {
    let near = 0;
    for (const s of bits(pos.men[t])) near |= rules.topo.adjacent[s];
    return bits(pos.men[1 - t] & near).map((i) => removal(1 << i));
  }
  return out;
}

// Placements and moves with their captures.
function ordinaryMoves(rules, pos) {
  const t = pos.turn;
  const own = pos.men[t];
  const opp = pos.men[1 - t];
  const oppHand = pos.hand[1 - t];
  const out = [];
  for (const [s, d] of pairs(rules, pos)) {
    const after = (s >= 0 ? own & ~(1 << s) : own) | (1 << d);
    let [count, nums] = formed(rules, after, d);
    if (nums & pos.forbidden[t]) continue;
    if (rules.oneTimeMill) count = popcount(nums & ~pos.used[t]); // a line captures once
    if (count === 0 || rules.millWins || (s < 0 && rules.placementMill === "count")) {
      out.push({ src: s, dst: d, caps: 0, hand: 0, mills: count });
      continue;
    }
    const k = Math.min(count, rules.multi);
    let taken = 0;
    if (s < 0 && rules.placementMill === "hand" && oppHand) {
      taken = Math.min(k, oppHand); // from the hand first, without a choice
      if (rules.optional) {
        for (let fewer = 0; fewer < taken; fewer++) {
          out.push({ src: s, dst: d, caps: 0, hand: fewer, mills: count });
        }
      }
    }
    for (const caps of captureSets(rules, opp, k - taken)) {
      out.push({ src: s, dst: d, caps, hand: taken, mills: count });
    }
  }
  return out;
}

// The position after `move` (forbidden mills as the no_immediate_reform rule sets them).
function play(rules, pos, move) {
  const t = pos.turn;
  if (move.dst < 0) { // a removal-only turn
    const owed = pos.pending[t];
    const men = pos.men.slice();
    men[owed < 0 ? t : 1 - t] &= ~move.caps;
    const pending = pos.pending.slice();
    pending[t] = 0;
    const resume = rules.secondMovesFirst && pos.hand[0] + pos.hand[1] === 0 ? 1 : 0;
    const turn = !owed ? t : pending[1 - t] ? 1 - t : resume;
    return { ...pos, men, pending, turn };
  }
  let own = pos.men[t];
  const forbidden = pos.forbidden.slice();
  const hand = pos.hand.slice();
  if (move.src >= 0) {
    if (rules.noReform) {
      let broken = 0;
      for (const [n, m] of rules.topo.millsAt[move.src]) if ((own & m) === m) broken |= 1 << n;
      forbidden[t] = broken;
    }
    own &= ~(1 << move.src);
  } else {
    hand[t]--;
    if (rules.noReform) forbidden[t] = 0;
  }
  const men = pos.men.slice();
  men[t] = own | (1 << move.dst);
  men[1 - t] &= ~move.caps;
  hand[1 - t] -= move.hand;
  let marks = pos.marks;
  if (move.src < 0 && rules.placementMill === "mark") marks |= move.caps;
  const used = pos.used.slice();
  if (rules.oneTimeMill) used[t] |= formed(rules, men[t], move.dst)[1];
  let turn = 1 - t;
  let pending = [0, 0];
  const placedLast = hand[0] + hand[1] === 0 && pos.hand[0] + pos.hand[1] > 0;
  if (hand[0] + hand[1] === 0) {
    marks = 0;
    if (rules.secondMovesFirst && placedLast) turn = 1;
  }
  if (placedLast && rules.placementMill === "count") {
    pending = removalsByMillCount(rules, men);
  } else if (rules.boardFull === "remove-both" && !(rules.topo.full & ~(men[0] | men[1] | marks))) {
    pending = [1, 1];
  }
  if (pending[0]) turn = 0;
  else if (pending[1]) turn = 1;
  return { men, hand, forbidden, turn, marks, used, pending };
}

// placement_mill=count (El Filja): what white and black remove when placement ends, by the
// mills each then holds (negative: one of its own men).
function removalsByMillCount(rules, men) {
  const [w, b] = [0, 1].map((c) => rules.topo.mills.filter((m) => (men[c] & m) === m).length);
  if (!w && !b) return [-1, -1];
  if (!b) return [2, 1];
  if (!w) return [1, 2];
  if (w === b) return [w, b];
  return w > b ? [b + 1, b] : [w, w + 1];
}

function moveText(rules, move) {
  const p = rules.topo.points;
  const head = move.dst < 0 ? "" : move.src < 0 ? p[move.dst] : `${p[move.src]}-${p[move.dst]}`;
  return head + "x*".repeat(move.hand) + bits(move.caps).map((i) => `x${p[i]}`).join("");
}

// ------------------------------------------------------------------------------------
// Strategy: greedy, one move plus the opponent's reply
// ------------------------------------------------------------------------------------

const WIN = 1000000;

function openTwos(rules, pos, color) {
  const own = pos.men[color];
  const opp = pos.men[1 - color];
  let n = 0;
  for (const m of rules.topo.mills) if (popcount(own & m) === 2 && !(opp & m)) n++;
  return n;
}

function score(rules, pos, move) {
  const me = pos.turn;
  if (rules.millWins && move.mills > 0) return WIN;
  const next = play(rules, pos, move);
  const opp = 1 - me;
  if (popcount(next.men[opp]) + next.hand[opp] < rules.loseBelow) return WIN;
  const replies = generate(rules, next);
  if (next.turn === me) return 100 * (popcount(move.caps) + move.hand) + replies.length; // again
  if (replies.length === 0) return rules.blocked === "lose" ? WIN : 0;
  let threat = 0;
  for (const r of replies) {
    if (rules.millWins && r.mills > 0) return -WIN / 2;
    threat = Math.max(threat, popcount(r.caps) + r.hand);
  }
  return 100 * (popcount(move.caps) + move.hand) - 90 * threat
    + 5 * (openTwos(rules, next, me) - openTwos(rules, next, opp)) - replies.length;
}

// mulberry32: a small seeded PRNG, so the Seed option makes games reproducible.
function makeRng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function choose(rules, pos, rng) {
  const moves = generate(rules, pos);
  if (moves.length === 0) return null;
  let best = -Infinity;
  let top = [];
  for (const m of moves) {
    const s = score(rules, pos, m);
    if (s > best) { best = s; top = [m]; } else if (s === best) top.push(m);
  }
  return top[Math.floor(rng() * top.length)];
}

// ------------------------------------------------------------------------------------
// Protocol
// ------------------------------------------------------------------------------------

function send(line) { process.stdout.write(line + "\n"); }
function log(text) { process.stderr.write(`js-greedy: ${text}\n`); }

let seed = 0;
let rules = makeRules({});
let rng = makeRng(seed);
let position = null;

function handle(line) {
  const words = line.trim().split(/\s+/).filter((w) => w);
  if (words.length === 0) return;
  const [cmd, ...args] = words;
  switch (cmd) {
    case "morris":
      send("id name js-greedy");
      send("id author Morris Arena");
      send("option name Seed type spin default 0 min 0 max 2147483647");
      send("morrisok");
      break;
    case "setoption": {
      const at = args.indexOf("value");
      const name = args.slice(1, at < 0 ? args.length : at).join(" ");
      const value = at < 0 ? "" : args.slice(at + 1).join(" ");
      if (name.toLowerCase() === "seed" && /^\d+$/.test(value)) seed = parseInt(value, 10);
      else log(`ignored option ${name}`);
      break;
    }
    case "newgame": {
      const params = {};
      for (const kv of args.slice(1)) {
        const eq = kv.indexOf("=");
        if (eq > 0) params[kv.slice(0, eq)] = kv.slice(eq + 1);
      }
      rules = makeRules(params);
      rng = makeRng(seed);
      position = null;
      break;
    }
    case "isready":
      send("readyok");
      break;
    case "position": {
      const at = args.indexOf("moves");
      position = parsePosition(rules, args.slice(0, at < 0 ? args.length : at).join(" "));
      break;
    }
    case "go": {
      const move = position ? choose(rules, position, rng) : null;
      if (!move) log("asked to move without a position or a legal move");
      send(`bestmove ${move ? moveText(rules, move) : "none"}`);
      break;
    }
    case "gameover":
      break;
    case "quit":
      process.exit(0);
      break;
    default:
      log(`ignored unknown command: ${line.trim()}`);
  }
}

if (require.main === module) {
  const input = readline.createInterface({ input: process.stdin, terminal: false });
  input.on("line", (line) => {
    try {
      handle(line);
    } catch (e) {
      log(`error: ${e.message}`);
    }
  });
  input.on("close", () => process.exit(0));
} else {
  // required by tests: the rules, to compare with the reference engine
  module.exports = { makeRules, parsePosition, generate, moveText };
}
