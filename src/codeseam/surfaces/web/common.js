// codeseam's page: shared state, DOM helpers, the API client and the URL (an ES module).
// Rules: every piece of text from the index reaches the DOM through textContent (never
// innerHTML); links from the server pass safeHref; the URL holds the view, query and filters.

export const PAGE_SIZE = 10;       // hits per page
export const WINDOW = 50;          // hits ranked per query: pages are slices of one ranking
export const DEBOUNCE_MS = 150;    // typing pause before a search
export const TOKEN_KEY = "codeseam.token";
const BLOCKED = new Set(["javascript:", "data:", "vbscript:", "blob:", "about:", "filesystem:"]);

export const $ = (id) => document.getElementById(id);
export const state = { view: "search", q: "", repo: "", lang: "", path: "", role: "", page: 1 };
export const app = { status: null, roleParam: false, roles: new Set(), selected: -1, total: 0,
                     searchSeq: 0, searchAbort: null, timer: null, jobTimer: null, statusTimer: null };
window.codeseamPage = app; // for tests and the benchmark: timings of the last search
app.timings = [];

// -- DOM helpers ---------------------------------------------------------------------
export function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") e.textContent = String(v);
    else if (k === "class") e.className = v;
    else if (k === "href") { const h = safeHref(v); if (h) e.setAttribute("href", h); }
    else e.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}
export function safeHref(url) {
  if (typeof url !== "string" || !url) return null;
  let parsed;
  try { parsed = new URL(url, location.href); } catch (_) { return null; }
  return BLOCKED.has(parsed.protocol.toLowerCase()) ? null : parsed.href;
}
export function note(kind, message, hint) {
  return el("div", { class: "note " + kind, role: kind === "error" ? "alert" : null },
    el("span", { class: "message", text: message }), hint ? el("span", { class: "hint", text: hint }) : null);
}
export function show(box, ...notes) { box.replaceChildren(...notes.filter(Boolean)); }

// -- the API -------------------------------------------------------------------------
export class ApiError extends Error {
  constructor(message, hint, type, status) { super(message); this.hint = hint; this.type = type; this.status = status; }
}
export async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  let response;
  try {
    response = await fetch(path, Object.assign({}, options, { headers }));
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ApiError("cannot reach the codeseam server", "it may have stopped: start it again " +
      "(`codeseam serve`, or `codeseam open` for the keep-alive server) and reload", "NetworkError", 0);
  }
  if (response.status === 401) {
    $("token-panel").hidden = false;
    throw new ApiError("this server needs its bearer token", "enter it above (RAG_SERVER_TOKEN)", "AuthError", 401);
  }
  return response;
}
// A query longer than a URL should carry (a pasted issue or stack trace) goes in a POST body.
export const GET_QUERY_CHARS = 2000;
const NUMBER_PARAMS = ["k", "offset", "limit", "max_tokens"], FLAG_PARAMS = ["highlight", "files"];
export function apiSearch(params, options = {}) {
  if ((params.get("q") || "").length <= GET_QUERY_CHARS) return apiJson("/search?" + params.toString(), options);
  const body = {};
  for (const [key, value] of params) {
    body[key] = NUMBER_PARAMS.includes(key) ? Number(value) : FLAG_PARAMS.includes(key) ? value === "true" : value;
  }
  return apiJson("/search", Object.assign({}, options, { method: "POST", body: JSON.stringify(body),
                                                           headers: { "Content-Type": "application/json" } }));
}
export async function apiJson(path, options) {
  const response = await api(path, options);
  let data = null;
  try { data = await response.json(); } catch (_) { /* not JSON */ }
  if (!response.ok) {
    throw new ApiError((data && data.error) || `HTTP ${response.status}`, data && data.hint, data && data.type, response.status);
  }
  return data;
}
export const errorNote = (err) => note("error", err.message, err.hint);

// -- the URL -------------------------------------------------------------------------
export const KEYS = ["q", "repo", "lang", "path", "role"];
export function readUrl() {
  const p = new URLSearchParams(location.search);
  state.view = ["ask", "status"].includes(p.get("view")) ? p.get("view") : "search";
  for (const k of KEYS) state[k] = p.get(k) || "";
  state.page = Math.max(1, parseInt(p.get("page") || "1", 10) || 1);
}
export function writeUrl(push) {
  const p = new URLSearchParams();
  if (state.view !== "search") p.set("view", state.view);
  for (const k of KEYS) if (state[k]) p.set(k, state[k]);
  if (state.page > 1 && state.view === "search") p.set("page", String(state.page));
  const url = "/" + (p.toString() ? "?" + p.toString() : "");
  if (url !== location.pathname + location.search) history[push ? "pushState" : "replaceState"](null, "", url);
}
export function readToken() {
  const m = location.hash.match(/(?:^#|&)token=([^&]+)/);
  if (m) {
    localStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
}
