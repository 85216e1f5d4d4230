// The conba search page: paste code, pick a language filter, see the ranked hits next to the query.
// Plain browser JavaScript, no build step; the server returns highlighted HTML (pygments).
"use strict";
const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem("conba-token") || "";

function headers() {
  const h = { "Content-Type": "application/json" };
  if (token) h.Authorization = "Bearer " + token;
  return h;
}

async function api(path, body) {
  const init = body === undefined ? { headers: headers() }
    : { method: "POST", headers: headers(), body: JSON.stringify(body) };
  const r = await fetch(path, init);
  if (r.status === 401) {
    $("auth").hidden = false;
    throw new Error("this server needs a token: enter it above and search again");
  }
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.detail || r.status + " " + r.statusText);
  return data;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

async function loadFacts() {
  try {
    const h = await api("health");
    const langs = Object.keys(h.index.languages || {});
    $("facts").textContent = h.index.error ? h.index.error
      : `${h.index.functions} functions in ${langs.length} languages · model ${h.model.name} ` +
        `(${h.model.fingerprint}, view ${h.model.view})`;
    if (langs.length) {  // the filter offers the languages that are in the index
      const sel = $("language");
      for (const opt of [...sel.options]) if (opt.value && !langs.includes(opt.value)) opt.remove();
    }
  } catch (e) {
    $("facts").textContent = e.message;
  }
}

function hitCard(hit) {
  const li = el("li", "hit");
  li.dataset.rank = hit.rank;
  const hd = el("div", "hd");
  hd.append(el("span", "rank", "#" + hit.rank), el("span", "score", hit.score.toFixed(3)));
  const bar = el("span", "bar");
  bar.style.width = Math.max(2, Math.round(60 * Math.max(0, hit.score))) + "px";
  hd.append(bar, el("span", "lang", hit.language), el("b", "", hit.name),
            el("span", "loc", `${hit.file}:${hit.start_line}`));
  const code = el("div", "code");
  code.innerHTML = hit.html;  // pygments output, escaped by the server
  li.append(hd, code);
  return li;
}

async function search(event) {
  event.preventDefault();
  if (!$("auth").hidden && $("token").value) {
    token = $("token").value;
    sessionStorage.setItem("conba-token", token);
  }
  const body = { code: $("code").value, k: Number($("k").value) || 10, highlight: true,
                 result_language: $("language").value || null, query_language: $("query-language").value || null };
  $("submit").disabled = true;
  $("status").textContent = "searching...";
  showError("");
  const t0 = performance.now();
  try {
    const res = await api("search", body);
    $("query-code").innerHTML = res.query_html;
    $("hits").replaceChildren(...res.hits.map(hitCard));
    $("hits-title").textContent = `${res.hits.length} hits`;
    $("results").hidden = false;
    $("status").textContent = `${Math.round(performance.now() - t0)} ms`;
    if (!$("auth").hidden) loadFacts();
  } catch (e) {
    showError(e.message);
    $("status").textContent = "";
  } finally {
    $("submit").disabled = false;
  }
}

async function openReport(event) {  // with a token, a plain link cannot send it: fetch and show a copy
  if (!token) return;
  event.preventDefault();
  const r = await fetch($("report").getAttribute("href"), { headers: headers() });
  const url = URL.createObjectURL(new Blob([await r.text()], { type: "text/html" }));
  window.open(url, "_blank", "noopener");
}

$("form").addEventListener("submit", search);
$("report").addEventListener("click", openReport);
$("code").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("form").requestSubmit();
});
loadFacts();
