// codeseam's page: ask, the streamed answer and its cited hits (an ES module).
import { $, ApiError, api, apiJson, apiSearch, app, el, errorNote, note, show } from "./common.js";
import { renderHit } from "./search.js";

// -- ask -----------------------------------------------------------------------------
export function renderLlmNote() {
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
export async function runAsk(event) {
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
  const hits = apiSearch(q).catch(() => null); // the same hits the answer cites
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
  const pattern = /\[(\d+(?:\s*,\s*\d+)*)\]|\(uncited\)|`([^`\n]+)`/g;
  let last = 0, m;
  while ((m = pattern.exec(text))) {
    p.append(document.createTextNode(text.slice(last, m.index)));
    if (m[2] !== undefined) {
      p.append(el("code", { text: m[2] }));
    } else if (m[1] === undefined) {
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
