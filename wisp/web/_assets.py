"""The page's style sheet and script, served from `/static/` (the page's Content Security
Policy allows scripts and styles from the page's own origin only: no inline script runs).

The script follows the server's event stream (`/events`, server-sent events: no polling):
a request filed appears, one answered elsewhere turns into how it ended and by whom, all
without a reload; and it sends the answer forms in the background, saying what came of them.
Every HTML fragment it places was rendered and escaped by the server (:mod:`wisp.web._pages`).
"""

CSS = """
:root { --bg:#f4f5f7; --card:#fff; --fg:#1b1d21; --muted:#5d6470; --line:#dde0e5;
  --accent:#0b6bcb; --accent-fg:#fff; --danger:#c62828; --add:#e6f4ea; --del:#fdecea;
  --addfg:#1e6b34; --delfg:#a3241b; --warn:#fff4e0; }
@media (prefers-color-scheme: dark) {
  :root { --bg:#121316; --card:#1d1f24; --fg:#e7e9ee; --muted:#9aa1ad; --line:#30343c;
    --accent:#4c9aff; --accent-fg:#0b0c0e; --danger:#ff6b5e; --add:#173824; --del:#3f1c1a;
    --addfg:#8fe0a6; --delfg:#ffaaa2; --warn:#3a2e14; }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin:0; background:var(--bg); color:var(--fg);
  font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  padding: 0 0 env(safe-area-inset-bottom); }
.bar { position:sticky; top:0; z-index:2; display:flex; align-items:baseline; gap:.75rem;
  padding: calc(.6rem + env(safe-area-inset-top)) 1rem .6rem; background:var(--card);
  border-bottom:1px solid var(--line); }
.bar h1 { font-size:1.2rem; margin:0; letter-spacing:.02em; }
.count { font-weight:600; }
.device { margin-left:auto; color:var(--muted); font-size:.85rem; }
.live { font-size:.8rem; color:var(--muted); padding:.3rem 1rem 0; }
.live.ok::before { content:"● "; color:#2e9d4f; }
.live.down::before { content:"● "; color:var(--danger); }
main { padding: .5rem .75rem 2rem; }
.card { background:var(--card); border:1px solid var(--line); border-radius:14px;
  padding: .9rem 1rem; margin:.75rem 0; box-shadow: 0 1px 2px rgba(0,0,0,.05); }
.card.warn { border-color:#e0a030; }
.card.fresh { animation: fresh 1.2s ease-out; }
@keyframes fresh { from { box-shadow:0 0 0 3px var(--accent); } }
.card h2 { font-size:1.05rem; margin:0 0 .35rem; }
.asked { margin:0 0 .6rem; font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
  font-size:.92rem; word-break: break-word; }
.rows { margin:0 0 .75rem; }
.row { display:grid; grid-template-columns: 5.2rem 1fr; gap:.5rem; padding:.2rem 0;
  border-top:1px solid var(--line); }
.row dt { color:var(--muted); font-size:.85rem; }
.row.wide { grid-template-columns: 1fr; gap:.15rem; }
.row.wide pre:not(.diff) { background:var(--bg); border-radius:6px; padding:.4rem .5rem; }
.row dd { margin:0; word-break: break-word; min-width:0; }
pre { margin:0; white-space:pre-wrap; word-break: break-all; font-size:.85rem;
  font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
pre.diff { white-space:pre-wrap; overflow-wrap:anywhere; word-break:break-all;
  border-radius:6px; border:1px solid var(--line); }
pre.diff span { display:block; padding:0 .35rem; }
pre.diff .add { background:var(--add); color:var(--addfg); }
pre.diff .del { background:var(--del); color:var(--delfg); }
pre.diff .hunk { color:var(--accent); }
pre.diff .file { color:var(--muted); }
.answers { display:flex; flex-direction:column; gap:.5rem; }
form.answer { margin:0; display:flex; flex-wrap:wrap; gap:.4rem; align-items:center; }
form.stacked { flex-direction:column; align-items:stretch; }
button { font:inherit; border-radius:10px; border:1px solid var(--line); padding:.7rem 1rem;
  background:var(--bg); color:var(--fg); min-height:44px; cursor:pointer; }
button.primary, button.option { background:var(--accent); color:var(--accent-fg);
  border-color:transparent; font-weight:600; width:100%; }
button.option { text-align:left; }
button.secondary { width:100%; }
button.danger { background:var(--danger); color:#fff; border-color:transparent; width:100%;
  font-weight:600; }
button.scope { flex:1 1 0; padding:.55rem .4rem; font-size:.9rem; }
button:disabled { opacity:.5; }
.scope-label { width:100%; color:var(--muted); font-size:.8rem; }
details summary.deny { list-style:none; text-align:center; color:var(--danger);
  border:1px solid var(--danger); border-radius:10px; padding:.65rem; min-height:44px;
  cursor:pointer; font-weight:600; }
details summary::-webkit-details-marker { display:none; }
details[open] summary.deny { margin-bottom:.5rem; }
details[open] { display:flex; flex-direction:column; gap:.5rem; }
textarea, input[name=name] { font:inherit; width:100%; border-radius:10px;
  border:1px solid var(--line); background:var(--bg); color:var(--fg); padding:.6rem; }
.said { margin:.5rem 0 0; font-weight:600; }
.long:not(.open) pre { max-height:12em; overflow:hidden;
  -webkit-mask-image:linear-gradient(#000 70%, transparent);
  mask-image:linear-gradient(#000 70%, transparent); }
.long.open .show-all { display:none; }
.show-all { width:100%; margin-top:.3rem; }
.unseen { color:var(--muted); font-size:.85rem; margin:.2rem 0 .5rem; }
.argv-label { margin:.35rem 0 .1rem; color:var(--muted); font-size:.8rem; }
ol.argv { margin:0; padding-left:2rem; font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
  font-size:.85rem; word-break:break-all; }
ol.argv li { border-bottom:1px dotted var(--line); white-space:pre-wrap; }
.more { width:100%; }
#more-box { padding:0 .75rem 1rem; }
.dismiss { width:100%; margin-top:.5rem; padding:.45rem; min-height:36px; font-size:.9rem; }
.arrived { position:fixed; bottom:calc(.75rem + env(safe-area-inset-bottom)); left:.75rem;
  right:.75rem; z-index:3; background:var(--accent); color:var(--accent-fg); font-weight:600;
  border-radius:12px; padding:.7rem 1rem; box-shadow:0 4px 14px rgba(0,0,0,.25);
  cursor:pointer; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
.arrived[hidden] { display:none; }
time.left.soon { color:var(--danger); font-weight:600; }
.said:empty { display:none; }
.said.bad { color:var(--danger); }
.id { margin:.5rem 0 0; font-size:.75rem; color:var(--muted); text-align:right; }
.id a { color:inherit; }
.card.ended { opacity:.9; border-style:dashed; }
.outcome { font-weight:600; margin:.2rem 0 0; }
.empty { text-align:center; color:var(--muted); margin:3rem 1rem; }
.decided { margin:1rem; font-size:.85rem; color:var(--muted); }
.decided summary { cursor:pointer; }
.decided ol { list-style:none; margin:.5rem 0 0; padding:0; display:flex;
  flex-direction:column; gap:.3rem; overflow-wrap:anywhere; }
.decided li.deny { color:var(--danger); }
.hosts-down { list-style:none; margin:.6rem .8rem 0; padding:.6rem .8rem; border-radius:10px;
  border:1px solid var(--danger); overflow-wrap:anywhere; font-size:.9rem; }
.notice { max-width: 30rem; margin: 2rem auto; padding: 0 1.25rem; }
.notice h1 { font-size:1.4rem; }
.cmd { background:var(--card); border:1px solid var(--line); border-radius:8px;
  padding:.6rem .8rem; font-size:1rem; }
.error { color:var(--danger); font-weight:600; }
form.pair { display:flex; flex-direction:column; gap:.6rem; margin-top:1rem; }
"""

JS = """
"use strict";
(function () {
  // The device's credential lives in this origin's storage (scheme, host and port): no other
  // origin's page reads it, and no request carries it but the ones this script sends.
  const KEY = "wisp-device";
  const RETRY_MS = 2000;  // a lost event stream is tried again after this long
  const given = document.querySelector('meta[name="wisp-credential"]');
  if (given) {
    localStorage.setItem(KEY, given.content);
    location.replace("/");
    return;
  }
  const app = document.getElementById("app");
  if (!app) return;
  const credential = localStorage.getItem(KEY) || "";
  function sent(extra) {
    return Object.assign({"X-Wisp-Device": credential}, extra || {});
  }
  let cards, live, count, empty;

  function place(id, fragment, fresh) {
    const box = document.createElement("div");
    box.innerHTML = fragment;  // rendered and escaped by the server
    const card = box.firstElementChild;
    const old = document.getElementById("r-" + id);
    if (old) {
      const said = old.querySelector(".said");
      old.replaceWith(card);
      // One line per outcome: an ended card says how it ended, by whom, on which device;
      // what the page said of its own answer is dropped, not said twice.
      if (said && said.textContent && !card.querySelector(".said, .outcome")) {
        card.appendChild(said);
      }
    } else if (fresh) {
      cards.appendChild(card);
      arrived(card);
    } else {
      return;
    }
    if (fresh) card.classList.add("fresh");
    guard(card);
    localized(card);
    tick();
  }
  // A request that arrives while the page is open: a vibration (where the browser allows it:
  // most phones' browsers but Safari, and only once the page was touched) and a notice at
  // the foot of the screen (the count at its top stays in sight), which opens the card when
  // tapped.
  const BUZZ_MS = [180, 90, 180];
  const NOTICE_MS = 8000;  // how long the notice stays
  let noticeTimer = 0;
  function arrived(card) {
    if (navigator.vibrate) {
      try { navigator.vibrate(BUZZ_MS); } catch (e) { /* not allowed here */ }
    }
    const notice = document.getElementById("arrived");
    if (!notice) return;
    const heading = card.querySelector("h2");
    const asked = card.querySelector(".asked");
    notice.textContent = "New: " + (heading ? heading.textContent : "a request") +
      (asked ? " " + asked.textContent.slice(0, 80) : "");
    notice.dataset.card = card.id;
    notice.hidden = false;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(function () { notice.hidden = true; }, NOTICE_MS);
  }
  // A long text is shown clipped: the answers that act on it (all but Deny) are enabled
  // only once its end was on the screen, as the TUI asks to scroll to the end.
  function unseen(card) {
    return card.querySelector(".long:not(.seen)") !== null;
  }
  function unlock(card) {
    const locked = unseen(card);
    card.querySelectorAll("form.answer button").forEach(function (b) {
      b.disabled = locked && !b.closest("form.denial");
    });
    const note = card.querySelector(".unseen");
    if (note && !locked) note.remove();
  }
  function guard(card) {
    if (card.querySelector(".long")) unlock(card);
  }
  const seeing = "IntersectionObserver" in window ? new IntersectionObserver(function (seen) {
    seen.forEach(function (entry) {
      if (!entry.isIntersecting) return;
      seeing.unobserve(entry.target);
      const long = entry.target.closest(".long");
      long.classList.add("seen");
      const card = long.closest(".card");
      if (card) unlock(card);
    });
  }) : null;
  document.addEventListener("click", function (e) {
    const target = e.target;
    if (!(target instanceof Element)) return;
    if (target.classList.contains("show-all")) {
      const long = target.closest(".long");
      long.classList.add("open");
      const end = long.querySelector(".end");
      if (seeing && end) seeing.observe(end);
      else { long.classList.add("seen"); unlock(long.closest(".card")); }
    } else if (target.id === "arrived") {
      const shown = document.getElementById(target.dataset.card || "");
      if (shown) shown.scrollIntoView({behavior: "smooth", block: "start"});
      target.hidden = true;
    } else if (target.id === "more") {
      more();
    } else if (target.classList.contains("dismiss")) {
      const card = target.closest(".card");
      if (card) card.remove();
      counted(waitingNow, count.textContent);
    }
  });
  // The board comes in pages: the first with the page, the next ones when "Show more" is
  // tapped or scrolled to (10,000 waiting are not sent at once).
  let fetching = false;
  const nearing = "IntersectionObserver" in window ? new IntersectionObserver(function (seen) {
    if (seen.some(function (entry) { return entry.isIntersecting; })) more();
  }) : null;
  function moreButton(html) {
    const box = document.getElementById("more-box");
    if (!box) return;
    if (nearing) nearing.disconnect();
    box.innerHTML = html || "";  // rendered and escaped by the server
    const button = document.getElementById("more");
    if (button && nearing) nearing.observe(button);
  }
  function more() {
    const button = document.getElementById("more");
    if (!button || fetching) return;
    fetching = true;
    button.disabled = true;
    fetch("/board?after=" + encodeURIComponent(button.dataset.after),
          {headers: sent(), cache: "no-store"}).then(function (r) {
      return r.json().then(function (data) { return {ok: r.ok, data: data}; });
    }).then(function (res) {
      fetching = false;
      if (!res.ok) { button.disabled = false; button.textContent = res.data.message; return; }
      const box = document.createElement("div");
      box.innerHTML = res.data.html;  // rendered and escaped by the server
      Array.from(box.children).forEach(function (card) {
        if (document.getElementById(card.id)) return;  // arrived live meanwhile
        cards.appendChild(card);
        guard(card);
        localized(card);
      });
      tick();
      moreButton(res.data.more);
    }).catch(function () {
      fetching = false;
      button.disabled = false;
    });
  }
  let waitingNow = 0;
  function counted(n, text) {
    waitingNow = n;
    count.textContent = text;
    document.title = n > 0 ? "(" + n + ") wisp" : "wisp";
    empty.hidden = n > 0 || cards.querySelector(".card") !== null;
  }
  // Times: each <time> the server wrote (in UTC) is shown in this device's own zone; how
  // long ago a request was filed and how long it has left are counted on this page, each
  // second (a clock of the page's own: the server is asked nothing).
  const TICK_MS = 1000;
  function span(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    const two = function (v) { return String(v).padStart(2, "0"); };
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m " + two(s % 60) + "s";
    if (s < 86400) return Math.floor(s / 3600) + "h " + two(Math.floor(s / 60) % 60) + "m";
    return Math.floor(s / 86400) + "d";
  }
  function ago(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    if (s < 86400) return Math.floor(s / 3600) + "h";
    return Math.floor(s / 86400) + "d";
  }
  function localized(root) {
    root.querySelectorAll("time.clock").forEach(function (t) {
      t.textContent = new Date(t.dateTime).toLocaleTimeString([], {
        hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23"
      });
      t.title = t.dateTime;
    });
  }
  function tick() {
    const now = Date.now();
    document.querySelectorAll("time.ago").forEach(function (t) {
      t.textContent = ago(now - Date.parse(t.dateTime)) + " ago";
    });
    document.querySelectorAll("time.left").forEach(function (t) {
      const left = Date.parse(t.dateTime) - now;
      t.textContent = left > 0 ? "expires in " + span(left) : "past its time";
      t.classList.toggle("soon", left < 60000);
    });
  }
  function down(text) {
    live.textContent = text; live.className = "live down";
  }
  const handlers = {
    card: function (data) { place(data.id, data.html, true); counted(data.n, data.count); },
    ended: function (data) { place(data.id, data.html, false); counted(data.n, data.count); },
    board: function (data) {
      const kept = Array.from(cards.querySelectorAll(".card.ended"));
      cards.innerHTML = data.html;
      moreButton(data.more);
      // The request a link named stays first, as the board first showed it.
      const focused = cards.dataset.focus && document.getElementById("r-" + cards.dataset.focus);
      if (focused) cards.prepend(focused);
      kept.forEach(function (card) {
        if (!document.getElementById(card.id)) cards.prepend(card);
      });
      cards.querySelectorAll(".card").forEach(guard);
      localized(cards);
      tick();
      counted(data.n, data.count);
    },
    // The calls decided without asking: the list anew, left open if it was.
    decided: function (data) {
      const box = document.getElementById("decided-box");
      if (!box) return;
      const was = box.querySelector("details");
      const open = was ? was.open : false;
      box.innerHTML = data.html;  // rendered and escaped by the server
      const now = box.querySelector("details");
      if (now) now.open = open;
      localized(box);
    },
    closed: function (data) {
      down(data.message);
      if (data.reload) location.reload();
      return false;
    }
  };
  function retry() {
    down("reconnecting…");
    setTimeout(listen, RETRY_MS);
  }
  // The event stream, read with fetch (an EventSource cannot send the credential's header).
  function listen() {
    fetch("/events", {headers: sent(), cache: "no-store"}).then(function (r) {
      if (r.status === 403) { location.reload(); return; }
      if (!r.ok) { retry(); return; }
      live.textContent = "live"; live.className = "live ok";
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) { retry(); return; }
          buffer += decoder.decode(chunk.value, {stream: true});
          let at;
          while ((at = buffer.indexOf("\\n\\n")) >= 0) {
            const block = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            let name = "", data = "";
            block.split("\\n").forEach(function (line) {
              if (line.startsWith("event: ")) name = line.slice(7);
              else if (line.startsWith("data: ")) data += line.slice(6);
            });
            if (handlers[name] && data && handlers[name](JSON.parse(data)) === false) {
              reader.cancel();
              return;
            }
          }
          return pump();
        });
      }
      return pump();
    }).catch(retry);
  }
  const focus = app.dataset.focus;
  fetch("/board" + (focus ? "?focus=" + encodeURIComponent(focus) : ""),
        {headers: sent(), cache: "no-store"}).then(function (r) {
    return r.json().then(function (data) { return {status: r.status, data: data}; });
  }).then(function (res) {
    app.innerHTML = res.data.html;  // rendered and escaped by the server
    document.title = res.data.title;
    if (res.status !== 200) return;
    cards = document.getElementById("cards");
    live = document.getElementById("live");
    count = document.getElementById("count");
    empty = document.getElementById("empty");
    cards.querySelectorAll(".card").forEach(guard);
    counted(res.data.n || 0, count.textContent);
    moreButton((document.getElementById("more-box") || {}).innerHTML);
    localized(app);
    tick();
    setInterval(tick, TICK_MS);
    listen();
  }).catch(function () {
    app.textContent = "The server could not be reached: reload to try again.";
  });
  document.addEventListener("submit", function (e) {
    const form = e.target;
    if (!form.classList.contains("answer")) return;
    e.preventDefault();
    const button = e.submitter;
    if (button && button.dataset.confirm &&
        !confirm(button.textContent + ": a standing grant, for later requests too. Give it?")) {
      return;
    }
    const card = form.closest(".card");
    const said = card.querySelector(".said");
    const body = new URLSearchParams(new FormData(form, button));
    card.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    said.className = "said"; said.textContent = "sending…";
    fetch(form.action, {
      method: "POST", body: body, credentials: "omit",
      headers: sent({"Accept": "application/json"})
    }).then(function (r) {
      return r.json().then(function (data) { return {ok: r.ok, data: data}; });
    }).then(function (res) {
      const now = document.getElementById(card.id) || card;
      const line = now.querySelector(".said") || said;
      line.textContent = res.data.message;
      line.className = res.ok && res.data.won ? "said" : "said bad";
      if (!res.ok) unlock(now);
    }).catch(function () {
      said.className = "said bad"; said.textContent = "Not sent: the server could not be reached.";
      unlock(card);
    });
  });
})();
"""
