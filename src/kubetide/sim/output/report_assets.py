"""The report's inline stylesheet and script, kept apart from the Python that writes the markup.

The script does three small things and nothing else: the hover readout on plots, the event log's source
and text filters (also settable from the URL: ``report.html#sources=hpa,cluster-autoscaler``), and
marking the page as ready (``<body data-ready="1">``) or failed (``data-js-error``), which the browser
test reads from the DOM.
"""

from __future__ import annotations

__all__ = ["CSP", "SCRIPT", "SOURCE_COLORS", "STYLE"]

# The page may load nothing from anywhere: what it shows is in the file, or not shown.
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

SOURCE_COLORS: dict[str, str] = {
    "scenario": "#6b7280",
    "cloud": "#0f766e",
    "kubelet": "#92400e",
    "scheduler": "#6d28d9",
    "controller": "#475569",
    "hpa": "#c2410c",
    "cluster-autoscaler": "#1d4ed8",
    "escalator": "#15803d",
}

_SOURCE_CSS = "\n".join(f".src-{name}{{background:{color}}}" for name, color in SOURCE_COLORS.items())

STYLE = (
    """
:root{--fg:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f6f7f9;--card:#fff;--accent:#1d4ed8}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 color:var(--fg);background:var(--bg)}
header{background:#111827;color:#f9fafb;padding:18px 28px 16px}
header h1{margin:0;font-size:22px;font-weight:650;letter-spacing:.2px}
header .sub{color:#9ca3af;margin-top:4px;font-size:13px}
header .sub b{color:#e5e7eb;font-weight:600}
main{max-width:1480px;margin:0 auto;padding:18px 24px 40px}
h2{font-size:16px;margin:28px 0 10px;font-weight:650}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:12px}
.kpi{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
.kpi .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.5px}
.kpi .value{font-size:24px;font-weight:650;margin-top:2px;font-variant-numeric:tabular-nums}
.kpi .detail{color:var(--muted);font-size:12px;margin-top:2px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:14px}
.chart{margin:0;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px 6px;
 display:flex;flex-direction:column}
.chart .plot{margin-top:auto}
.chart figcaption h3{margin:0;font-size:14px;font-weight:650}
.chart .note{margin:2px 0 0;color:var(--muted);font-size:12px}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:8px 0 2px;font-size:12px;color:#374151}
.key{display:inline-flex;align-items:center;gap:6px}
.charts-legend{margin:-4px 0 10px;color:var(--muted)}
.sw{display:inline-block;flex:none}
.plot{position:relative}
.plot-svg{display:block;width:100%;height:auto;overflow:visible}
.plot-svg text{font-size:11px;fill:#6b7280;font-family:inherit}
.grid line{stroke:#eef0f3;stroke-width:1}
.axis{stroke:#9ca3af;stroke-width:1}
.xtick line{stroke:#9ca3af}
.xtick text{text-anchor:middle}
.ytick text{text-anchor:end}
.ylabel{text-anchor:middle;font-size:11px}
.line{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}
.area{opacity:.13;stroke:none}
.rule line{stroke-width:2;stroke-dasharray:2 4}
.tip i.dash{background:none!important;height:0;border-top:2px dashed}
.marker line{stroke:#9ca3af;stroke-width:1;stroke-dasharray:1 3}
.marker path{fill:#9ca3af}
.marker.decision line{stroke:#2563eb}
.marker.decision path{fill:#2563eb}
.marker.recorded line{stroke:#b45309}
.marker.recorded path{fill:#b45309}
.guide{stroke:#111827;stroke-width:1;opacity:.35}
.tip{position:absolute;top:8px;pointer-events:none;background:rgba(17,24,39,.92);color:#f9fafb;
 border-radius:6px;padding:6px 9px;font-size:12px;line-height:1.5;white-space:nowrap;z-index:2}
.tip i{display:inline-block;width:10px;height:3px;margin-right:6px;vertical-align:middle}
.tip span{float:right;margin-left:14px;font-variant-numeric:tabular-nums}
.tables{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:14px;align-items:start}
.span2{grid-column:span 2}.span3{grid-column:1/-1}
@media (max-width:1000px){.tables{grid-template-columns:minmax(0,1fr)}.span2,.span3{grid-column:auto}}
.panel{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
.panel h3{margin:0 0 8px;font-size:14px}
table.data{border-collapse:collapse;width:100%;font-size:13px}
table.data th,table.data td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:left}
table.data th{color:var(--muted);font-weight:600;font-size:12px;white-space:nowrap}
table.data td:first-child{white-space:nowrap}
.panel{overflow-x:auto}
table.data tr:last-child td{border-bottom:none}
table.data tr.total td{font-weight:650;border-top:2px solid var(--line)}
.num{text-align:right!important;font-variant-numeric:tabular-nums}
.dot{display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:7px;vertical-align:-1px}
.muted{color:var(--muted)}.small{font-size:12px}
code{background:#eef0f3;border-radius:4px;padding:0 4px;font-size:12px}
.src{display:inline-block;color:#fff;border-radius:4px;padding:0 6px;font-size:11px;font-weight:600;
 line-height:18px;white-space:nowrap}
.event-controls{display:flex;flex-wrap:wrap;gap:10px 16px;align-items:center}
.src-filters{display:flex;flex-wrap:wrap;gap:6px 14px}
.src-filter{display:inline-flex;align-items:center;gap:5px;cursor:pointer;font-size:12px}
.src-filter small{color:var(--muted)}
#event-search{flex:1;min-width:240px;padding:6px 10px;border:1px solid #d1d5db;border-radius:6px;font:inherit}
.event-scroll{max-height:640px;overflow:auto;background:var(--card);border:1px solid var(--line);
 border-radius:10px}
table.events{border-collapse:collapse;width:100%;font-size:12.5px;table-layout:fixed}
table.events col.c-t{width:84px}table.events col.c-src{width:150px}table.events col.c-reason{width:210px}
table.events col.c-obj{width:28%}
table.events th{position:sticky;top:0;background:#f9fafb;text-align:left;color:var(--muted);font-weight:600;
 padding:7px 10px;border-bottom:1px solid var(--line);z-index:1}
table.events td{padding:4px 10px;border-bottom:1px solid #f1f2f4;vertical-align:top}
table.events td.t{font-variant-numeric:tabular-nums;color:var(--muted);white-space:nowrap}
table.events td.obj{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;word-break:break-all}
table.events tr.warn td:first-child{box-shadow:inset 3px 0 0 #f59e0b}
table.events tr.warn{background:#fffbeb}
table.events tr.gap td{text-align:center;color:var(--muted);background:#f9fafb;padding:8px}
.count{color:var(--muted);font-size:11px}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:30px}
"""
    + _SOURCE_CSS
)

SCRIPT = r"""
(function(){
"use strict";
window.addEventListener("error", function(e){
  document.body.setAttribute("data-js-error", String(e.message || e));
});
function clock(s){
  s = Math.round(s); var h = Math.floor(s/3600), m = Math.floor(s%3600/60), x = s%60;
  return h + ":" + (m<10?"0":"") + m + ":" + (x<10?"0":"") + x;
}
function fmt(v, u){
  if (v === null || v === undefined) return "–";
  if (u === "$") return "$" + v.toFixed(2);
  var r = Math.abs(v) >= 100 ? v.toFixed(0) : String(Math.round(v*100)/100);
  return u === "%" ? r + "%" : r;
}
function esc(s){ return String(s).replace(/[&<>"]/g, function(c){
  return {"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c]; }); }

document.querySelectorAll(".plot[data-hover]").forEach(function(plot){
  var d = JSON.parse(plot.getAttribute("data-hover"));
  var svg = plot.querySelector("svg"), guide = svg.querySelector(".guide"), tip = plot.querySelector(".tip");
  var x0 = +plot.dataset.x0, x1 = +plot.dataset.x1, vbw = +plot.dataset.vbw, tmax = +plot.dataset.tmax;
  function hide(){ guide.setAttribute("visibility", "hidden"); tip.hidden = true; }
  svg.addEventListener("mousemove", function(ev){
    var r = svg.getBoundingClientRect(), vx = (ev.clientX - r.left) / r.width * vbw;
    if (vx < x0 || vx > x1 || !d.t.length){ hide(); return; }
    var t = (vx - x0) / (x1 - x0) * tmax, lo = 0, hi = d.t.length - 1;
    while (hi - lo > 1){ var mid = (lo + hi) >> 1; if (d.t[mid] <= t) lo = mid; else hi = mid; }
    var i = (t - d.t[lo] <= d.t[hi] - t) ? lo : hi;
    var gx = x0 + d.t[i] / tmax * (x1 - x0);
    guide.setAttribute("x1", gx); guide.setAttribute("x2", gx); guide.setAttribute("visibility", "visible");
    var html = "<b>" + clock(d.t[i]) + "</b>";
    d.s.forEach(function(s){
      var key = "<i" + (s.d ? " class=\"dash\"" : "") + " style=\"background:" + s.c + ";border-color:" + s.c + "\"></i>";
      html += "<div>" + key + esc(s.l) + "<span>" + fmt(s.v[i], d.u) + "</span></div>";
    });
    tip.innerHTML = html; tip.hidden = false;
    var px = (gx / vbw) * r.width, w = tip.offsetWidth;
    tip.style.left = (px + 14 + w > r.width ? px - 14 - w : px + 14) + "px";
  });
  svg.addEventListener("mouseleave", hide);
});

var table = document.getElementById("events");
if (table){
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var boxes = Array.prototype.slice.call(document.querySelectorAll(".src-filter input"));
  var search = document.getElementById("event-search"), shown = document.getElementById("event-shown");
  var m = /(?:^|[#&])sources=([^&]*)/.exec(location.hash);
  if (m){
    var wanted = decodeURIComponent(m[1]).split(",");
    boxes.forEach(function(b){ b.checked = wanted.indexOf(b.value) >= 0; });
  }
  function apply(){
    var on = {}, q = search.value.trim().toLowerCase(), n = 0;
    boxes.forEach(function(b){ on[b.value] = b.checked; });
    rows.forEach(function(row){
      var src = row.getAttribute("data-src");
      var ok = src === null || (on[src] && (!q || row.textContent.toLowerCase().indexOf(q) >= 0));
      row.style.display = ok ? "" : "none";
      if (ok && src !== null) n++;
    });
    shown.textContent = n.toLocaleString() + " rows shown";
  }
  boxes.forEach(function(b){ b.addEventListener("change", apply); });
  search.addEventListener("input", apply);
  apply();
}
document.body.setAttribute("data-ready", "1");
})();
"""
