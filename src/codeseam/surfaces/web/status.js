// codeseam's page: status, indexing jobs and the index form (an ES module).
import { $, apiJson, app, el, errorNote, note, show, state } from "./common.js";
import { renderLlmNote } from "./ask.js";
import { fillFilters } from "./search.js";

// -- status and indexing --------------------------------------------------------------
export async function loadStatus() {
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
    el("td", { text: repoState(r) }), el("td", { text: r.last_sync ? new Date(r.last_sync).toLocaleString() : "never" })))
    : [el("tr", {}, el("td", { colspan: "7", class: "hint", text: "Nothing is indexed yet: index a folder below." }))]));
  const jobs = [...(s.jobs || [])].reverse();
  $("jobs").replaceChildren(...(jobs.length ? jobs.map(renderJob) : [el("li", { class: "hint", text: "no indexing job since the server started" })]));
  $("allowed-roots").textContent = (s.allowed_roots || []).map((r) => `${r.path} (${r.from})`).join(", ") || "none";
}
function eta(seconds) {
  return seconds === null || seconds === undefined ? "" : `, about ${Math.ceil(seconds)} s left`;
}
function repoState(r) {
  const v = r.vectors || {};
  const choice = v.choice && v.choice !== "all" ? ` (vectors: ${v.choice})` : "";
  if (r.state === "embedding") return `searchable; ${v.pending || 0} chunks wait for vectors${eta(v.eta_seconds)}${choice}`;
  return r.state + choice;
}
function renderJob(j) {
  const total = j.files_total === null || j.files_total === undefined ? null : j.files_total;
  const bar = el("progress", { max: String(Math.max(1, total || 1)) });
  if (total !== null) bar.value = j.state === "done" ? Math.max(1, total) : j.files_done; // indeterminate until known
  const parts = j.searchable && j.state === "running"
    ? ["searchable", `${j.chunks_embedded} chunks embedded`, `${j.chunks_pending} waiting${eta(j.eta_seconds)}`]
    : [`${j.files_done}/${total === null ? "?" : total} files`, `${j.chunks_embedded} chunks embedded`,
       `${j.chunks_written} written`];
  const li = el("li", { class: "job " + j.state, id: "job-" + j.id, "data-state": j.state },
    el("span", { class: "state", text: j.state }), " ", el("span", { text: `${j.repo_id} (${j.id})` }),
    j.state === "running" ? bar : null,
    el("span", { class: "phase", text: j.state === "running" ? `${parts.join(", ")} (${j.phase})` : "" }));
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
export async function runIndex(event) {
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
