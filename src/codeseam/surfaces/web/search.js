// codeseam's page: search as you type, hits, paging and filters (an ES module).
import { $, DEBOUNCE_MS, PAGE_SIZE, WINDOW, apiJson, apiSearch, app, el, errorNote, note, safeHref, show, state, writeUrl } from "./common.js";

// -- search --------------------------------------------------------------------------
export function scheduleSearch() {
  clearTimeout(app.timer);
  app.timer = setTimeout(runSearch, DEBOUNCE_MS);
}
function searchParams(q) {
  const p = new URLSearchParams({ q, k: String(WINDOW), offset: String((state.page - 1) * PAGE_SIZE),
                                  limit: String(PAGE_SIZE), highlight: "true" });
  if (state.repo) p.set("repo", state.repo);
  if (state.lang) p.set("lang", state.lang);
  if (state.path) p.set("path", state.path);
  if (state.role && app.roleParam) p.set("role", state.role);
  return p;
}
export async function runSearch() {
  clearTimeout(app.timer);
  writeUrl(false);
  const q = state.q.trim();
  const seq = ++app.searchSeq;
  if (app.searchAbort) app.searchAbort.abort();
  if (!q) { $("hits").replaceChildren(); $("pager").hidden = true; show($("search-notes")); return; }
  app.searchAbort = new AbortController();
  const started = performance.now();
  show($("search-notes"), note("busy", "searching\u2026"));
  let data;
  try {
    data = await apiSearch(searchParams(q), { signal: app.searchAbort.signal });
  } catch (err) {
    if (err.name === "AbortError" || seq !== app.searchSeq) return;
    $("hits").replaceChildren(); $("pager").hidden = true;
    show($("search-notes"), errorNote(err));
    return;
  }
  if (seq !== app.searchSeq) return;
  renderResults(data, q);
  app.timings.push({ q, ms: performance.now() - started });
}
function partialText(p) {
  if (!p || p.files_indexed < p.files_total) return "The index is still being built: these results may be incomplete.";
  const left = p.eta_seconds === null || p.eta_seconds === undefined ? "" : `, about ${Math.ceil(p.eta_seconds)} s left`;
  return `Every file is keyword-searchable; ${p.chunks_embedded} of ${p.chunks} chunks have their vectors${left}: ` +
    "meaning-based matches join as they are written.";
}
function renderResults(data, q) {
  const hits = data.hits || [];
  app.total = data.total === undefined ? hits.length : data.total;
  const pages = Math.max(1, Math.ceil(app.total / PAGE_SIZE));
  if (state.page > pages && app.total) { state.page = pages; runSearch(); return; }
  const notes = [];
  if (data.partial) notes.push(note("partial", partialText(data.progress),
                                    "search again when the indexing job has finished (Status)"));
  if (data.weak) notes.push(note("weak", "Nothing close to this query was found: the hits below are the nearest matches, not answers.",
                                 "try other words, a symbol name, or fewer filters"));
  for (const n of data.notes || []) notes.push(note("fresh", n));  // freshness: changes not synced, a repo folder gone
  if (!hits.length) notes.push(note("empty", `No hits for \u201c${q}\u201d.`));
  show($("search-notes"), ...notes);
  const first = (state.page - 1) * PAGE_SIZE;
  $("hits").replaceChildren(...hits.map((h, i) => renderHit(h, first + i + 1)));
  for (const h of hits) if (h.role) app.roles.add(h.role);
  fillRoles();
  app.selected = -1;
  $("pager").hidden = app.total <= PAGE_SIZE;
  $("page-info").textContent = hits.length ? `hits ${first + 1}\u2013${first + hits.length} of ${app.total}` : "";
  $("prev-page").disabled = state.page <= 1;
  $("next-page").disabled = state.page >= pages;
  $("hits").dataset.query = q;
}
const citationOf = (h) => `${h.path}:${h.start_line}-${h.end_line}`;
export function renderHit(h, n, idPrefix = "hit-") {
  const url = safeHref(h.editor_url);
  const loc = url ? el("a", { class: "loc", href: url, title: "open in your editor" }, citationOf(h))
                  : el("span", { class: "loc" }, citationOf(h));
  const head = el("div", { class: "hit-head" }, loc,
    h.symbol ? el("span", { class: "symbol", text: h.symbol }) : null,
    h.language ? el("span", { class: "badge lang", text: h.language }) : null,
    h.role ? el("span", { class: "badge role", text: h.role }) : null,
    h.stale ? el("span", { class: "badge stale", text: "stale",
                           title: "the file changed since it was indexed: these lines may be out of date" }) : null,
    el("span", { class: "spacer" }),
    el("span", { class: "repo hint", text: h.repo }),
    el("button", { type: "button", class: "copy", title: "copy the citation (c)" }, "Copy"),
    url ? el("a", { class: "open", href: url, title: "open in your editor (Enter)" }, "Open") : null);
  const why = h.note ? el("div", { class: "hit-note", text: h.note }) : null;  // what changed since indexing
  const li = el("li", { class: "hit", id: idPrefix + n, tabindex: "-1", "data-citation": citationOf(h),
                        "data-editor-url": url || "" }, head, why, renderCode(h));
  li.querySelector(".copy").addEventListener("click", () => copyCitation(li));
  return li;
}
function renderCode(h) {
  let lines = h.lines;
  if (!Array.isArray(lines)) {
    const text = String(h.text || "").replace(/\r/g, "");
    lines = (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n").map((t) => (t ? [["", t]] : []));
  }
  const code = el("code");
  lines.forEach((tokens, i) => {
    const src = el("span", { class: "src" });
    for (const [css, text] of tokens) src.append(css ? el("span", { class: css, text }) : document.createTextNode(text));
    code.append(el("span", { class: "line" }, el("span", { class: "ln", "data-n": String(h.start_line + i) }), src, "\n"));
  });
  return el("pre", { class: "hl" }, code);
}
export async function copyCitation(li) {
  const text = li.dataset.citation;
  let ok = false;
  try { await navigator.clipboard.writeText(text); ok = true; } catch (_) {
    const area = el("textarea"); area.value = text; document.body.append(area); area.select();
    try { ok = document.execCommand("copy"); } catch (_) { ok = false; }
    area.remove();
  }
  const button = li.querySelector(".copy");
  button.textContent = ok ? "Copied" : "Copy failed";
  li.dataset.copied = ok ? text : "";
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}
export function select(i) {
  const items = [...$("hits").children];
  if (!items.length) return;
  app.selected = Math.max(0, Math.min(items.length - 1, i));
  items.forEach((li, j) => li.classList.toggle("selected", j === app.selected));
  items[app.selected].focus();
  items[app.selected].scrollIntoView({ block: "nearest" });
}
export function goPage(delta) {
  const pages = Math.max(1, Math.ceil(app.total / PAGE_SIZE));
  const page = Math.max(1, Math.min(pages, state.page + delta));
  if (page === state.page) return;
  state.page = page;
  writeUrl(true);
  runSearch();
}

// -- filters -------------------------------------------------------------------------
function fillSelect(select, values, current, all) {
  const options = [el("option", { value: "", text: all })];
  for (const [value, label] of values) options.push(el("option", { value, text: label }));
  if (current && !values.some(([v]) => v === current)) options.push(el("option", { value: current, text: current }));
  select.replaceChildren(...options);
  select.value = current || "";
}
export function fillFilters() {
  const repos = (app.status && app.status.index.repos) || [];
  const names = repos.map((r) => [r.repo, r.repo]);
  fillSelect($("f-repo"), names, state.repo, "all repos");
  fillSelect($("ask-repo"), names, $("ask-repo").value || state.repo, "all repos");
  const langs = new Map();
  for (const r of repos) {
    if (state.repo && r.repo !== state.repo) continue;
    for (const [lang, n] of Object.entries(r.languages || {})) langs.set(lang, (langs.get(lang) || 0) + n);
  }
  const sorted = [...langs.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  fillSelect($("f-lang"), sorted.map(([l, n]) => [l, `${l} (${n})`]), state.lang, "all languages");
  for (const r of repos) {
    if (state.repo && r.repo !== state.repo) continue;
    for (const role of Array.isArray(r.roles) ? r.roles : Object.keys(r.roles || {})) app.roles.add(role);
  }
  fillRoles();
}
export function fillRoles() {
  $("f-role").hidden = !app.roleParam;
  if (!app.roleParam) return;
  fillSelect($("f-role"), [...app.roles].sort().map((r) => [r, r]), state.role, "all roles");
}
export async function detectRoleFilter() {
  // The role filter shows when GET /search takes `role`; its values come from the API's
  // schema (an enum), the status, or the hits seen.
  try {
    const spec = await apiJson("/openapi.json");
    const params = (((spec.paths || {})["/search"] || {}).get || {}).parameters || [];
    const role = params.find((p) => p.name === "role");
    app.roleParam = Boolean(role);
    if (role) for (const v of enumOf(role.schema || {})) app.roles.add(v);
  } catch (_) { app.roleParam = false; }
  fillRoles();
}
function enumOf(schema) {
  const out = [...(schema.enum || [])];
  for (const s of [...(schema.anyOf || []), ...(schema.oneOf || [])]) out.push(...enumOf(s));
  if (schema.items) out.push(...enumOf(schema.items));
  return out.filter((v) => typeof v === "string");
}
