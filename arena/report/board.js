/* Morris Arena's board as SVG: shared by the report's game viewer (viewer.js, inlined before
 * it in every game page) and arena watch's live boards (watch.js).  It knows no rules: it
 * draws a board's points and lines, then one ply of the viewer's data: b (a character per
 * point: W, B, . or X for a point marked while placing), s and d (the move's from and to
 * points; d null for a turn that only removes men), c (the points captured), v (whose men
 * they were), ml (the mills the move formed, as pairs of end points).  Nothing from a bot
 * is drawn but its moves' points. */
var MorrisBoard = (function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var FILES = "abcdefg", STEP = 60, PAD = 40, R = 17, MARK = ["W", "B"];

  function svg(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }

  /* A board of `points` (names: a1 ... g7) and `edges` (index pairs), drawn into `parent`
   * with its file and rank labels; its men go into a layer (given the id `layerId`, if any). */
  function create(parent, points, edges, layerId) {
    function xy(i) {
      var p = points[i];
      return [PAD + STEP * FILES.indexOf(p[0]), PAD + STEP * (7 - Number(p[1]))];
    }
    var size = 2 * PAD + 6 * STEP;
    var board = svg("svg", {class: "board", viewBox: "0 0 " + size + " " + size,
                            role: "img", "aria-label": "board"}, parent);
    edges.forEach(function (e) {
      var a = xy(e[0]), b = xy(e[1]);
      svg("line", {class: "edge", x1: a[0], y1: a[1], x2: b[0], y2: b[1]}, board);
    });
    var files = {}, ranks = {};
    points.forEach(function (p, i) {
      var c = xy(i);
      svg("circle", {class: "spot", cx: c[0], cy: c[1], r: 5}, board);
      files[p[0]] = c[0]; ranks[p[1]] = c[1];
    });
    Object.keys(files).forEach(function (f) {
      svg("text", {class: "label", x: files[f] - 4, y: size - 8}, board).textContent = f;
    });
    Object.keys(ranks).forEach(function (r) {
      svg("text", {class: "label", x: 8, y: ranks[r] + 5}, board).textContent = r;
    });
    var layer = svg("g", layerId ? {id: layerId} : {}, board);
    return {svg: board, layer: layer, xy: xy, points: points};
  }

  /* Draw ply `p` on board `b` (made by create), the move's marks too when `moved` (not the
   * start); returns the names of the points it captured and of the points marked. */
  function draw(b, p, moved) {
    var layer = b.layer, xy = b.xy, points = b.points;
    while (layer.firstChild) { layer.removeChild(layer.firstChild); }
    (p.ml || []).forEach(function (ends) {  /* a mill the move formed, under the men */
      var a = xy(ends[0]), e = xy(ends[1]);
      svg("line", {class: "mill", x1: a[0], y1: a[1], x2: e[0], y2: e[1]}, layer);
    });
    var marked = [], caps = [];
    for (var i = 0; i < p.b.length; i++) {
      var ch = p.b.charAt(i);
      if (ch === ".") { continue; }
      var c = xy(i);
      if (ch === "X") {  /* a man captured while placing: its point stays blocked */
        marked.push(points[i]);
        svg("rect", {class: "marked", x: c[0] - 13, y: c[1] - 13, width: 26, height: 26, rx: 3,
                     "data-marked": points[i]}, layer);
        svg("path", {class: "markx", d: "M" + (c[0] - 8) + " " + (c[1] - 8) + "l16 16m0 -16l-16 16"},
            layer);
        continue;
      }
      svg("circle", {class: "man " + ch, cx: c[0], cy: c[1], r: R, "data-point": points[i],
                     "data-color": ch}, layer);
    }
    if (moved) {
      if (p.s !== undefined && p.s !== null) {
        var s = xy(p.s);
        svg("circle", {class: "from", cx: s[0], cy: s[1], r: R + 3}, layer);
      }
      if (p.d !== null && p.d !== undefined) {
        var d = xy(p.d);
        svg("circle", {class: "last", cx: d[0], cy: d[1], r: R + 4}, layer);
      }
      (p.c || []).forEach(function (k) {
        var c = xy(k);
        caps.push(points[k]);
        svg("circle", {class: "captured " + MARK[p.v], cx: c[0], cy: c[1], r: R,
                       "data-captured": points[k], "data-color": MARK[p.v]}, layer);
        svg("path", {class: "cross", d: "M" + (c[0] - 9) + " " + (c[1] - 9) + "l18 18m0 -18l-18 18"},
            layer);
      });
    }
    return {caps: caps, marked: marked};
  }

  return {create: create, draw: draw, svg: svg};
})();
