// The API's endpoints, read from /openapi.json in the browser (no CDN: works offline).
// Every text from the spec reaches the DOM through textContent.
"use strict";
(() => {
  const TOKEN_KEY = "codeseam.token";
  const $ = (id) => document.getElementById(id);
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "text") e.textContent = String(v); else if (k === "class") e.className = v; else e.setAttribute(k, String(v));
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  function typeOf(schema, spec) {
    if (!schema) return "";
    if (schema.$ref) return schema.$ref.split("/").pop();
    if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
    const alts = schema.anyOf || schema.oneOf;
    if (alts) return alts.map((s) => typeOf(s, spec)).join(" | ");
    if (schema.type === "array") return typeOf(schema.items, spec) + "[]";
    const range = [schema.minimum !== undefined ? `\u2265 ${schema.minimum}` : "", schema.maximum !== undefined ? `\u2264 ${schema.maximum}` : "",
                   schema.maxLength !== undefined ? `\u2264 ${schema.maxLength} chars` : ""].filter(Boolean).join(", ");
    return (schema.type || "any") + (range ? ` (${range})` : "");
  }
  function fieldsTable(rows) {
    return el("table", {}, el("thead", {}, el("tr", {}, ...["name", "in", "type", "required", "default", "description"].map((h) => el("th", { text: h })))),
      el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", { text: c === undefined ? "" : c }))))));
  }
  function render(spec) {
    const out = [];
    const schemas = (spec.components || {}).schemas || {};
    for (const [path, methods] of Object.entries(spec.paths || {})) {
      for (const [method, op] of Object.entries(methods)) {
        const box = el("section", { class: "endpoint", id: `${method}-${path}` },
          el("h3", {}, el("span", { class: "method", text: method.toUpperCase() }), path));
        const summary = [op.summary, op.description].filter(Boolean).join("\n");
        if (summary) box.append(el("p", { class: "desc", text: summary }));
        const params = (op.parameters || []).map((p) => [p.name, p.in, typeOf(p.schema, spec), p.required ? "yes" : "",
          p.schema && p.schema.default !== undefined ? JSON.stringify(p.schema.default) : "", p.description || (p.schema || {}).description || ""]);
        const content = ((op.requestBody || {}).content || {})["application/json"];
        if (content && content.schema) {
          const name = typeOf(content.schema, spec);
          const props = (schemas[name] || {}).properties || {};
          const required = new Set((schemas[name] || {}).required || []);
          for (const [prop, s] of Object.entries(props)) {
            params.push([prop, "body", typeOf(s, spec), required.has(prop) ? "yes" : "", s.default !== undefined ? JSON.stringify(s.default) : "", s.description || ""]);
          }
        }
        if (params.length) box.append(fieldsTable(params));
        out.push(box);
      }
    }
    $("endpoints").replaceChildren(...out);
  }
  async function load() {
    const headers = {};
    const token = localStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = "Bearer " + token;
    let response;
    try { response = await fetch("/openapi.json", { headers }); } catch (_) {
      $("docs-notes").replaceChildren(el("div", { class: "note error", text: "cannot reach the codeseam server" }));
      return;
    }
    if (response.status === 401) { $("token-form").hidden = false; return; }
    render(await response.json());
  }
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    localStorage.setItem(TOKEN_KEY, $("token-input").value.trim());
    $("token-form").hidden = true;
    load();
  });
  load();
})();
