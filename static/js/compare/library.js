// The editor's prompt library parts: pick a library version for a variant (its messages fill the variant's), and
// show what the variant's messages changed from the version it came from, message by message when either is more
// than one user message (the diff is the server's, escaped there before it is marked up).
import { postJSON } from "../csrf.js";
import { h } from "./dom.js";

const holder = document.getElementById("editor-versions");
export const versions = holder ? JSON.parse(holder.textContent) : [];
const byId = new Map(versions.map((v) => [v.id, v]));

export function versionPicker(variant, n, onPick) {
  if (!versions.length) return null;
  return h("label", { class: "ecol-version" }, "Library version",
    h("select", {
      "data-role": "version-pick", "aria-label": `Library version of variant ${n}`,
      onchange: (event) => {
        const version = byId.get(Number(event.target.value)) || null;
        variant.prompt_version = version ? version.id : null;
        if (version) variant.messages = structuredClone(version.messages?.length ? version.messages : [{ role: "user", content: version.text }]);
        onPick();
      },
    },
    h("option", { value: "" }, "none (a new prompt)"),
    ...versions.map((v) => h("option", { value: String(v.id), selected: v.id === variant.prompt_version }, v.name))));
}

export function diffSlot(variant) {
  if (!variant.prompt_version || !byId.has(variant.prompt_version)) return null;
  return h("details", { class: "ecol-diff", "data-role": "version-diff" },
    h("summary", {}, `Changes from ${byId.get(variant.prompt_version).name}`),
    h("div", { class: "diff-text", "data-role": "version-diff-body" }, "…"));
}

// Ask the server for each picked variant's diff against its version; stale answers are dropped by the caller.
export async function showVersionDiffs(form, variants, url) {
  await Promise.all(variants.map(async (variant) => {
    const slot = form.querySelector(`.ecol[data-key="${variant.key}"] [data-role=version-diff-body]`);
    if (!slot || !variant.prompt_version) return;
    const version = byId.get(variant.prompt_version);
    const single = (list) => list.length === 1 && list[0].role === "user";
    const whole = !single(variant.messages) || (version && !single(version.messages || []));
    const body = whole ? { messages: variant.messages } : { text: variant.messages[0].content };
    const result = await postJSON(url.replace("/0/", `/${variant.prompt_version}/`), body);
    if (!result.ok) { slot.textContent = "Could not compute the diff."; return; }
    const changes = result.data.messages || [];
    const changed = whole ? changes.some((c) => c.op !== "equal") : result.data.changed;
    if (!changed) { slot.textContent = "Unchanged: the variant runs this version as it is."; return; }
    // Escaped by the server (compare/prompts/diff.py): only <ins> and <del> are markup.
    if (!whole) { slot.innerHTML = result.data.inline_html; return; }
    slot.replaceChildren(...changes.filter((c) => c.op !== "equal").map((c) => {
      const html = h("div", { class: "diff-text" });
      html.innerHTML = c.diff.inline_html;
      const where = c.op === "added" ? `added as message ${c.new_position}` : c.op === "removed" ? `message ${c.old_position} removed` : `message ${c.new_position} changed`;
      return h("div", { class: "msg-diff", "data-op": c.op }, h("p", { class: "msg-diff-head" }, h("span", { class: "role-chip" }, c.new_role || c.old_role), ` ${where}`), html);
    }));
  }));
}
