// The editor's prompt library parts: pick a library version for a variant, and show what the variant's prompt
// changed from the version it came from (the diff is the server's, escaped there before it is marked up).
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
        if (version) variant.prompt = version.text;
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
    const result = await postJSON(url.replace("/0/", `/${variant.prompt_version}/`), { text: variant.prompt });
    if (!result.ok) { slot.textContent = "Could not compute the diff."; return; }
    // Escaped by the server (compare/prompts/diff.py): only <ins> and <del> are markup.
    slot.innerHTML = result.data.changed ? result.data.inline_html : "Unchanged: the variant runs this version as it is.";
  }));
}
