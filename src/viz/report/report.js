// The run report's script (src/viz/report.rs writes the data it reads).
// No library and no network: the timeline is SVG made here, the record
// tables render only the rows in view, the pictures map a click back to
// an element.
"use strict";
(function () {
  var D = JSON.parse(document.getElementById("data").textContent);
  // The integer columns come as delta-run strings (src/viz/report.rs,
  // Json::cols): "0,64x2,0,-121" is [0, 64, 128, 128, 7].
  function expand(s) {
    var out = [], v = 0, parts = s ? s.split(",") : [];
    for (var i = 0; i < parts.length; i++) {
      var p = parts[i], x = p.indexOf("x");
      if (x < 0) { v += Number(p); out.push(v); continue; }
      var d = Number(p.slice(0, x)), n = Number(p.slice(x + 1));
      for (var k = 0; k < n; k++) { v += d; out.push(v); }
    }
    return out;
  }
  D.engines.forEach(function (e) {
    ["offset", "disasm", "did", "cycles", "dma", "runs", "fp"].forEach(function (c) { e[c] = expand(e[c]); });
  });
  ["track", "start", "dur", "kind", "index"].forEach(function (c) { D.slices[c] = expand(D.slices[c]); });
  var $ = function (id) { return document.getElementById(id); };
  var ENGINES = ["pe", "act", "pool", "dve", "sp"];
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }[c];
    });
  }
  function engineOf(name) {
    for (var i = 0; i < D.engines.length; i++) { if (D.engines[i].name === name) { return D.engines[i]; } }
    return null;
  }

  // ---- The record tables -------------------------------------------------
  var ROW = 20;
  var tables = {};
  var selected = null;

  function makeTable(e, ei) {
    var n = e.offset.length;
    var box = document.createElement("div");
    box.className = "vtable";
    box.id = "vt-" + e.name;
    box.setAttribute("data-engine", e.name);
    box.setAttribute("data-rows", String(n));
    box.innerHTML = "<h3>" + e.name.toUpperCase() + ": <span class=\"rowcount\">" + n +
      "</span> records</h3><div class=\"vhead\"><span>#</span><span>offset</span><span>disassembly</span>" +
      "<span>what the emulator did</span><span>runs</span><span>cycles</span></div>" +
      "<div class=\"vview\"><div class=\"vspace\"></div></div>";
    $("tables").appendChild(box);
    var view = box.querySelector(".vview");
    var space = box.querySelector(".vspace");
    space.style.height = (n * ROW) + "px";
    view.style.height = Math.min(300, Math.max(n, 1) * ROW + 2) + "px";
    var t = { e: e, ei: ei, view: view, space: space, first: -1, last: -1 };
    function render() {
      var first = Math.max(0, Math.floor(view.scrollTop / ROW) - 5);
      var last = Math.min(n, Math.ceil((view.scrollTop + view.clientHeight) / ROW) + 5);
      if (first === t.first && last === t.last) { return; }
      t.first = first; t.last = last;
      var html = [];
      for (var i = first; i < last; i++) {
        var cyc = e.cycles[i] + (e.dma[i] ? " +" + e.dma[i] + " DMA" : "");
        var sel = selected && selected.e === e.name && selected.i === i ? " sel" : "";
        html.push("<div class=\"vrow" + sel + "\" data-i=\"" + i + "\" style=\"top:" + (i * ROW) + "px\"><span>" + i +
          "</span><span>" + e.offset[i] + "</span><span>" + esc(D.text[e.disasm[i]]) + "</span><span>" +
          esc(D.text[e.did[i]]) + "</span><span>" + e.runs[i] + "</span><span>" + cyc + "</span></div>");
      }
      space.innerHTML = html.join("");
    }
    t.render = render;
    view.addEventListener("scroll", render);
    space.addEventListener("click", function (ev) {
      var row = ev.target.closest(".vrow");
      if (row) { select(e.name, Number(row.getAttribute("data-i")), false); }
    });
    tables[e.name] = t;
    render();
  }

  function select(engine, i, scroll) {
    var e = engineOf(engine);
    if (!e || i < 0 || i >= e.offset.length) { return; }
    selected = { e: engine, i: i };
    var t = tables[engine];
    if (scroll) { t.view.scrollTop = Math.max(0, i * ROW - t.view.clientHeight / 2); }
    for (var k in tables) { tables[k].first = -1; tables[k].render(); }
    var fp = e.fp[i];
    var fpHtml;
    if (fp >= 0) {
      fpHtml = "<p>Footprint (precomputed: the report draws the first " + D.footprints_precomputed + " of " +
        D.footprints_drawable + " Pool/MaxPoolSelect records):</p><img class=\"footprint\" alt=\"footprint\" src=\"" + D.footprints[fp] + "\">";
    } else if (fp === -1) {
      fpHtml = "<p>No footprint picture: only Pool and MaxPoolSelect records are drawn (<code>viz --footprint</code>).</p>";
    } else if (fp === -2) {
      fpHtml = "<p>Footprint not precomputed (the report draws the first " + D.footprints_precomputed + " of " +
        D.footprints_drawable + " Pool/MaxPoolSelect records). Draw it with:</p><pre>" +
        esc(D.footprint_command.replace("{engine}", engine).replace("{n}", String(i))) + "</pre>";
    } else {
      fpHtml = "<p>No footprint: " + esc(D.fp_error[-3 - fp]) + "</p>";
    }
    $("detail").innerHTML = "<b>" + engine.toUpperCase() + " record " + i + "</b> (byte offset " + e.offset[i] +
      ", executed " + e.runs[i] + " times, " + e.cycles[i] + " virtual cycles on the engine" +
      (e.dma[i] ? ", " + e.dma[i] + " on its DMA queue" : "") + ")<pre>" + esc(D.text[e.disasm[i]]) +
      "</pre><pre>" + esc(D.text[e.did[i]]) + "</pre>" + fpHtml;
    markSlices(engine, i);
  }

  // ---- The timeline ------------------------------------------------------
  var S = D.slices;
  var svg = $("timeline");
  var NAMES = 110, ROWH = 24, AXIS = 22;
  var rows = [0, 1, 2, 3, 4];
  for (var q = 5; q < 10; q++) { if (S.track.indexOf(q) >= 0) { rows.push(q); } }
  var rowOf = {};
  rows.forEach(function (tid, r) { rowOf[tid] = r; });
  var width = 1000, k = 1, pan = 0;
  var end = Math.max(S.end, 1);

  function trackName(tid) {
    return tid < 5 ? ENGINES[tid].toUpperCase() : "DMA " + ENGINES[tid - 5].toUpperCase();
  }

  function buildTimeline() {
    width = Math.max(400, $("tl-box").clientWidth || 1000);
    var h = rows.length * ROWH + AXIS;
    svg.setAttribute("viewBox", "0 0 " + width + " " + h);
    svg.setAttribute("height", String(h));
    var parts = ["<g id=\"tl-plot\">"];
    var n = S.start.length, slices = 0;
    for (var s = 0; s < n; s++) {
      var tid = S.track[s], kind = S.kind[s];
      var cls = kind === 0 ? "slice rec e" + tid : kind === 1 ? "slice wait" : "slice dma";
      parts.push("<rect class=\"" + cls + "\" data-s=\"" + s + "\" x=\"" + S.start[s] + "\" y=\"" +
        (rowOf[tid] * ROWH + 3) + "\" width=\"" + S.dur[s] + "\" height=\"" + (ROWH - 6) + "\"/>");
      slices++;
    }
    for (var f = 0; f < S.flows.length; f++) {
      var a = S.flows[f][0], b = S.flows[f][1];
      var x1 = S.start[a] + S.dur[a], x2 = S.start[b] + S.dur[b];
      parts.push("<line class=\"flow\" vector-effect=\"non-scaling-stroke\" x1=\"" + x1 + "\" y1=\"" +
        (rowOf[S.track[a]] * ROWH + ROWH / 2) + "\" x2=\"" + x2 + "\" y2=\"" + (rowOf[S.track[b]] * ROWH + ROWH / 2) + "\"/>");
    }
    parts.push("</g><g id=\"tl-axis\"></g><rect x=\"0\" y=\"0\" width=\"" + NAMES + "\" height=\"" + h +
      "\" fill=\"#181818\"/><g id=\"tl-names\">");
    rows.forEach(function (tid, r) {
      parts.push("<text x=\"4\" y=\"" + (r * ROWH + 16) + "\">" + trackName(tid) + "</text>");
      parts.push("<line class=\"grid\" x1=\"0\" x2=\"" + width + "\" y1=\"" + (r * ROWH + ROWH - 0.5) + "\" y2=\"" + (r * ROWH + ROWH - 0.5) + "\"/>");
    });
    parts.push("</g>");
    svg.innerHTML = parts.join("");
    svg.setAttribute("data-slices", String(slices));
    var recs = 0;
    for (var s2 = 0; s2 < n; s2++) { if (S.kind[s2] === 0) { recs++; } }
    svg.setAttribute("data-records", String(recs));
    var note = [];
    if (S.left_out) { note.push("the page draws " + n + " slices and leaves out " + S.left_out); }
    if (S.dropped) { note.push("the timeline dropped " + S.dropped + " slices past its limit"); }
    $("tl-note").textContent = note.join("; ");
    fit();
  }

  function fit() { k = (width - NAMES - 10) / end; pan = 0; place(); }

  var pending = false;
  function place() {
    if (pending) { return; }
    pending = true;
    requestAnimationFrame(function () {
      pending = false;
      $("tl-plot").setAttribute("transform", "translate(" + (NAMES + pan) + ",0) scale(" + k + ",1)");
      axis();
    });
  }

  function axis() {
    var y = rows.length * ROWH;
    var lo = -pan / k, hi = (width - NAMES - pan) / k;
    var span = Math.max(hi - lo, 1e-9);
    var step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    if (span / step > 12) { step *= 5; } else if (span / step > 6) { step *= 2; }
    var parts = [];
    for (var c = Math.ceil(Math.max(lo, 0) / step) * step; c <= hi; c += step) {
      var x = NAMES + pan + c * k;
      parts.push("<line class=\"grid\" x1=\"" + x + "\" x2=\"" + x + "\" y1=\"0\" y2=\"" + (y + 4) + "\"/>" +
        "<text x=\"" + (x + 2) + "\" y=\"" + (y + 16) + "\">" + Math.round(c) + "</text>");
    }
    parts.push("<text x=\"4\" y=\"" + (y + 16) + "\">cycles</text>");
    $("tl-axis").innerHTML = parts.join("");
  }

  function sliceText(s) {
    var tid = S.track[s], kind = S.kind[s], i = S.index[s];
    var e = engineOf(ENGINES[tid % 5]);
    var what = kind === 0 ? "record" : kind === 1 ? "wait before record" : "DMA transfer of record";
    return trackName(tid) + ": " + what + " " + i + " at cycle " + S.start[s] + " for " + S.dur[s] +
      " cycles: " + (e ? D.text[e.disasm[i]] : "");
  }

  function markSlices(engine, i) {
    var old = svg.querySelectorAll(".sel");
    for (var o = 0; o < old.length; o++) { old[o].classList.remove("sel"); }
    var tid = ENGINES.indexOf(engine);
    for (var s = 0; s < S.start.length; s++) {
      if (S.index[s] === i && S.kind[s] !== 1 && (S.track[s] === tid || S.track[s] === tid + 5)) {
        var r = svg.querySelector("rect[data-s=\"" + s + "\"]");
        if (r) { r.classList.add("sel"); }
      }
    }
  }

  var drag = null;
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var rect = svg.getBoundingClientRect();
    var mx = (ev.clientX - rect.left) * width / rect.width - NAMES;
    var c = (mx - pan) / k;
    k = Math.min(Math.max(k * Math.pow(1.0015, -ev.deltaY), (width - NAMES - 10) / end / 4), 200);
    pan = mx - c * k;
    place();
  }, { passive: false });
  svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, pan: pan, moved: false }; });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) { return; }
    var rect = svg.getBoundingClientRect();
    var dx = (ev.clientX - drag.x) * width / rect.width;
    if (Math.abs(dx) > 2) { drag.moved = true; }
    pan = drag.pan + dx;
    place();
  });
  window.addEventListener("mouseup", function () { setTimeout(function () { drag = null; }, 0); });
  svg.addEventListener("dblclick", fit);
  $("tl-reset").addEventListener("click", fit);
  svg.addEventListener("mousemove", function (ev) {
    var s = ev.target.getAttribute && ev.target.getAttribute("data-s");
    if (s !== null && s !== undefined) { $("tl-info").textContent = sliceText(Number(s)); }
  });
  svg.addEventListener("click", function (ev) {
    if (drag && drag.moved) { return; }
    var s = ev.target.getAttribute && ev.target.getAttribute("data-s");
    if (s === null || s === undefined) { return; }
    s = Number(s);
    $("tl-info").textContent = sliceText(s);
    select(ENGINES[S.track[s] % 5], S.index[s], true);
  });

  // ---- The variables' pictures -------------------------------------------
  function decode(p, flat) {
    if (!p.values) { return null; }
    if (!p.bytes) {
      var bin = atob(p.values), u = new Uint8Array(bin.length);
      for (var b = 0; b < bin.length; b++) { u[b] = bin.charCodeAt(b); }
      p.bytes = new DataView(u.buffer);
    }
    var v = p.bytes, o = flat * p.size, t = p.dtype;
    var hex = "";
    for (var j = p.size - 1; j >= 0; j--) { hex += ("0" + v.getUint8(o + j).toString(16)).slice(-2); }
    var val;
    switch (t) {
      case "fp32": case "fp32r": val = short32(v.getFloat32(o, true)); break;
      case "fp16": val = short32(half(v.getUint16(o, true))); break;
      case "bf16": { var dv = new DataView(new ArrayBuffer(4)); dv.setUint32(0, v.getUint16(o, true) << 16 >>> 0); val = short32(dv.getFloat32(0)); break; }
      case "int8": val = v.getInt8(o); break;
      case "uint8": val = v.getUint8(o); break;
      case "int16": val = v.getInt16(o, true); break;
      case "uint16": val = v.getUint16(o, true); break;
      case "int32": val = v.getInt32(o, true); break;
      case "uint32": val = v.getUint32(o, true); break;
      case "int64": val = v.getBigInt64(o, true); break;
      case "uint64": val = v.getBigUint64(o, true); break;
      default: val = "(no decoding in the page)";
    }
    return String(val) + " (bits 0x" + hex + ")";
  }
  // The shortest decimal that reads back as the same f32 (as Rust prints it).
  function short32(x) {
    if (!isFinite(x)) { return String(x); }
    for (var p = 1; p < 10; p++) {
      var t = x.toPrecision(p);
      if (Math.fround(Number(t)) === x) { return String(Number(t)); }
    }
    return String(x);
  }
  function half(h) {
    var s = h >> 15 ? -1 : 1, e = (h >> 10) & 31, f = h & 1023;
    if (e === 0) { return s * f * Math.pow(2, -24); }
    if (e === 31) { return f ? NaN : s * Infinity; }
    return s * (1 + f / 1024) * Math.pow(2, e - 15);
  }

  function pick(fig, p, ev) {
    var img = fig.querySelector("img");
    var px = Math.floor(ev.offsetX * img.naturalWidth / img.clientWidth);
    var py = Math.floor(ev.offsetY * img.naturalHeight / img.clientHeight);
    var g = p.geometry;
    var col = Math.floor((px - g.gap) / (g.cell_w + g.gap)), row = Math.floor((py - g.gap) / (g.cell_h + g.gap));
    var x0 = px - g.gap - col * (g.cell_w + g.gap), y0 = py - g.gap - row * (g.cell_h + g.gap) - g.label_h;
    var ex = Math.floor(x0 / g.sx), ey = Math.floor(y0 / g.sy), plane = row * g.cols + col;
    var out = fig.querySelector(".pick");
    if (col < 0 || col >= g.cols || x0 < 0 || y0 < 0 || ex >= p.dw || ey >= p.dh || plane >= g.planes) {
      out.textContent = "not an element (a label, a gap or the colour bar)";
      return;
    }
    var y = ey * p.stride, x = ex * p.stride;
    show(fig, p, plane * p.h * p.w + y * p.w + x);
  }

  // What element `flat` (C order) of picture `p` is: index, value, provenance.
  function show(fig, p, flat) {
    var out = fig.querySelector(".pick");
    var idx = [], rest = flat;
    for (var a = p.shape.length - 1; a >= 0; a--) { idx.unshift(rest % p.shape[a]); rest = Math.floor(rest / p.shape[a]); }
    var elem = p.name + "[" + idx.join(",") + "]";
    var value = decode(p, flat);
    var html = "<b>" + esc(elem) + "</b> (flat index " + flat + ")<br>value: ";
    if (value !== null) {
      html += "<code class=\"value\">" + esc(value) + "</code>";
    } else {
      var file = D.output_files[p.name];
      html += "not embedded in this report (over its budget)" + (file ?
        "; read it with <code>" + esc("python3 -c \"import numpy as np; print(np.load('" + file + "')[" + idx.join(",") + "])\"") + "</code>" : "");
    }
    var chain = D.why && D.why.chains[p.name] && D.why.chains[p.name][flat];
    if (chain) {
      var lines = chain.map(function (i) { return D.why.lines[i] + "\n"; }).join("");
      html += "<br>provenance (as <code>tpb-emu why</code> prints it):<pre class=\"why-chain\">" + esc(lines) + "</pre>";
    } else {
      html += "<br>provenance: not precomputed \u2014 " + (D.why_command ?
        "run <code class=\"why\">" + esc(D.why_command.replace("{elem}", elem)) + "</code>" :
        "<code>tpb-emu why</code> reruns programs and NEFFs, not this command") +
        (D.why_note ? " (" + esc(D.why_note) + ")" : "");
    }
    out.innerHTML = html;
    out.setAttribute("data-index", idx.join(","));
  }

  var figs = document.querySelectorAll("figure.var");
  for (var fi = 0; fi < figs.length; fi++) {
    (function (fig) {
      var p = D.pictures[Number(fig.getAttribute("data-var"))];
      fig.querySelector("img").addEventListener("click", function (ev) { pick(fig, p, ev); });
    })(figs[fi]);
  }

  D.engines.forEach(function (e, ei) { if (e.offset.length) { makeTable(e, ei); } });
  buildTimeline();

  // A link may open the page with a record selected and an element shown:
  // #select=pool:0&pick=y_avg:0,1 (the tests and docs' screenshots use it).
  location.hash.slice(1).split("&").forEach(function (part) {
    var kv = part.split("="), v = decodeURIComponent(kv[1] || "");
    if (kv[0] === "select" && v.indexOf(":") > 0) {
      select(v.split(":")[0], Number(v.split(":")[1]), true);
    } else if (kv[0] === "pick" && v.indexOf(":") > 0) {
      var name = v.split(":")[0], idx = v.split(":")[1].split(",").map(Number);
      for (var f = 0; f < figs.length; f++) {
        var p = D.pictures[Number(figs[f].getAttribute("data-var"))];
        if (p.name !== name || idx.length !== p.shape.length) { continue; }
        var flat = 0;
        for (var a = 0; a < idx.length; a++) { flat = flat * p.shape[a] + idx[a]; }
        show(figs[f], p, flat);
      }
    }
  });
  $("status").textContent = "ready";
  $("tti").textContent = "(interactive " + Math.round(performance.now()) + " ms after navigation)";
  $("tti").setAttribute("data-ms", String(Math.round(performance.now())));
})();
