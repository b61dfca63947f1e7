// The console's page, served as three static strings (no build step between src/ and what the browser
// runs, so tests from src/ and the bundle serve the same bytes). Everything a request or a log line
// carries is attacker-written (a file name, a diff, a reason), so the script puts it into the page
// only as text nodes (textContent, never innerHTML), and the CSP allows no inline script at all.
// The token comes from the URL fragment (never sent to a server), is kept in sessionStorage, and goes
// out only in an Authorization header; the address bar loses it at once.

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<title>latch console</title>
<link rel="stylesheet" href="/console/app.css">
<script src="/console/app.js" defer></script>
</head>
<body>
<header><h1>latch console</h1><span id="status">connecting…</span></header>
<p id="need-token" hidden>This page needs the token. Open the link <code>latch console</code> printed, or paste the token from the file it named:
<input id="token-input" type="password" autocomplete="off"><button id="token-save" type="button">Use token</button></p>
<main>
<section id="approvals-section"><h2>Waiting for you (<span id="count">0</span>)</h2>
<p id="empty">No call is waiting for approval.</p><div id="approvals"></div></section>
<section id="log-section"><h2>Policy log</h2>
<p><label>Run <select id="run"></select></label>
<label>Session <input id="f-session" placeholder="any"></label>
<label>Tool <input id="f-tool" placeholder="any"></label>
<label>Action <select id="f-action"><option value="">any</option><option>allow</option><option>approve</option><option>deny</option></select></label></p>
<p id="verify"></p>
<table id="log"><thead><tr><th>line</th><th>record</th><th>effect</th><th>tool</th><th>session</th><th>action</th><th>outcome</th><th>reason</th></tr></thead><tbody></tbody></table>
</section>
</main>
</body>
</html>
`;

export const PAGE_CSS = `body{font:14px system-ui,sans-serif;margin:0 1.5em 2em;color:#1b1b1b}
header{display:flex;gap:1em;align-items:baseline}#status{color:#666}
.card{border:1px solid #bbb;border-radius:6px;padding:.6em 1em;margin:.8em 0}
.card.focus{border-color:#0a58ca;box-shadow:0 0 0 2px #0a58ca33}
.card dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;margin:.4em 0}
.card dt{color:#555}.card dd{margin:0}
pre.what{background:#f6f6f6;padding:.6em;overflow:auto;max-height:30em;white-space:pre}
.risk{color:#a00}.answer{display:flex;gap:.5em;align-items:center;flex-wrap:wrap}
.result{font-weight:600}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.2em .4em;text-align:left;vertical-align:top}
tr.unverified{color:#999;font-style:italic}tr.broken{background:#fdd}
#verify.ok{color:#070}#verify.bad{color:#a00;font-weight:600}
`;

// Plain ES2020 for the browser; no backticks in here (it is itself a template string).
export const PAGE_JS = `"use strict";
(function () {
  var API = "/console/api";
  var token = "";
  var focusId = "";
  var cards = new Map();
  var logRows = [];

  function readFragment() {
    var params = new URLSearchParams(location.hash.slice(1));
    if (params.get("token")) sessionStorage.setItem("latch-console-token", params.get("token"));
    focusId = params.get("approval") || "";
    if (location.hash) history.replaceState(null, "", location.pathname);
    token = sessionStorage.getItem("latch-console-token") || "";
  }
  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function auth() { return { Authorization: "Bearer " + token }; }
  function setStatus(s) { $("status").textContent = s; }
  function needToken() { $("need-token").hidden = false; setStatus("no token"); }

  function secs(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    return s < 120 ? s + " s" : Math.round(s / 60) + " min";
  }
  async function sha256(text) {
    var buf = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
    return Array.from(new Uint8Array(buf)).map(function (b) { return b.toString(16).padStart(2, "0"); }).join("");
  }

  function renderApprovals(items) {
    var seen = new Set();
    items.forEach(function (q) {
      seen.add(q.id);
      if (!cards.has(q.id)) {
        var card = buildCard(q);
        cards.set(q.id, { card: card, q: q });
        $("approvals").appendChild(card);
      }
    });
    // A request that left the queue unanswered here says so for a while: a click on it then is refused
    // by the server, not lost (two tabs, or a terminal, answering at once).
    cards.forEach(function (v, id) {
      if (seen.has(id) || v.card.classList.contains("answered") || v.card.dataset.gone) return;
      v.card.dataset.gone = "1";
      v.card.querySelector(".result").textContent = "no longer waiting: answered elsewhere, timed out, or its call ended";
      setTimeout(function () { v.card.remove(); cards.delete(id); }, 30000);
    });
    $("count").textContent = String(items.length);
    $("empty").hidden = items.length > 0;
    tick();
  }

  function buildCard(q) {
    var card = el("div", null, "card");
    card.dataset.id = q.id;
    card.dataset.seen = String(Date.now());
    if (q.id === focusId) card.classList.add("focus");
    card.appendChild(el("h3", q.tool + " \\u2014 approval " + q.id));
    var dl = el("dl");
    function row(k, v, cls) { dl.appendChild(el("dt", k)); var d = el("dd", v, cls); dl.appendChild(d); return d; }
    row("why", q.reason);
    row("risk", q.risk.length ? q.risk.join(", ") : "none named", "risk");
    row("session", q.session);
    row("process", q.pid);
    row("waiting", "").dataset.age = q.created_at;
    row("time left", "").dataset.left = q.expires_at;
    card.appendChild(dl);
    card.appendChild(el("p", q.diff !== null ? "The exact change:" : "The call:"));
    card.appendChild(el("pre", q.shown, "what"));
    if (q.diff_note) card.appendChild(el("p", "(" + q.diff_note + ")"));
    Object.keys(q.content_sha256 || {}).forEach(function (rel) {
      var sha = q.content_sha256[rel];
      card.appendChild(el("p", "diffed against " + rel + " " + (sha === null ? "(a new file)" : "sha256:" + sha)));
    });
    var answer = el("div", null, "answer");
    var once = el("button", "Approve once"); once.type = "button"; once.name = "once";
    answer.appendChild(once);
    if (q.scope) {
      var session = el("button", "Approve for this session"); session.type = "button"; session.name = "session";
      session.title = "also allows: " + q.scope;
      answer.appendChild(session);
      answer.appendChild(el("span", "(also allows: " + q.scope + ")"));
    }
    var note = el("input"); note.placeholder = "note for the model (with deny)"; note.name = "note"; note.maxLength = 500;
    answer.appendChild(note);
    var deny = el("button", "Deny"); deny.type = "button"; deny.name = "deny";
    answer.appendChild(deny);
    var result = el("span", "", "result");
    answer.appendChild(result);
    card.appendChild(answer);
    answer.addEventListener("click", function (ev) {
      var b = ev.target;
      if (b.tagName !== "BUTTON") return;
      send(q.id, b.name, note.value, card, result);
    });
    return card;
  }

  // A card this page answered stays, with the outcome, after the request leaves the queue.
  async function send(id, decision, note, card, result) {
    card.classList.add("answered");
    card.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    var body = { decision: decision, shown_sha256: await sha256(card.querySelector("pre.what").textContent) };
    if (decision === "deny" && note) body.note = note;
    var r = await fetch(API + "/approvals/" + id, {
      method: "POST",
      headers: Object.assign({ "Content-Type": "application/json" }, auth()),
      body: JSON.stringify(body),
    });
    var out = await r.json().catch(function () { return {}; });
    if (r.ok) {
      result.textContent = decision === "deny" ? "denied" : decision === "session" ? "approved for this session" : "approved once";
    } else {
      result.textContent = "refused: " + (out.error || r.status);
      if (r.status !== 409 || /sha256|showed/.test(out.error || "")) {
        card.classList.remove("answered");
        card.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
      }
    }
    card.dataset.result = r.ok ? "ok" : "refused";
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-age]").forEach(function (d) { d.textContent = secs(now - Date.parse(d.dataset.age)); });
    document.querySelectorAll("[data-left]").forEach(function (d) { d.textContent = secs(Date.parse(d.dataset.left) - now); });
  }

  function renderRuns(runs) {
    var sel = $("run");
    var current = sel.value;
    sel.textContent = "";
    runs.slice().reverse().forEach(function (l) {
      var o = el("option", l.file + " (" + l.effects + " decisions" + (l.finished ? "" : ", open or cut short") + ")");
      o.value = l.file;
      sel.appendChild(o);
    });
    if (current && runs.some(function (l) { return l.file === current; })) sel.value = current;
    if (sel.value) loadLog();
  }

  async function loadLog() {
    var name = $("run").value;
    if (!name) return;
    var r = await fetch(API + "/logs/" + encodeURIComponent(name), { headers: auth() });
    if (!r.ok) { $("verify").textContent = "cannot read the log (" + r.status + ")"; return; }
    var v = await r.json();
    var st = $("verify");
    if (v.verify.ok) {
      st.className = v.kept && !v.kept.matches ? "bad" : "ok";
      st.textContent = "log verify: ok, " + v.verify.lines + " lines, head sha256 " + v.verify.head +
        (v.kept ? (v.kept.matches ? "; matches the head kept in the state dir" : "; but latch kept another head (" + v.kept.lines + " lines, " + v.kept.head + "): rewritten or cut") : "");
    } else {
      st.className = "bad";
      st.textContent = "log verify: the chain breaks at line " + v.verify.fault.line + ": " + v.verify.fault.message + " (last good head sha256 " + v.verify.head + ")";
    }
    st.dataset.ok = String(v.verify.ok);
    st.dataset.breakLine = v.verify.ok ? "" : String(v.verify.fault.line);
    logRows = v.rows;
    renderLog();
  }

  function renderLog() {
    var fs = $("f-session").value.trim(), ft = $("f-tool").value.trim(), fa = $("f-action").value;
    var statusOf = new Map();
    logRows.forEach(function (r) { if (r.type === "effect_outcome") statusOf.set(r.effect_id, r.status); });
    var decisionOf = new Map();
    logRows.forEach(function (r) { if (r.type === "effect_decision") decisionOf.set(r.effect_id, r); });
    var body = $("log").tBodies[0];
    body.textContent = "";
    var breakLine = Number($("verify").dataset.breakLine || 0);
    logRows.forEach(function (r) {
      var d = r.type === "effect_outcome" ? decisionOf.get(r.effect_id) || {} : r;
      if (fs && (d.session || "").indexOf(fs) < 0) return;
      if (ft && (d.tool || "").indexOf(ft) < 0) return;
      if (fa && d.final !== fa) return;
      if (r.type === "effect_outcome" && !(fs || ft || fa)) return;
      var tr = el("tr");
      tr.dataset.line = String(r.line);
      if (!r.verified) tr.className = r.line === breakLine ? "broken" : "unverified";
      [r.line, r.type, r.effect_id, d.tool, d.session, d.final, r.type === "effect_decision" ? statusOf.get(r.effect_id) : r.status, d.reason]
        .forEach(function (c) { tr.appendChild(el("td", c === undefined ? "" : c)); });
      body.appendChild(tr);
    });
  }

  async function events() {
    for (;;) {
      try {
        var r = await fetch(API + "/events", { headers: auth() });
        if (r.status === 401) return needToken();
        setStatus("live");
        var reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        var buf = "";
        for (;;) {
          var chunk = await reader.read();
          if (chunk.done) break;
          buf += chunk.value;
          var i;
          while ((i = buf.indexOf("\\n\\n")) >= 0) {
            var block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            var ev = "", data = "";
            block.split("\\n").forEach(function (line) {
              if (line.indexOf("event: ") === 0) ev = line.slice(7);
              else if (line.indexOf("data: ") === 0) data += line.slice(6);
            });
            if (ev === "approvals") renderApprovals(JSON.parse(data));
            else if (ev === "logs") renderRuns(JSON.parse(data));
          }
        }
      } catch (e) { /* the server went away: try again */ }
      setStatus("reconnecting…");
      await new Promise(function (ok) { setTimeout(ok, 1000); });
    }
  }

  function start() {
    readFragment();
    $("token-save").addEventListener("click", function () {
      sessionStorage.setItem("latch-console-token", $("token-input").value.trim());
      location.reload();
    });
    $("run").addEventListener("change", loadLog);
    ["f-session", "f-tool", "f-action"].forEach(function (id) { $(id).addEventListener("input", renderLog); });
    setInterval(tick, 1000);
    if (!token) return needToken();
    events();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
`;
