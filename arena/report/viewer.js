/* Morris Arena game viewer: vanilla JavaScript, no library, no network.
 * The page embeds the game as JSON (#game-data): the board's points and lines, and for every
 * ply the board (one character per point: W, B, . or X for a point marked while placing), the
 * men in hand, the move and its time, its captures (v: whose men, hc: men taken from the hand),
 * and the side to move next (t), all computed by the rules engine, so this script knows no
 * rules.  A move without a destination (xg7) only removes men.  A ply whose bot said what it
 * searched has e: its score as sent (s, or w/l: a forced win/loss in plies, from the mover's
 * view), depth (d), seldepth (sd), nodes (n), nps, time (t), pv and str.  Text from bots is
 * only ever set with textContent or as an attribute's value; no handler is written inline
 * (the server's pages run under a nonce CSP). */
(function () {
  "use strict";
  var G = JSON.parse(document.getElementById("game-data").textContent);
  var NAMES = ["white", "black"], MARK = ["W", "B"];
  var last = G.plies.length - 1, cur = last, timer = null;
  var root = document.getElementById("viewer");

  function el(tag, attrs, text, parent) {
    var e = document.createElement(tag);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (text !== undefined && text !== null) { e.textContent = text; }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  var svg = MorrisBoard.svg;  /* board.js, inlined before this script */
  function ms(v) {
    if (v === null || v === undefined) { return ""; }
    return v >= 1000 ? (v / 1000).toFixed(2) + " s" : Math.round(v) + " ms";
  }

  /* -- what the bots said of their search ----------------------------------------------- */
  var engine = G.plies.some(function (p) { return !!p.e; });
  function group(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function scored(e) { return !!e && (e.s !== undefined || e.w !== undefined || e.l !== undefined); }
  function scoreText(e, flip) {  /* as the PGN writes it: +120, -35, 0, +M7, -M4 */
    if (!scored(e)) { return ""; }
    var win = e.w !== undefined, loss = e.l !== undefined;
    if (win || loss) { return (win !== !!flip ? "+M" : "-M") + (win ? e.w : e.l); }
    var v = flip ? -e.s : e.s;
    return v > 0 ? "+" + v : String(v);
  }
  function evalText(e) {  /* +120/5 */
    var sc = scoreText(e, false);
    return sc && e.d !== undefined ? sc + "/" + e.d : sc;
  }
  function engineParts(p) {  /* the mover's own words, then White's view when they differ */
    var e = p.e, parts = [];
    if (scored(e)) {
      parts.push("score " + scoreText(e, false) + (p.by === 1 ? " (White's view " +
                 scoreText(e, true) + ")" : ""));
    }
    if (e.d !== undefined) { parts.push("depth " + e.d + (e.sd !== undefined ? " (seldepth " + e.sd + ")" : "")); }
    if (e.n !== undefined) { parts.push(group(e.n) + " nodes"); }
    if (e.nps !== undefined) { parts.push(group(e.nps) + " nodes/s"); }
    if (e.t !== undefined) { parts.push("searched " + ms(e.t)); }
    return parts;
  }
  function engineTitle(p) {  /* a move-list row's tooltip */
    if (!p.e) { return ""; }
    var parts = engineParts(p);
    if (p.e.pv) { parts.push("pv " + p.e.pv); }
    if (p.e.str) { parts.push(p.e.str); }
    return parts.join("; ");
  }

  /* -- the page ------------------------------------------------------------------------- */
  document.title = G.title;
  var head = el("div", {}, null, root);
  if (G.back) { el("a", {href: G.back, class: "meta"}, "\u2190 " + (G.back_text || "report"), head); }
  el("h1", {}, G.title, head);
  el("div", {class: "meta"}, "game " + G.id + " \u00b7 " + G.variant + " (" + G.board +
     " board, " + G.men + " men each) \u00b7 white: " + G.white + " \u00b7 black: " + G.black,
     head);
  el("div", {class: "ending", id: "ending"}, G.ending, head);
  if (G.error) { el("div", {class: "warn"}, "Replay stopped early: " + G.error, head); }

  var main = el("div", {class: "main"}, null, root);
  var col = el("div", {class: "boardcol"}, null, main);
  var hands = [el("div", {class: "hands"}, null, col)];
  var handEl = [1, 0].map(function (c) {
    var h = el("div", {class: "hand", id: "hand-" + NAMES[c]}, null, hands[0]);
    var label = el("span", {}, null, h);
    var dots = el("span", {class: "dots"}, null, h);
    return {label: label, dots: dots};
  }).reverse();

  var drawn = MorrisBoard.create(col, G.points, G.edges, "men");  /* board.js */

  /* -- the evaluation graph: every score from White's view, a forced result at the edge --- */
  var GW = 440, GH = 110, GP = 6, gpoints = [], gmarker = null, scale = 0;
  G.plies.forEach(function (p, n) {
    if (n && scored(p.e) && p.e.s !== undefined) { scale = Math.max(scale, Math.abs(p.e.s)); }
  });
  G.plies.forEach(function (p, n) {
    if (!n || !scored(p.e)) { return; }
    var sign = p.by === 1 ? -1 : 1, e = p.e;
    var v = e.w !== undefined ? sign : e.l !== undefined ? -sign : sign * 0.85 * e.s / (scale || 1);
    gpoints.push({n: n, v: v, forced: e.s === undefined});
  });
  function gx(n) { return GP + (GW - 2 * GP) * n / Math.max(last, 1); }
  function gy(v) { return GH / 2 - v * (GH / 2 - GP); }
  var graphBox = el("div", {class: "graphbox"}, null, null);  /* placed under the controls */
  if (gpoints.length) {
    var graph = svg("svg", {class: "evalgraph", id: "evalgraph", viewBox: "0 0 " + GW + " " + GH,
                            role: "img", "aria-label": "evaluation graph"}, graphBox);
    svg("rect", {class: "wside", x: 0, y: 0, width: GW, height: GH / 2}, graph);
    svg("rect", {class: "bside", x: 0, y: GH / 2, width: GW, height: GH / 2}, graph);
    svg("line", {class: "zero", x1: 0, y1: GH / 2, x2: GW, y2: GH / 2}, graph);
    gmarker = svg("line", {class: "cur", x1: 0, y1: 0, x2: 0, y2: GH}, graph);
    [0, 1].forEach(function (color) {  /* a line per bot, as their units may differ */
      var own = gpoints.filter(function (q) { return G.plies[q.n].by === color; });
      if (own.length > 1) {
        svg("polyline", {class: "evalline " + MARK[color], points: own.map(function (q) {
          return gx(q.n).toFixed(1) + "," + gy(q.v).toFixed(1);
        }).join(" ")}, graph);
      }
    });
    gpoints.forEach(function (q) {
      q.dot = svg("circle", {class: "pt " + MARK[G.plies[q.n].by] + (q.forced ? " forced" : ""),
                             cx: gx(q.n).toFixed(1), cy: gy(q.v).toFixed(1), r: q.forced ? 3.5 : 2.6,
                             "data-ply": q.n}, graph);
    });
    var top = svg("text", {class: "glabel", x: 4, y: 13}, graph);
    top.textContent = scale ? "+" + group(scale) : "";
    var bottom = svg("text", {class: "glabel", x: 4, y: GH - 5}, graph);
    bottom.textContent = scale ? "\u2212" + group(scale) : "";
    var hit = svg("rect", {class: "hit", x: 0, y: 0, width: GW, height: GH}, graph);
    var nearest = function (ev) {  /* the scored ply nearest the pointer, by x */
      var box = graph.getBoundingClientRect();
      var x = (ev.clientX - box.left) * GW / (box.width || GW), best = gpoints[0];
      gpoints.forEach(function (q) { if (Math.abs(gx(q.n) - x) < Math.abs(gx(best.n) - x)) { best = q; } });
      return best.n;
    };
    hit.addEventListener("mousemove", function (ev) {
      var n = nearest(ev);
      if (n !== cur) { stop(); go(n); }
    });
    hit.addEventListener("click", function (ev) { stop(); go(nearest(ev)); });
    el("div", {class: "graphcap"}, "The bots' scores from White's view (up: White better; " +
       "each in its own units" + (scale ? ", to \u00b1" + group(scale) : "") +
       (gpoints.some(function (q) { return q.forced; }) ? "; forced results at the edge" : "") +
       "). Hover or click: go to the move.", graphBox);
  }

  var controls = el("div", {class: "controls"}, null, col);
  function button(id, text, title, fn) {
    var b = el("button", {id: id, title: title, type: "button"}, text, controls);
    b.addEventListener("click", fn);
    return b;
  }
  button("first", "|\u25c0", "start (Home)", function () { stop(); go(0); });
  button("back", "\u25c0", "back one move (\u2190)", function () { stop(); go(cur - 1); });
  var playBtn = button("play", "\u25b6\u2009\u2016", "play / pause (space)", toggle);
  button("forward", "\u25b6", "forward one move (\u2192)", function () { stop(); go(cur + 1); });
  button("end", "\u25b6|", "final position (End)", function () { stop(); go(last); });
  var slider = el("input", {id: "slider", type: "range", min: 0, max: last, value: cur,
                            "aria-label": "ply"}, null, controls);
  slider.addEventListener("input", function () { stop(); go(Number(slider.value)); });
  var plyBox = el("input", {id: "ply", type: "number", min: 0, max: last, value: cur,
                            style: "width: 4.5em", "aria-label": "jump to ply"}, null, controls);
  plyBox.addEventListener("change", function () { stop(); go(Number(plyBox.value)); });
  el("span", {class: "meta"}, "/ " + last, controls);
  if (gpoints.length) { col.appendChild(graphBox); }
  var status = el("div", {class: "status", id: "status"}, null, col);
  var engineBox = engine ? el("div", {class: "engine", id: "engine"}, null, col) : null;
  el("div", {class: "help"}, "Keys: \u2190 \u2192 step, Home / End, space plays or pauses; " +
     "click a move to jump to it" + (engine ? " (hover it for the bot's search)." : "."), col);

  var side = el("div", {class: "side"}, null, main);
  var list = el("div", {class: "movelist"}, null, side);
  var table = el("table", {}, null, list);
  var hr = el("tr", {}, null, el("thead", {}, null, table));
  (engine ? ["ply", "side", "move", "eval", "depth", "time", "cpu"] :
   ["ply", "side", "move", "time", "cpu"]).forEach(function (h) {
    var th = el("th", h === "move" ? {class: "mv"} : {}, h, hr);
    if (h === "eval") {
      th.setAttribute("title", "the score the bot sent with its move, in its own units and " +
                      "from its own side's view (+: good for the side that moved); " +
                      "+M7 / -M4: a forced win / loss in that many plies");
    }
  });
  var tbody = el("tbody", {}, null, table);
  var rows = [];
  G.plies.forEach(function (p, n) {
    var tr = el("tr", {"data-ply": n, class: p.o ? "opening" : ""}, null, tbody);
    el("td", {}, n, tr);
    var removal = p.d === null;  /* a removal-only turn (xg7); ply 0 has no d at all */
    if (n === 0) {
      el("td", {}, "", tr); el("td", {class: "mv"}, "start", tr);
      el("td", {}, "", tr); el("td", {}, "", tr);
      if (engine) { el("td", {}, "", tr); el("td", {}, "", tr); }
    } else {
      el("td", {}, NAMES[p.by], tr);
      var mv = el("td", {class: "mv" + (p.c.length || p.hc ? " capt" : "") +
                            (removal ? " removal" : "")}, p.m, tr);
      if (p.tb) {  /* an endgame the tables cover (arena analyse): kept, or thrown away */
        el("span", {class: "tb " + (p.tb.k ? "thrown" : "kept"),
                    title: p.tb.k ? "threw the " + p.tb.v + " away (" + p.tb.k + "); " +
                                    "the tables' best: " + p.tb.best.join(", ")
                                  : "kept the " + p.tb.v + " (the tables' best: " +
                                    p.tb.best.join(", ") + ")"},
           p.tb.k ? p.tb.k : "\u2713", mv);
      }
      if (engine) {
        el("td", {class: "ev"}, p.e ? scoreText(p.e, false) : "", tr);
        el("td", {}, p.e && p.e.d !== undefined ? p.e.d : "", tr);
        if (p.e) { tr.setAttribute("title", engineTitle(p)); }
      }
      el("td", {}, p.o ? "opening" : ms(p.ms), tr);
      el("td", {}, ms(p.cpu), tr);
    }
    tr.addEventListener("click", function () { stop(); go(n); });
    rows.push(tr);
  });

  var fin = el("div", {class: G.forfeit ? "forfeit" : "final", id: "final"}, null, side);
  el("h2", {}, "How it ended", fin);
  var said = G.ending.toLowerCase();
  el("div", {}, G.ending + " (after " + G.played + " moves)." +
     (G.detail && !G.forfeit && said.indexOf(G.detail.toLowerCase()) < 0 ? " " + G.detail : ""),
     fin);
  if (G.forfeit) {
    var f = G.forfeit;
    el("div", {}, "Forfeit by " + f.who + ": " + f.why + (f.detail ? " \u2014 " + f.detail : ""),
       fin);
    if (f.line !== null) {
      var d = el("div", {}, "It sent: ", fin);
      el("code", {id: "offending"}, f.line, d);
    }
    if (f.stderr) {
      el("div", {}, "The end of its stderr:", fin);
      el("pre", {id: "stderr"}, f.stderr, fin);
    }
  }

  /* -- drawing one ply ------------------------------------------------------------------ */
  function go(n) {
    n = Math.max(0, Math.min(last, isNaN(n) ? 0 : n));
    cur = n;
    var p = G.plies[n];
    var shown = MorrisBoard.draw(drawn, p, n > 0);
    var caps = shown.caps, marked = shown.marked, removal = p.d === null, victim = p.v;
    [0, 1].forEach(function (color) {
      var onBoard = p.b.split(MARK[color]).length - 1;
      var who = color === 0 ? G.white : G.black;
      handEl[color].label.textContent = NAMES[color] + " (" + who + "): " + p.h[color] +
        " in hand, " + onBoard + " on board ";
      handEl[color].label.className = "";
      handEl[color].dots.textContent = "";
      for (var k = 0; k < p.h[color]; k++) {
        el("span", {class: "dot " + MARK[color]}, null, handEl[color].dots);
      }
      if (n > 0 && p.hc && color === 1 - p.by) {  /* men this move took from the hand (x*) */
        for (var j = 0; j < p.hc; j++) {
          el("span", {class: "dot taken " + MARK[color], title: "taken from the hand"}, null,
             handEl[color].dots);
        }
      }
    });
    status.textContent = "";
    if (n === 0) {
      el("span", {}, "Ply 0: the start. White to move.", status);
    } else {
      el("span", {}, "Ply " + n + ": " + NAMES[p.by] + " played " + p.m +
         (p.o ? " (opening, set by the referee)" : " in " + ms(p.ms) +
          (p.cpu !== null && p.cpu !== undefined ? " (cpu " + ms(p.cpu) + ")" : "")) + ". ",
         status);
      if (p.ml) { el("span", {class: "mill"}, (p.ml.length > 1 ? p.ml.length + " mills" : "A mill") + ". ", status); }
      if (p.hc) {
        el("span", {class: "cap", id: "from-hand"}, "Took " + p.hc + (p.hc > 1 ? " men" : " man") +
           " from " + NAMES[1 - p.by] + "'s hand. ", status);
      }
      if (caps.length) {
        var whose = victim === p.by ? " (" + NAMES[p.by] + "'s own)" : "";
        el("span", {class: "cap"}, (removal ? "Removed " : "Captured ") + caps.join(", ") + whose +
           ". ", status);
      }
      if (marked.length) {
        el("span", {class: "marks"}, "Marked, blocked until placement ends: " + marked.join(", ") +
           ". ", status);
      }
      el("span", {}, n === last ? "Final position." :
         (p.t ? "Black" : "White") + " to move" + (p.t === p.by ? " again." : "."), status);
      if (p.tb && p.tb.k) {  /* the endgame tables' verdict on this move (arena analyse) */
        el("div", {class: "tbnote", id: "tbnote"}, "This move threw a " + p.tb.v +
           " away (" + p.tb.k + "). The endgame tables' best: " + p.tb.best.join(", ") +
           ".", status);
      }
    }
    if (engineBox) {
      engineBox.textContent = "";
      if (n > 0 && p.e) {
        el("span", {class: "who"}, NAMES[p.by] + " (" + (p.by ? G.black : G.white) + "): ", engineBox);
        el("span", {}, engineParts(p).join(", ") + (p.e.pv || p.e.str ? "; " : ""), engineBox);
        if (p.e.pv) { el("span", {}, "pv ", engineBox); el("code", {id: "pv"}, p.e.pv, engineBox); }
        if (p.e.str) { el("span", {class: "istr"}, (p.e.pv ? "; " : "") + p.e.str, engineBox); }
      } else if (n > 0) {
        el("span", {class: "meta"}, p.o ? "An opening move." : "No engine output for this move.",
           engineBox);
      }
    }
    if (gmarker) {
      gmarker.setAttribute("x1", gx(n)); gmarker.setAttribute("x2", gx(n));
      gpoints.forEach(function (q) { q.dot.classList.toggle("on", q.n === n); });
    }
    slider.value = n; plyBox.value = n;
    rows.forEach(function (r, k) { r.className = (G.plies[k].o ? "opening" : "") + (k === n ? " cur" : ""); });
    var rb = rows[n].getBoundingClientRect(), bb = list.getBoundingClientRect();
    if (rb.top < bb.top + 28 || rb.bottom > bb.bottom) {  /* keep it in view, off the header */
      list.scrollTop += rb.top - bb.top - list.clientHeight / 2;
    }
    root.setAttribute("data-ply", n);
    try { history.replaceState(null, "", "#ply=" + n); } catch (e) { /* file:// may refuse */ }
  }

  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    playBtn.classList.remove("on");
  }
  function toggle() {
    if (timer !== null) { stop(); return; }
    if (cur >= last) { go(0); }
    playBtn.classList.add("on");
    timer = setInterval(function () { if (cur >= last) { stop(); } else { go(cur + 1); } }, 700);
  }

  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) { return; }
    if (e.key === "ArrowRight") { stop(); go(cur + 1); }
    else if (e.key === "ArrowLeft") { stop(); go(cur - 1); }
    else if (e.key === "Home") { stop(); go(0); }
    else if (e.key === "End") { stop(); go(last); }
    else if (e.key === " ") { toggle(); }
    else { return; }
    e.preventDefault();
  });

  var m = /ply=(\d+)/.exec(location.hash);
  go(m ? Number(m[1]) : last);
})();
