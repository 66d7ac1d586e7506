// The comparison editor: mode, 2–5 variant columns (add, remove, reorder, duplicate), each a message list (one user
// message shows as a single prompt box), a shared few-shot block, shared variables and per-variant overrides, a
// live preview of each whole conversation rendered by the server with its token estimate, the parameter check, and
// "save and run" with each refusal shown beside the message it is about.
import { postJSON } from "../csrf.js";
import { h } from "./dom.js";
import { loadCatalog, showModelNote } from "./models.js";
import { diffSlot, showVersionDiffs, versionPicker } from "./library.js";
import { isSimple, locate, markMessageErrors, messagesEditor } from "./messages.js";
import { rowsFrom, valuesOf, variablesEditor } from "./vars.js";

const form = document.getElementById("editor");
const initial = JSON.parse(document.getElementById("editor-initial").textContent);
const {
  max_variants: MAX_VARIANTS, default_timeout_ms: DEFAULT_TIMEOUT_MS, default_stagger_ms: DEFAULT_STAGGER_MS,
} = JSON.parse(document.getElementById("editor-limits").textContent);
const MIN_VARIANTS = 2;
const DEFAULT_MODEL = "simulated::writer";
const field = (name) => form.elements.namedItem(name);
const part = (role) => form.querySelector(`[data-role=${role}]`);

let catalog = null;
let nextKey = 1;
let lastPreview = null; // the latest preview, by variant key, so re-drawn columns show it at once

const state = {
  sharedRows: [],
  sharedMessages: [], // the group's few-shot block: every variant gets them after the system prompt
  modelMessages: [{ role: "user", content: "" }], // models mode: the one conversation every model gets
  variants: [], // {key, label, model, messages, prompt_version, rows}
};

const userMessage = (content = "") => [{ role: "user", content }];

function newVariant(fields = {}) {
  return { label: "", model: "", messages: userMessage(), prompt_version: null, rows: [], ...fields, key: nextKey++ };
}

// A variant's messages as the API takes them: the one-user-message shorthand as `prompt`, else `messages`.
function conversation(messages) {
  return isSimple(messages) ? { prompt: messages[0].content } : { messages: messages.map((m) => ({ ...m })) };
}

const mode = () => form.querySelector("input[name=mode]:checked").value;

function nextLabel() {
  const used = new Set(state.variants.map((v) => v.label));
  return [..."ABCDEFGHIJ"].find((letter) => !used.has(letter)) || `V${state.variants.length + 1}`;
}

function copyLabel(label) {
  const used = new Set(state.variants.map((v) => v.label));
  for (let n = 2; ; n++) if (!used.has(`${label} v${n}`)) return `${label} v${n}`;
}

// --- The request bodies ---------------------------------------------------------------------------------------

function number(name) {
  const raw = field(name).value.trim();
  return raw === "" ? null : Number(raw);
}

// The run settings' fields, named as the API takes them.
const PARAM_FIELDS = ["temperature", "top_p", "top_k", "max_tokens", "seed", "presence_penalty", "frequency_penalty"];

function params() {
  return Object.fromEntries(PARAM_FIELDS.map((name) => [name, number(name)]));
}

// The group as the server takes it, and the problems found before asking it.
function body() {
  const shared = valuesOf(state.sharedRows, "Shared variables");
  const errors = [...shared.errors];
  const variants = state.variants.map((variant, index) => {
    const overrides = valuesOf(variant.rows, `Variant ${index + 1}'s variables`);
    if (mode() === "prompts") errors.push(...overrides.errors);
    return {
      label: variant.label.trim(),
      model: (mode() === "prompts" ? field("model").value : variant.model).trim(),
      ...conversation(mode() === "models" ? state.modelMessages : variant.messages),
      // Models mode sends every model the same prompt, so per-variant variables do not apply there.
      variables: mode() === "prompts" ? overrides.values : {},
      prompt_version: variant.prompt_version ?? null, // the library version it was made from (lineage)
    };
  });
  return {
    errors,
    data: {
      title: field("title").value,
      mode: mode(),
      system_prompt: field("system_prompt").value,
      shared_messages: state.sharedMessages.map((m) => ({ ...m })),
      shared_variables: shared.values,
      params: params(),
      blind: field("blind").checked,
      repeat: number("repeat") ?? 1,
      // One round per row of this test set instead of `repeat` rounds. (The field is not named "dataset": a form
      // control of that name would hide the form's own `dataset`.)
      dataset: number("test_set"),
      timeout_ms: number("timeout_ms") ?? DEFAULT_TIMEOUT_MS,
      stagger_ms: number("stagger_ms") ?? DEFAULT_STAGGER_MS,
      cloned_from: initial?.cloned_from ?? null,
      variants,
    },
  };
}

// --- Variant columns -------------------------------------------------------------------------------------------

function move(index, step) {
  const [variant] = state.variants.splice(index, 1);
  state.variants.splice(index + step, 0, variant);
  renderVariants();
  changed();
  form.querySelector(`.ecol[data-key="${variant.key}"] [data-op=${step < 0 ? "left" : "right"}]`)?.focus();
}

function column(variant, index) {
  const n = index + 1;
  const count = state.variants.length;
  const timeout = (number("timeout_ms") ?? DEFAULT_TIMEOUT_MS) / 1000;
  const tool = (op, text, label, onclick, disabled) =>
    h("button", { type: "button", class: "tool", "data-op": op, "aria-label": label, title: label, disabled, onclick }, text);
  return h("article", { class: "ecol", "data-key": variant.key, "aria-label": `Variant ${n}` },
    h("header", { class: "ecol-head" },
      h("span", { class: "ecol-num", "aria-hidden": "true" }, String(n)),
      h("input", {
        class: "ecol-label", value: variant.label, maxlength: 80, "aria-label": `Label of variant ${n}`,
        oninput: (event) => { variant.label = event.target.value; changed(); },
      }),
      h("div", { class: "ecol-tools" },
        tool("left", "←", `Move variant ${n} left`, () => move(index, -1), index === 0),
        tool("right", "→", `Move variant ${n} right`, () => move(index, 1), index === count - 1),
        tool("duplicate", "Duplicate", `Duplicate variant ${n}`, () => {
          state.variants.splice(index + 1, 0, newVariant({ ...structuredClone(variant), label: copyLabel(variant.label) }));
          renderVariants();
          changed();
        }, count >= MAX_VARIANTS),
        tool("remove", "Remove", `Remove variant ${n}`, () => {
          state.variants.splice(index, 1);
          renderVariants();
          changed();
        }, count <= MIN_VARIANTS))),
    mode() === "models"
      ? h("div", { class: "ecol-model" },
          h("label", {}, "Model", h("input", {
            value: variant.model, list: "model-options", placeholder: "connection::model", spellcheck: "false",
            autocomplete: "off", "data-role": "variant-model",
            oninput: (event) => { variant.model = event.target.value; showModelNotes(); changed(); },
          })),
          h("p", { class: "field-note" }))
      : versionPicker(variant, n, () => { renderVariants(); changed(); }),
    mode() === "models" ? null
      : messagesEditor(variant.messages, {
          label: `Variant ${n}`, simple: true, prefill: true, onChange: changed, boxClass: "ecol-prompt",
          placeholder: "Write this version of the prompt. Use {{name}} for variables.",
        }),
    mode() === "prompts" ? diffSlot(variant) : null,
    mode() === "prompts"
      ? h("details", { class: "overrides", open: variant.rows.length > 0 },
          h("summary", {}, "Variables for this variant only"),
          variablesEditor(variant.rows, { label: `Variant ${n} variables`, onChange: changed, workspace: form.dataset.workspace }))
      : null,
    h("section", { class: "ecol-preview", "aria-label": `Preview of variant ${n}` },
      h("h3", {}, "Preview ", h("span", { class: "muted small", "data-role": "tokens" })),
      h("ul", { class: "messages", "data-role": "messages", "aria-live": "polite" }),
      h("ol", { class: "preview-conversation", "data-role": "conversation" }, h("li", {}, "…"))),
    h("p", { class: "ecol-timeout muted small" }, `Times out after ${timeout} s`));
}

function renderVariants() {
  const holder = part("variants");
  holder.className = `editor-columns cols-${state.variants.length}`;
  holder.replaceChildren(...state.variants.map(column));
  if (lastPreview) showPreview(lastPreview);
  part("variant-count").textContent = `${state.variants.length} of ${MAX_VARIANTS}`;
  form.querySelector("[data-action=add-variant]").disabled = state.variants.length >= MAX_VARIANTS;
  showModelNotes();
}

function showModelNotes() {
  showModelNote(part("model-note"), catalog, field("model").value);
  for (const input of form.querySelectorAll("[data-role=variant-model]")) {
    showModelNote(input.closest(".ecol-model").querySelector(".field-note"), catalog, input.value);
  }
}

// The shared few-shot block and, in models mode, the one conversation every model gets.
function renderMessageBlocks() {
  part("shared-messages").replaceChildren(messagesEditor(state.sharedMessages, {
    label: "Shared few-shot", onChange: changed,
    empty: "None: each variant starts after the system prompt. Add example turns every variant should see.",
  }));
  part("model-messages").replaceChildren(messagesEditor(state.modelMessages, {
    label: "Every model", simple: true, prefill: true, promptName: "prompt", onChange: changed,
    placeholder: "Summarise {{text}} in one sentence.",
  }));
}

function renderMode() {
  for (const element of form.querySelectorAll("[data-mode-only]")) element.hidden = element.dataset.modeOnly !== mode();
}

// A test set runs one round per row, so "Rounds to run" does not apply while one is picked.
function renderDataset() {
  field("repeat").disabled = field("test_set").value !== "";
}

// --- Preview and parameter check, debounced --------------------------------------------------------------------

let timer = null;
let sequence = 0;

function changed() {
  clearTimeout(timer);
  timer = setTimeout(refresh, 300);
}

function messageList(list, items) {
  list.replaceChildren(...items.map(([kind, text]) => h("li", { class: `msg-${kind}` }, text)));
}

async function refresh() {
  const mine = ++sequence;
  const { errors, data } = body();
  // The preview renders prompts only; a placeholder model keeps it valid while a model field is still empty.
  // With a test set picked, the server renders its first row, as the run's first round.
  const previewBody = {
    workspace: Number(form.dataset.workspace),
    dataset: data.dataset,
    mode: data.mode,
    system_prompt: data.system_prompt,
    shared_messages: data.shared_messages,
    shared_variables: data.shared_variables,
    variants: data.variants.map((v) => ({ ...v, model: v.model || "unset" })),
  };
  const [preview, check] = await Promise.all([
    postJSON(form.dataset.previewUrl, previewBody),
    postJSON(form.dataset.checkUrl, { params: data.params, models: data.variants.map((v) => v.model) }),
  ]);
  if (mine !== sequence) return; // a newer edit already asked again
  rememberPreview(preview, errors);
  showVersionDiffs(form, state.variants, form.dataset.versionDiffUrl);
  messageList(part("problems"), (check.data.problems || []).map((text) => ["problem", text]));
}

// The server's answer, kept by variant key: a column moved or re-drawn since still shows its own preview.
function rememberPreview(preview, localErrors) {
  const keys = state.variants.map((variant) => variant.key);
  lastPreview = {
    ok: preview.ok,
    failure: preview.ok ? "" : Object.values(preview.data).flat().join(" ") || String(preview.status),
    localErrors,
    warnings: preview.ok ? preview.data.warnings : [],
    byKey: new Map(preview.ok ? preview.data.variants.map((variant, index) => [keys[index], variant]) : []),
  };
  showPreview(lastPreview);
}

function showPreview({ ok, failure, localErrors, warnings, byKey }) {
  const top = [...localErrors.map((t) => ["error", t]), ...warnings.map((t) => ["warning", t])];
  if (!ok) top.push(["error", `The preview failed: ${failure}`]);
  messageList(part("group-warnings"), top);
  for (const col of form.querySelectorAll(".ecol")) {
    const variant = byKey.get(Number(col.dataset.key));
    if (!variant) continue;
    // A warning about a variable used unevenly names the variants without it; show it next to each of them.
    const name = `Variant ${variant.position} (${variant.label})`;
    messageList(col.querySelector("[data-role=messages]"), [
      ...variant.errors.map((t) => ["error", t]),
      ...variant.warnings.map((t) => ["warning", t]),
      ...warnings.filter((t) => t.includes(name)).map((t) => ["warning", t]),
    ]);
    col.querySelector("[data-role=conversation]").replaceChildren(...previewMessages(variant.messages || []));
    col.querySelector("[data-role=tokens]").textContent =
      variant.input_tokens == null ? "" : `≈ ${variant.input_tokens.toLocaleString("en-US")} input token${variant.input_tokens === 1 ? "" : "s"}`;
  }
  placeErrors(ok ? [...byKey.values()].flatMap((variant) => variant.errors) : []);
}

// The whole conversation as it would be sent: each message under its role; a trailing assistant one is the prefill.
function previewMessages(messages) {
  if (!messages.length) return [h("li", { class: "muted" }, "(nothing to send yet)")];
  return messages.map((message, index) => {
    const prefill = message.role === "assistant" && index === messages.length - 1;
    return h("li", { class: `preview-msg role-${message.role}`, "data-role-name": message.role },
      h("span", { class: "role-chip" }, prefill ? "assistant · prefill" : message.role),
      h("pre", { class: "preview-text" }, message.content || "(empty)"));
  });
}

// Each message's problems beside it (the rest stay in the lists above): the shared block's and each variant's.
function placeErrors(texts) {
  const shared = new Map();
  const own = new Map(); // variant position → (message number → texts)
  for (const text of new Set(texts)) {
    const at = locate(text);
    if (!at) continue;
    const into = at.variant === null ? shared : (own.get(at.variant) || own.set(at.variant, new Map()).get(at.variant));
    into.set(at.message, [...(into.get(at.message) || []), text]);
  }
  markMessageErrors(part("shared-messages"), shared);
  const target = mode() === "models" ? [part("model-messages")] : [...form.querySelectorAll(".ecol")];
  target.forEach((holder, index) => markMessageErrors(holder, own.get(mode() === "models" ? 1 : index + 1) || new Map()));
}

// --- Save and run ----------------------------------------------------------------------------------------------

function showErrors(messages) {
  const box = part("errors");
  box.hidden = messages.length === 0;
  box.replaceChildren(
    h("p", {}, h("strong", {}, "Not saved. Please fix:")),
    h("ul", {}, ...messages.map((text) => h("li", {}, text))),
  );
  if (messages.length) box.scrollIntoView({ block: "nearest", behavior: "smooth" });
}

async function save(event) {
  event.preventDefault();
  const { errors, data } = body();
  if (errors.length) { showErrors(errors); return; }
  const button = part("save");
  const status = part("status");
  button.disabled = true;
  status.textContent = "Saving…";
  const result = await postJSON(form.dataset.saveUrl, data);
  if (result.ok) {
    // The comparison page starts the run once it is listening, so every answer is seen from its first token.
    const { dataset, repeat } = result.data; // the runs API's body: one round per row, or `repeat` rounds
    sessionStorage.setItem(`promptlab:start:${result.data.group}`, JSON.stringify(dataset ? { dataset } : { repeat }));
    window.location.assign(result.data.url);
    return;
  }
  button.disabled = false;
  status.textContent = "";
  const bare = ["variants", "params", "shared_messages", "__all__"]; // their messages name what they are about
  const messages = result.data.errors
    ? Object.entries(result.data.errors).flatMap(([name, list]) => list.map((t) => (bare.includes(name) ? t : `${name}: ${t}`)))
    : [result.status === 403 ? "You need the editor role in this workspace to run comparisons." : "The server could not save this comparison."];
  showErrors(messages);
  placeErrors(messages);
}

// --- Start ----------------------------------------------------------------------------------------------------

function fill(group) {
  field("title").value = group.title || "";
  form.querySelector(`input[name=mode][value=${group.mode === "models" ? "models" : "prompts"}]`).checked = true;
  field("system_prompt").value = group.system_prompt || "";
  const p = group.params || {};
  for (const name of PARAM_FIELDS) field(name).value = p[name] ?? "";
  field("blind").checked = Boolean(group.blind);
  field("test_set").value = group.dataset ?? ""; // a test set since deleted is no option: none is picked
  for (const name of ["timeout_ms", "stagger_ms"]) field(name).value = group[name];
  state.sharedRows = rowsFrom(group.shared_variables);
  state.sharedMessages = (group.shared_messages || []).map((m) => ({ role: m.role, content: m.content }));
  const messagesOf = (v) => (v.messages?.length ? v.messages.map((m) => ({ role: m.role, content: m.content })) : userMessage(v.prompt));
  state.variants = group.variants.map((v) => newVariant({
    label: v.label, model: v.model, messages: messagesOf(v), prompt_version: v.prompt_version ?? null, rows: rowsFrom(v.variables),
  }));
  field("model").value = group.variants[0]?.model || "";
  state.modelMessages = group.variants[0] ? messagesOf(group.variants[0]) : userMessage();
}

// An empty conversation: one user message with nothing written in it.
const blank = (messages) => isSimple(messages) && !messages[0].content;

function switchMode() {
  if (mode() === "models") {
    if (blank(state.modelMessages) && state.variants[0]) state.modelMessages = structuredClone(state.variants[0].messages);
    for (const variant of state.variants) variant.model ||= field("model").value;
  } else {
    if (!field("model").value) field("model").value = state.variants[0]?.model || "";
    for (const variant of state.variants) if (blank(variant.messages)) variant.messages = structuredClone(state.modelMessages);
  }
  renderMode();
  renderMessageBlocks();
  renderVariants();
  changed();
}

if (initial) {
  fill(initial);
} else {
  state.sharedRows = [{ name: "", value: "", json: false }];
  state.variants = [newVariant({ label: "A" }), newVariant({ label: "B" })];
}
part("shared-vars").replaceChildren(variablesEditor(state.sharedRows, { label: "Shared variables", onChange: changed, workspace: form.dataset.workspace }));
renderMode();
renderDataset();
renderMessageBlocks();
renderVariants();

form.addEventListener("input", (event) => {
  if (event.target.name === "model") showModelNotes();
  if (event.target.name === "timeout_ms") renderVariants();
  if (event.target.name === "test_set") renderDataset();
  changed();
});
for (const radio of form.querySelectorAll("input[name=mode]")) radio.addEventListener("change", switchMode);
form.querySelector("[data-action=add-variant]").addEventListener("click", () => {
  const last = state.variants.at(-1);
  state.variants.push(newVariant({ label: nextLabel(), model: last?.model || "" }));
  renderVariants();
  changed();
  form.querySelector(".ecol:last-child .msg-editor textarea, .ecol:last-child input[data-role=variant-model]")?.focus();
});
form.addEventListener("submit", save);
form.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
});

loadCatalog(form.dataset.modelsUrl, document.getElementById("model-options")).then((loaded) => {
  catalog = loaded;
  if (!field("model").value && !initial) {
    field("model").value = loaded.models.some((m) => m.id === DEFAULT_MODEL) ? DEFAULT_MODEL : loaded.models[0]?.id || "";
  }
  showModelNotes();
  if (loaded.errors.length) part("status").textContent = loaded.errors.join(" ");
  changed();
});
changed();
