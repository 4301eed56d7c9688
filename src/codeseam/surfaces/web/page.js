// codeseam's page: search as you type, ask with a streamed answer, status and indexing.
// Rules: every piece of text from the index reaches the DOM through textContent (never
// innerHTML); links from the server pass safeHref; the URL holds the view, query and filters.
"use strict";
(() => {
  const PAGE_SIZE = 10;       // hits per page
  const WINDOW = 50;          // hits ranked per query: pages are slices of one ranking
  const DEBOUNCE_MS = 150;    // typing pause before a search
  const TOKEN_KEY = "codeseam.token";
  const BLOCKED = new Set(["javascript:", "data:", "vbscript:", "blob:", "about:", "filesystem:"]);

  const $ = (id) => document.getElementById(id);
  const state = { view: "search", q: "", repo: "", lang: "", path: "", role: "", page: 1 };
  const app = { status: null, roleParam: false, roles: new Set(), selected: -1, total: 0,
                searchSeq: 0, searchAbort: null, timer: null, jobTimer: null, statusTimer: null };
  window.codeseamPage = app; // for tests and the benchmark: timings of the last search
  app.timings = [];

  // -- DOM helpers ---------------------------------------------------------------------
  function el(tag, props, ...children) {
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
  function safeHref(url) {
    if (typeof url !== "string" || !url) return null;
    let parsed;
    try { parsed = new URL(url, location.href); } catch (_) { return null; }
    return BLOCKED.has(parsed.protocol.toLowerCase()) ? null : parsed.href;
  }
  function note(kind, message, hint) {
    return el("div", { class: "note " + kind, role: kind === "error" ? "alert" : null },
      el("span", { class: "message", text: message }), hint ? el("span", { class: "hint", text: hint }) : null);
  }
  function show(box, ...notes) { box.replaceChildren(...notes.filter(Boolean)); }

  // -- the API -------------------------------------------------------------------------
  class ApiError extends Error {
    constructor(message, hint, type, status) { super(message); this.hint = hint; this.type = type; this.status = status; }
  }
  async function api(path, options = {}) {
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
  async function apiJson(path, options) {
    const response = await api(path, options);
    let data = null;
    try { data = await response.json(); } catch (_) { /* not JSON */ }
    if (!response.ok) {
      throw new ApiError((data && data.error) || `HTTP ${response.status}`, data && data.hint, data && data.type, response.status);
    }
    return data;
  }
  const errorNote = (err) => note("error", err.message, err.hint);

  // -- the URL -------------------------------------------------------------------------
  const KEYS = ["q", "repo", "lang", "path", "role"];
  function readUrl() {
    const p = new URLSearchParams(location.search);
    state.view = ["ask", "status"].includes(p.get("view")) ? p.get("view") : "search";
    for (const k of KEYS) state[k] = p.get(k) || "";
    state.page = Math.max(1, parseInt(p.get("page") || "1", 10) || 1);
  }
  function writeUrl(push) {
    const p = new URLSearchParams();
    if (state.view !== "search") p.set("view", state.view);
    for (const k of KEYS) if (state[k]) p.set(k, state[k]);
    if (state.page > 1 && state.view === "search") p.set("page", String(state.page));
    const url = "/" + (p.toString() ? "?" + p.toString() : "");
    if (url !== location.pathname + location.search) history[push ? "pushState" : "replaceState"](null, "", url);
  }
  function readToken() {
    const m = location.hash.match(/(?:^#|&)token=([^&]+)/);
    if (m) {
      localStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
      history.replaceState(null, "", location.pathname + location.search);
    }
  }

  // -- views ---------------------------------------------------------------------------
  function setView(view, push) {
    state.view = view;
    for (const v of ["search", "ask", "status"]) {
      $("view-" + v).hidden = v !== view;
      $("nav-" + v).classList.toggle("current", v === view);
    }
    writeUrl(push);
    if (view === "status") loadStatus();
    if (view === "search") $("q").focus();
    if (view === "ask") { $("question").value = $("question").value || state.q; renderLlmNote(); $("question").focus(); }
  }

  // -- search --------------------------------------------------------------------------
  function scheduleSearch() {
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
  async function runSearch() {
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
      data = await apiJson("/search?" + searchParams(q).toString(), { signal: app.searchAbort.signal });
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
  function renderResults(data, q) {
    const hits = data.hits || [];
    app.total = data.total === undefined ? hits.length : data.total;
    const pages = Math.max(1, Math.ceil(app.total / PAGE_SIZE));
    if (state.page > pages && app.total) { state.page = pages; runSearch(); return; }
    const notes = [];
    if (data.partial) notes.push(note("partial", "The index is still being built: these results may be incomplete.",
                                      "search again when the indexing job has finished (Status)"));
    if (data.weak) notes.push(note("weak", "Nothing close to this query was found: the hits below are the nearest matches, not answers.",
                                   "try other words, a symbol name, or fewer filters"));
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
  function renderHit(h, n, idPrefix = "hit-") {
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
    const li = el("li", { class: "hit", id: idPrefix + n, tabindex: "-1", "data-citation": citationOf(h),
                          "data-editor-url": url || "" }, head, renderCode(h));
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
  async function copyCitation(li) {
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
  function select(i) {
    const items = [...$("hits").children];
    if (!items.length) return;
    app.selected = Math.max(0, Math.min(items.length - 1, i));
    items.forEach((li, j) => li.classList.toggle("selected", j === app.selected));
    items[app.selected].focus();
    items[app.selected].scrollIntoView({ block: "nearest" });
  }
  function goPage(delta) {
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
  function fillFilters() {
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
  function fillRoles() {
    $("f-role").hidden = !app.roleParam;
    if (!app.roleParam) return;
    fillSelect($("f-role"), [...app.roles].sort().map((r) => [r, r]), state.role, "all roles");
  }
  async function detectRoleFilter() {
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

  // -- ask -----------------------------------------------------------------------------
  function renderLlmNote() {
    const off = Boolean(app.status && !app.status.llm);
    $("ask-button").disabled = off;
    const shown = $("ask-notes").querySelector(".llm-off");
    if (off && !shown) {
      show($("ask-notes"), note("error llm-off", "No chat model is configured, so this server cannot answer questions (search works without one).",
        "set RAG_LLM_MODEL (e.g. qwen2.5-coder:7b) and, unless it is Ollama on this machine, RAG_LLM_BASE_URL; then restart the server"));
    } else if (!off && shown) {
      show($("ask-notes"));
    }
  }
  async function runAsk(event) {
    event.preventDefault();
    const question = $("question").value.trim();
    if (!question) return;
    const repo = $("ask-repo").value;
    $("answer").replaceChildren(); $("answer").classList.add("streaming");
    show($("ask-warnings")); $("ask-sources").replaceChildren(); $("sources-title").hidden = true;
    show($("ask-notes"), note("busy", "searching and asking the model\u2026"));
    $("ask-button").disabled = true;
    const q = new URLSearchParams({ q: question, highlight: "true" });
    if (repo) q.set("repo", repo);
    const hits = apiJson("/search?" + q.toString()).catch(() => null); // the same hits the answer cites
    const body = { question, stream: true };
    if (repo) body.repo = repo;
    let final = null, streamed = "";
    try {
      const response = await api("/ask", { method: "POST", headers: { "Content-Type": "application/json" },
                                            body: JSON.stringify(body) });
      if (!response.ok) {
        const data = await response.json().catch(() => ({}));
        throw new ApiError(data.error || `HTTP ${response.status}`, data.hint, data.type, response.status);
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
        let cut;
        while ((cut = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, cut).trim();
          buffer = buffer.slice(cut + 1);
          if (!line) continue;
          const event = JSON.parse(line);
          if (typeof event.delta === "string") {
            streamed += event.delta;
            $("answer").textContent = streamed;
            show($("ask-notes"), note("busy", "the answer is coming in\u2026"));
          } else if (event.done) {
            final = event;
          } else if (event.error) {
            throw new ApiError(event.error, event.hint, event.type, event.status);
          }
        }
        if (done) break;
      }
      if (!final) throw new ApiError("the answer broke off before it was complete", "ask again");
      show($("ask-notes"));
      renderAnswer(final, await hits);
    } catch (err) {
      show($("ask-notes"), errorNote(err));
    } finally {
      $("answer").classList.remove("streaming");
      $("ask-button").disabled = false;
      renderLlmNote();
    }
  }
  function renderAnswer(final, hitsData) {
    const cited = new Map(final.citations.map((c) => [c.n, c]));
    const box = $("answer");
    box.replaceChildren();
    const parts = String(final.answer || "").split(/^```[^\n]*\n?/m);
    parts.forEach((part, i) => {
      if (i % 2) { box.append(el("pre", {}, el("code", { text: part.replace(/\n$/, "") }))); return; }
      for (const para of part.split(/\n\s*\n/)) if (para.trim()) box.append(withCitations(para.trim(), cited));
    });
    const warnings = [];
    if (final.weak) {
      warnings.push(note("weak", "Nothing close to the question was found in the index: codeseam does not guess.",
                         "ask about something that is indexed, or index more code (Status)"));
    } else if (!final.citations.length) {
      const tail = String(final.text || "").slice(String(final.answer || "").length).trim();
      warnings.push(note("unverified", "Unverified: this answer cites none of the retrieved code.", tail || null));
    }
    for (const n of final.notes || []) warnings.push(note("warning", n));
    show($("ask-warnings"), ...warnings);
    const hits = (hitsData && hitsData.hits) || [];
    const items = final.citations.map((c) => {
      const hit = [hits[c.n - 1], ...hits].find((h) => h && h.path === c.path && h.start_line === c.start_line && h.end_line === c.end_line);
      const li = el("li", { id: "source-" + c.n },
        el("div", { class: "cite-head" }, `[${c.n}] ${c.path}:${c.start_line}-${c.end_line}${c.symbol ? " " + c.symbol : ""}`));
      if (hit) li.append(renderHit(hit, c.n, "source-hit-"));
      return li;
    });
    $("ask-sources").replaceChildren(...items);
    $("sources-title").hidden = !items.length;
  }
  function withCitations(text, cited) {
    const p = el("p");
    const pattern = /\[(\d+(?:\s*,\s*\d+)*)\]|\(uncited\)/g;
    let last = 0, m;
    while ((m = pattern.exec(text))) {
      p.append(document.createTextNode(text.slice(last, m.index)));
      if (m[1] === undefined) {
        p.append(el("span", { class: "uncited", title: "this paragraph cites no source", text: m[0] }));
      } else {
        p.append("[");
        m[1].split(/\s*,\s*/).forEach((n, i) => {
          if (i) p.append(", ");
          const c = cited.get(Number(n));
          p.append(c ? el("a", { class: "cite", href: "#source-" + n, title: `${c.path}:${c.start_line}-${c.end_line}` }, n) : n);
        });
        p.append("]");
      }
      last = pattern.lastIndex;
    }
    p.append(document.createTextNode(text.slice(last)));
    return p;
  }

  // -- status and indexing --------------------------------------------------------------
  async function loadStatus() {
    clearTimeout(app.statusTimer);
    try {
      app.status = await apiJson("/status");
    } catch (err) {
      show($("status-notes"), errorNote(err));
      return;
    }
    show($("status-notes"));
    fillFilters();
    renderLlmNote();
    renderStatus(app.status);
    const running = (app.status.jobs || []).some((j) => j.state === "running");
    if (running && state.view === "status") app.statusTimer = setTimeout(loadStatus, 1000);
  }
  function renderStatus(s) {
    const ix = s.index;
    const rows = [["index", ix.uri], ["collection", ix.collection], ["embedder", `${ix.embedder} (${ix.dim}-d)`],
                  ["chunker", ix.chunker], ["chat model", s.llm ? "configured" : "none (RAG_LLM_MODEL is empty: ask is off)"]];
    $("status-summary").replaceChildren(...rows.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
    const repos = ix.repos || [];
    $("repos").tBodies[0].replaceChildren(...(repos.length ? repos.map((r) => el("tr", { "data-repo": r.repo },
      el("td", { text: r.repo }), el("td", { class: "mono", text: r.root }), el("td", { class: "num", text: r.files }),
      el("td", { class: "num", text: r.chunks }),
      el("td", { text: Object.entries(r.languages || {}).map(([l, n]) => `${l} ${n}`).join(", ") }),
      el("td", { text: r.state }), el("td", { text: r.last_sync ? new Date(r.last_sync).toLocaleString() : "never" })))
      : [el("tr", {}, el("td", { colspan: "7", class: "hint", text: "Nothing is indexed yet: index a folder below." }))]));
    const jobs = [...(s.jobs || [])].reverse();
    $("jobs").replaceChildren(...(jobs.length ? jobs.map(renderJob) : [el("li", { class: "hint", text: "no indexing job since the server started" })]));
    $("allowed-roots").textContent = (s.allowed_roots || []).map((r) => `${r.path} (${r.from})`).join(", ") || "none";
  }
  function renderJob(j) {
    const total = j.files_total === null || j.files_total === undefined ? null : j.files_total;
    const bar = el("progress", { max: String(Math.max(1, total || 1)) });
    if (total !== null) bar.value = j.state === "done" ? Math.max(1, total) : j.files_done; // indeterminate until known
    const parts = [`${j.files_done}/${total === null ? "?" : total} files`, `${j.chunks_embedded} chunks embedded`,
                   `${j.chunks_written} written`];
    const li = el("li", { class: "job " + j.state, id: "job-" + j.id, "data-state": j.state },
      el("span", { class: "state", text: j.state }), " ", el("span", { text: `${j.repo_id} (${j.id})` }),
      j.state === "running" ? bar : null,
      el("span", { class: "phase", text: j.state === "running" ? `${j.phase}: ${parts.join(", ")}` : "" }));
    if (j.state === "running") {
      const stop = el("button", { type: "button", class: "cancel" }, "Stop");
      stop.addEventListener("click", () => apiJson("/jobs/" + encodeURIComponent(j.id), { method: "DELETE" }).then(loadStatus, loadStatus));
      li.append(" ", stop);
      if (j.current_file) li.append(el("div", { class: "hint mono", text: j.current_file }));
    }
    if (j.state === "done" && j.report) {
      const r = j.report;
      li.append(el("div", { class: "hint", text: `${r.files_indexed || 0} files indexed, ${r.files_unchanged || 0} unchanged, ` +
        `${r.chunks_written || 0} chunks written in ${(r.seconds || 0).toFixed(1)} s; ${r.skipped || 0} skipped` }));
    }
    if (j.error) li.append(note("error", j.error, j.hint));
    return li;
  }
  async function runIndex(event) {
    event.preventDefault();
    const body = { path: $("index-path").value.trim() };
    const repoId = $("index-repo-id").value.trim();
    if (repoId) body.repo_id = repoId;
    try {
      const job = await apiJson("/index", { method: "POST", headers: { "Content-Type": "application/json" },
                                            body: JSON.stringify(body) });
      show($("index-notes"), note("busy", `indexing ${job.path} as ${job.repo_id} (job ${job.id})\u2026`));
      followJob(job.id);
    } catch (err) {
      show($("index-notes"), errorNote(err));
    }
  }
  async function followJob(id) {
    clearTimeout(app.jobTimer);
    let job;
    try { job = await apiJson("/jobs/" + encodeURIComponent(id)); } catch (err) { show($("index-notes"), errorNote(err)); return; }
    await loadStatus();
    if (job.state === "running") { app.jobTimer = setTimeout(() => followJob(id), 500); return; }
    show($("index-notes"), job.state === "done" ? note("done", `job ${job.id} (${job.repo_id}) is done`)
                                                : note("error", `job ${job.id} (${job.repo_id}) ${job.state}: ${job.error || ""}`, job.hint));
  }

  // -- keys and wiring -----------------------------------------------------------------
  function onKey(event) {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName);
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing) {
      if (event.key === "Escape") event.target.blur();
      if (event.target.id === "q" && event.key === "ArrowDown") { event.preventDefault(); select(0); }
      return;
    }
    if (event.key === "/") { event.preventDefault(); setView("search", true); return; }
    if (state.view !== "search") return;
    const items = $("hits").children;
    const current = items[app.selected];
    switch (event.key) {
      case "j": case "ArrowDown": event.preventDefault(); select(app.selected + 1); break;
      case "k": case "ArrowUp":
        event.preventDefault();
        if (app.selected <= 0) { app.selected = -1; [...items].forEach((li) => li.classList.remove("selected")); $("q").focus(); }
        else select(app.selected - 1);
        break;
      case "Enter": case "o": { const link = current && current.querySelector("a.open"); if (link) link.click(); break; }
      case "c": if (current) copyCitation(current); break;
      case "n": case "ArrowRight": goPage(1); break;
      case "p": case "ArrowLeft": goPage(-1); break;
      case "Escape": $("q").focus(); break;
      default: break;
    }
  }
  function wire() {
    $("q").addEventListener("input", () => { state.q = $("q").value; state.page = 1; scheduleSearch(); });
    $("search-form").addEventListener("submit", (e) => { e.preventDefault(); runSearch(); });
    for (const [id, key] of [["f-repo", "repo"], ["f-lang", "lang"], ["f-role", "role"]]) {
      $(id).addEventListener("change", () => {
        state[key] = $(id).value; state.page = 1;
        if (key === "repo") fillFilters();
        runSearch();
      });
    }
    $("f-path").addEventListener("input", () => { state.path = $("f-path").value.trim(); state.page = 1; scheduleSearch(); });
    $("prev-page").addEventListener("click", () => goPage(-1));
    $("next-page").addEventListener("click", () => goPage(1));
    $("ask-form").addEventListener("submit", runAsk);
    $("index-form").addEventListener("submit", runIndex);
    $("token-form").addEventListener("submit", (e) => {
      e.preventDefault();
      localStorage.setItem(TOKEN_KEY, $("token-input").value.trim());
      $("token-input").value = ""; $("token-panel").hidden = true;
      start();
    });
    for (const v of ["search", "ask", "status"]) {
      $("nav-" + v).addEventListener("click", (e) => { e.preventDefault(); setView(v, true); });
    }
    document.addEventListener("keydown", onKey);
    window.addEventListener("popstate", () => { readUrl(); syncInputs(); setView(state.view, false); runSearch(); });
  }
  function syncInputs() {
    $("q").value = state.q; $("f-path").value = state.path;
    $("f-repo").value = state.repo; $("f-lang").value = state.lang; $("f-role").value = state.role;
  }
  async function start() {
    await Promise.all([loadStatus(), detectRoleFilter()]);
    syncInputs();
    if (state.q) runSearch();
  }

  readToken();
  readUrl();
  wire();
  syncInputs();
  setView(state.view, false);
  start();
})();
