// codeseam's page (the entry module): views, keys and wiring.
import { $, TOKEN_KEY, app, readToken, readUrl, state, writeUrl } from "./common.js";
import { renderLlmNote, runAsk } from "./ask.js";
import { copyCitation, detectRoleFilter, fillFilters, goPage, runSearch, scheduleSearch, select } from "./search.js";
import { loadStatus, runIndex } from "./status.js";

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
  // A pasted issue or stack trace keeps its lines (a one-line box would join them): it becomes the
  // whole query, searched as pasted, until the box is edited again.
  $("q").addEventListener("paste", (e) => {
    const text = e.clipboardData ? e.clipboardData.getData("text/plain") : "";
    if (!text.includes("\n")) return;
    e.preventDefault();
    $("q").value = text; state.q = text; state.page = 1; scheduleSearch();
  });
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
  app.ready = true; // status and the API's filters are loaded (tests and the benchmark wait for it)
}

readToken();
readUrl();
wire();
syncInputs();
setView(state.view, false);
start();
