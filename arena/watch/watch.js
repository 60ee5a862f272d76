/* arena watch: follows /events (server-sent events, one JSON state per change) and draws it.
 * Vanilla JavaScript, no library.  Text from bots and names is only ever set with
 * textContent or as an attribute's value; no handler is written inline (the page runs
 * under a CSP without inline script).  The boards are the report viewer's (board.js and
 * viewer.css, served beside this script), drawn from the viewer's own data for the last ply. */
(function () {
  "use strict";
  var NAMES = ["white", "black"];
  var params = new URLSearchParams(location.search);
  var projector = params.get("layout") === "projector";
  var last = null;

  if (projector) {
    document.body.classList.add("projector");
    var link = document.getElementById("layout-link");
    link.textContent = "Normal layout";
    link.setAttribute("href", "?");
  }

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text, parent) {
    var e = document.createElement(tag);
    for (var k in attrs) { if (attrs[k] !== null && attrs[k] !== undefined) { e.setAttribute(k, attrs[k]); } }
    if (text !== undefined && text !== null) { e.textContent = text; }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  var svg = MorrisBoard.svg;
  function show(id, on) { $(id).hidden = !on; }
  function num(v, digits) {
    if (v === null || v === undefined || (typeof v === "number" && isNaN(v))) { return "–"; }
    if (typeof v !== "number") { return String(v); }
    return digits === undefined ? String(v) : v.toFixed(digits);
  }
  function signed(v, digits) {
    if (v === null || v === undefined || typeof v !== "number" || isNaN(v)) { return "–"; }
    var s = v.toFixed(digits || 0);
    return (v > 0 ? "+" : "") + (s === "-0" ? "0" : s);
  }

  /* -- the boards of the games in progress ---------------------------------------------- */
  function scoreText(e) {
    if (!e) { return ""; }
    var s = e.w !== undefined ? "+M" + e.w : e.l !== undefined ? "-M" + e.l :
      e.s !== undefined ? signed(e.s) : "";
    return s + (e.d !== undefined ? "/" + e.d : "");
  }
  function whiteView(game) {  /* the latest score, from White's side, for the bar */
    var best = null;
    [0, 1].forEach(function (c) {
      var e = game.search[c];
      if (!e) { return; }
      var sign = c === 0 ? 1 : -1;
      var v = e.w !== undefined ? sign * 1e6 : e.l !== undefined ? -sign * 1e6 :
        e.s !== undefined ? sign * e.s : null;
      if (v !== null && (best === null || c === game.ply.by)) { best = v; }
    });
    return best;
  }
  function drawGame(game, pairs) {  /* pairs: an SPRT's games, numbered by pair */
    var box = el("article", {class: "game", "data-game": game.id, "data-ply": game.plies,
                             "aria-label": game.white + " vs " + game.black});
    var who = el("div", {class: "who"}, null, box);
    var toMove = game.ply.t;
    el("span", {class: toMove === 0 ? "tomove" : null, title: "white"}, "\u25cb " + game.white, who);
    el("span", {class: toMove === 1 ? "tomove" : null, title: "black"}, game.black + " \u25cf", who);
    var link = el("a", {class: "open", href: "/game?id=" + encodeURIComponent(game.id),
                        title: "open this game in the viewer"}, null, box);
    var board = MorrisBoard.create(link, game.points, game.edges);  /* the report's board.js */
    board.svg.setAttribute("aria-label", "board after ply " + game.plies);
    MorrisBoard.draw(board, game.ply, game.plies > 0);
    var v = whiteView(game);
    var bar = el("div", {class: "evalbar", title: v === null ? "no score sent yet" :
                         "White's view of the last score: " + signed(v)}, null, box);
    var share = v === null ? 50 : 100 / (1 + Math.exp(-v / 300));
    el("div", {class: "white", style: null}, null, bar).style.width = share.toFixed(1) + "%";
    el("div", {class: "mid"}, null, bar);
    var s = [0, 1].map(function (c) { return NAMES[c] + " " + (scoreText(game.search[c]) || "–"); });
    el("div", {class: "search", title: "each side's last score/depth, from its own view"},
       s.join(" \u00b7 "), box);
    el("div", {class: "meta"}, game.variant + (game.round !== null ? (pairs ? ", pair " :
       ", round ") + game.round : "") +
       " \u00b7 ply " + game.plies + (game.ply.m ? ": " + NAMES[game.ply.by] + " " + game.ply.m : ""),
       box);
    return box;
  }
  function drawBoards(live, kind) {
    var boxes = $("boards");
    boxes.textContent = "";
    live.forEach(function (g) { boxes.appendChild(drawGame(g, kind === "sprt")); });
    show("boards-section", live.length > 0);
  }

  /* -- tables --------------------------------------------------------------------------- */
  function table(parent, caption, heads, rows, nameCols) {
    var wrap = el("div", {class: "scroll"}, null, parent);
    var t = el("table", {class: "t"}, null, wrap);
    if (caption) { el("caption", {}, caption, t); }
    var tr = el("tr", {}, null, el("thead", {}, null, t));
    heads.forEach(function (h, i) { el("th", {class: nameCols.indexOf(i) >= 0 ? "name" : null, scope: "col"}, h, tr); });
    var body = el("tbody", {}, null, t);
    rows.forEach(function (r) {
      var row = el("tr", {}, null, body);
      r.forEach(function (v, i) {
        var cell = el("td", {class: nameCols.indexOf(i) >= 0 ? "name" : null}, null, row);
        if (v && typeof v === "object" && v.text !== undefined) {
          cell.textContent = v.text;
          if (v.cls) { cell.className += " " + v.cls; }
          if (v.title) { cell.title = v.title; }
        } else { cell.textContent = v === null || v === undefined ? "–" : String(v); }
      });
    });
    return t;
  }
  function pct(v) { return v === null || v === undefined ? "–" : num(v, 1) + " %"; }
  function drawStandings(f) {
    var box = $("standings");
    box.textContent = "";
    var tables = f.standings || [];
    var holder = el("div", {class: "tables"}, null, box);
    tables.forEach(function (t) {
      var rows = t.rows.map(function (r) {
        return [r.place, r.name, r.games, r.wins, r.draws, r.losses, num(r.points), pct(r.score)];
      });
      table(holder, tables.length > 1 ? t.variant : "", ["#", "bot", "games", "won", "drawn",
            "lost", "points", "score"], rows, [1]).setAttribute("data-variant", t.variant);
    });
    show("standings-note", tables.some(function (t) { return t.ranked_by === "bracket"; }));
    show("standings-section", tables.length > 0);
  }
  /* a knockout's bracket: the report's own picture, made by arena watch from the run's
     files (names escaped there); parsed as SVG, not HTML, and drawn again only when it
     changed (it comes without an inline style: this page's CSP allows none). */
  var bracketText = null;
  function drawBracket(f) {
    var b = f.bracket;
    show("bracket-section", !!b);
    if (!b) { bracketText = null; return; }
    $("champion").textContent = b.champion ? "Champion: " + b.champion :
      "No champion yet: a match's winner goes through to the next round.";
    if (b.svg === bracketText) { return; }
    var doc = new DOMParser().parseFromString(b.svg, "image/svg+xml");
    var root = doc.documentElement;
    if (root.nodeName !== "svg") { return; }  /* not a picture: keep the last one */
    var box = $("bracket");
    box.textContent = "";
    box.appendChild(document.importNode(root, true));
    bracketText = b.svg;
  }
  function drawElo(f) {
    var box = $("elo");
    box.textContent = "";
    var e = f.elo, tables = (e && e.tables) || [];
    var holder = el("div", {class: "tables"}, null, box);
    tables.forEach(function (t) {
      table(holder, tables.length > 1 ? t.label : "", ["#", "bot", "Elo", "95 % interval",
            "games", "W-D-L", "points"], t.rows.map(function (r) {
        return [r.place, r.name, r.prior ? {text: signed(r.elo), title: "too few results " +
                "for a fit: the prior's value"} : signed(r.elo),
                signed(r.low95) + " \u2026 " + signed(r.high95), r.games,
                r.wins + "-" + r.draws + "-" + r.losses, num(r.points)];
      }), [1]);
    });
    $("elo-note").textContent = e ? (e.error ? "The Elo fit failed: " + e.error :
      "Fitted on " + e.games + " games at " + new Date(e.computed * 1000).toLocaleTimeString() +
      " (again every few seconds while games come in).") : "";
    show("elo-section", tables.length > 0);
  }
  function drawCross(f) {
    var box = $("crosstable");
    box.textContent = "";
    var list = (f.crosstable || []).filter(function (c) { return c.bots.length >= 2 && c.bots.length <= 24; });
    list.forEach(function (c) {
      var rows = c.bots.map(function (a, i) {
        return [a].concat(c.bots.map(function (b, j) {
          if (i === j) { return {text: "", cls: "self"}; }
          var g = c.games[i][j];
          return g ? {text: num(c.points[i][j]) + "/" + g, title: a + " against " + b + ": " +
                      num(c.points[i][j]) + " points of " + g + " games"} : "";
        }));
      });
      table(box, (list.length > 1 ? c.variant + ": " : "") + "points of the row's bot " +
            "against the column's, of the games played", ["bot"].concat(c.bots), rows, [0]);
    });
    show("cross-section", list.length > 0);
  }
  function gameText(g) { return g.white + " \u2013 " + g.black + " " + g.result; }
  function drawRecent(f) {
    var list = $("recent");
    list.textContent = "";
    var recent = f.recent || [];
    recent.slice().reverse().forEach(function (g) {
      var li = el("li", {}, null, list);
      el("a", {href: "/game?id=" + encodeURIComponent(g.id)}, gameText(g), li);
      li.appendChild(document.createTextNode(" (" + g.termination + ", " + g.plies + " plies)" +
                                             (g.upset ? " \u2014 an upset" : "")));
    });
    var u = $("upset"), g = f.last_upset;
    u.textContent = "";
    if (g) {
      var won = g.result === "1-0" ? g.white : g.black, lost = g.result === "1-0" ? g.black : g.white;
      u.appendChild(document.createTextNode("Last upset: " + won + " beat " + lost +
        (g.gap !== null && g.gap !== undefined ? ", rated " + num(g.gap, 0) + " Elo higher" : "") + " \u2014 "));
      el("a", {href: "/game?id=" + encodeURIComponent(g.id)}, gameText(g), u);
    }
    u.hidden = !g;
    show("recent-section", recent.length > 0);
  }

  /* -- charts (LLR, Elo, parameters): an SVG line over games --------------------------- */
  function chart(node, series, opts) {
    node.textContent = "";
    var W = 640, H = 260, L = 52, Rm = 16, T = 14, B = 30;
    var xs = [], ys = [];
    series.forEach(function (p) { xs.push(p[0]); ys.push(p[1]); if (p.length > 3) { ys.push(p[2], p[3]); } });
    (opts.lines || []).forEach(function (l) { ys.push(l.y); });
    if (!xs.length) { return; }
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    if (x1 === x0) { x1 = x0 + 1; }
    if (y1 === y0) { y0 -= 1; y1 += 1; }
    var padY = (y1 - y0) * 0.06; y0 -= padY; y1 += padY;
    function X(v) { return L + (W - L - Rm) * (v - x0) / (x1 - x0); }
    function Y(v) { return T + (H - T - B) * (1 - (v - y0) / (y1 - y0)); }
    svg("line", {class: "axis", x1: L, y1: H - B, x2: W - Rm, y2: H - B}, node);
    svg("line", {class: "axis", x1: L, y1: T, x2: L, y2: H - B}, node);
    [y0 + padY, (y0 + y1) / 2, y1 - padY].forEach(function (v) {
      svg("line", {class: "grid", x1: L, y1: Y(v), x2: W - Rm, y2: Y(v)}, node);
      svg("text", {x: 4, y: Y(v) + 4}, node).textContent = num(v, Math.abs(y1 - y0) < 10 ? 2 : 0);
    });
    svg("text", {x: L, y: H - 8}, node).textContent = num(x0);
    var xt = svg("text", {x: W - Rm, y: H - 8, "text-anchor": "end"}, node);
    xt.textContent = num(x1) + " " + (opts.xname || "games");
    (opts.lines || []).forEach(function (l) {
      svg("line", {class: l.cls, x1: L, y1: Y(l.y), x2: W - Rm, y2: Y(l.y)}, node);
      svg("text", {x: W - Rm - 4, y: Y(l.y) - 4, "text-anchor": "end"}, node).textContent = l.label;
    });
    if (series.length && series[0].length > 3) {
      var up = series.map(function (p) { return X(p[0]) + "," + Y(p[3]); });
      var down = series.slice().reverse().map(function (p) { return X(p[0]) + "," + Y(p[2]); });
      svg("polygon", {class: "band", points: up.concat(down).join(" ")}, node);
    }
    svg("polyline", {class: "line", points: series.map(function (p) { return X(p[0]) + "," + Y(p[1]); }).join(" "),
                     "data-points": series.length}, node);
    var end = series[series.length - 1];
    svg("circle", {class: "end", cx: X(end[0]), cy: Y(end[1]), r: 4}, node);
  }
  function drawSprt(f) {
    var s = f.sprt;
    show("sprt-section", !!s);
    if (!s) { return; }
    var llr = s.llr || [], elo = s.elo || [];
    var now = llr.length ? llr[llr.length - 1][1] : 0;
    var e = elo.length ? elo[elo.length - 1] : null;
    var wdl = s.wdl || [0, 0, 0];
    $("sprt-summary").textContent = s.a + " vs " + s.b + ": LLR " + num(now, 2) + " (" +
      num(s.lower, 2) + ", " + num(s.upper, 2) + ") for H0 Elo " + num(s.elo0) + " against H1 " +
      num(s.elo1) + (e ? " \u00b7 Elo " + signed(e[1], 1) + " [" + signed(e[2], 1) + ", " + signed(e[3], 1) + "]" : "") +
      " \u00b7 W-D-L " + wdl.join("-") + (s.verdict ? " \u00b7 verdict: " + s.verdict : " \u00b7 no verdict yet");
    chart($("llr-chart"), llr, {lines: [{y: s.upper, cls: "bound", label: "accept H1 " + num(s.upper, 2)},
                                        {y: s.lower, cls: "bound", label: "accept H0 " + num(s.lower, 2)},
                                        {y: 0, cls: "zero", label: ""}]});
    chart($("elo-chart"), elo, {lines: [{y: 0, cls: "zero", label: ""}]});
  }
  function drawTune(f) {
    var t = f.tune;
    show("tune-section", !!t);
    if (!t) { return; }
    var box = $("tune-charts");
    box.textContent = "";
    var names = Object.keys(t.params || {});
    $("tune-summary").textContent = (t.bot ? t.bot + ": " : "") + (t.iterations || 0) +
      " of " + num(t.total_iterations) + " iterations; now " + names.map(function (n) {
        var s = t.params[n];
        return n + " " + (s.length ? num(s[s.length - 1][1], 2) : "–");
      }).join(", ");
    names.forEach(function (n) {
      var fig = el("figure", {}, null, box);
      var range = t.ranges && t.ranges[n];
      el("figcaption", {}, n + " by iteration" + (range ? " (range " + range[0] + " to " + range[1] + ")" : ""), fig);
      var node = svg("svg", {class: "chart", viewBox: "0 0 640 260", role: "img",
                             "aria-label": n + " by iteration"}, fig);
      chart(node, t.params[n], {xname: "iterations"});
    });
  }

  /* -- the whole page ------------------------------------------------------------------- */
  function drawStatus(s) {
    var f = s.follow || {};
    document.title = (f.title ? f.title + " \u00b7 " : "") + "arena watch";
    $("title").textContent = f.title || s.folder;
    var st = $("status");
    st.textContent = "";
    if (s.running) { el("span", {class: "live"}, "\u25cf running", st); }
    else if (f.finished) { el("span", {}, "finished", st); }
    else { el("span", {class: "stopped"}, "not running", st); }
    var kind = {tournament: "tournament", sprt: "SPRT", tune: "SPSA tuning"}[f.kind] || "results";
    st.appendChild(document.createTextNode(" \u00b7 " + kind + " \u00b7 " + (f.games || 0) +
      (f.total ? " of " + f.total :
       f.total_least && !f.finished ? " of at least " + f.total_least : "") +
      " games" + (s.live && s.live.length ? " \u00b7 " +
      s.live.length + " being played" : "") + (f.bad_lines ? " \u00b7 " + f.bad_lines +
      " unreadable lines" : "")));
    st.setAttribute("data-games", f.games || 0);
    var total = f.total || (f.finished ? f.games : f.total_least);
    if (total) {
      show("progress", true);
      $("progress-bar").style.width = Math.min(100, 100 * (f.games || 0) / total).toFixed(1) + "%";
    } else { show("progress", false); }
  }
  function draw(s) {
    var f = s.follow || {};
    drawStatus(s);
    drawBoards(s.live || [], f.kind);
    drawSprt(f);
    drawTune(f);
    drawBracket(f);
    drawStandings(f);
    drawElo(f);
    drawCross(f);
    drawRecent(f);
    document.body.setAttribute("data-version", s.version);
  }

  function follow() {
    var source = new EventSource("/events");
    source.onmessage = function (e) {
      var s = JSON.parse(e.data);
      if (last !== null && s.version === last) { return; }
      last = s.version;
      draw(s);
    };
    source.addEventListener("end", function () {
      source.close();  /* arena watch stopped (with its run, for --watch): the last state stays */
      var st = $("status");
      st.appendChild(document.createTextNode(" \u00b7 this page no longer follows the folder " +
                                             "(arena watch has stopped): reload to see it again"));
      document.body.setAttribute("data-ended", "1");
    });
    source.onerror = function () {
      /* refused (503: too many pages) rather than dropped: try again later */
      if (source.readyState === EventSource.CLOSED) { setTimeout(follow, 5000); }
    };
  }
  follow();
})();
