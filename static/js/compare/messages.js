// A message list editor: rows of role (system, user, assistant) and content, added, removed, moved, and filled by
// pasting an OpenAI-style JSON list. It edits the `messages` array it is given, so the editor's state is always
// current. A list that is one user message shows as the single prompt box it always was (`simple`); a trailing
// assistant message of a variant's own list is marked as the prefill the model continues (`prefill`).
import { h } from "./dom.js";

export const ROLES = ["system", "user", "assistant"];

// Is `messages` the one-user-message shorthand (what the API calls `prompt`)?
export function isSimple(messages) {
  return messages.length === 1 && messages[0].role === "user";
}

// Pasted text as {messages} or {error}: a JSON list of {role, content}, or a request body holding one
// ({"messages": [...]}, as OpenAI's API and promptfoo's chat files write it). Other keys of a message are dropped.
export function parseMessages(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { error: `Not valid JSON: ${error.message}` };
  }
  if (data && !Array.isArray(data) && Array.isArray(data.messages)) data = data.messages;
  if (!Array.isArray(data)) return { error: 'Paste a JSON list of messages, like [{"role": "user", "content": "…"}].' };
  if (!data.length) return { error: "The list is empty: paste at least one message." };
  for (const [index, message] of data.entries()) {
    const n = index + 1;
    if (!message || typeof message !== "object" || Array.isArray(message)) {
      return { error: `Message ${n} is not an object with a role and a content.` };
    }
    if (!ROLES.includes(message.role)) {
      return { error: `Message ${n}: the role ${JSON.stringify(message.role ?? null)} is not system, user or assistant.` };
    }
    if (typeof message.content !== "string") {
      const parts = Array.isArray(message.content) ? " (a list of content parts is not supported)" : "";
      return { error: `Message ${n}: the content is not text${parts}.` };
    }
  }
  return { messages: data.map((m) => ({ role: m.role, content: m.content })) };
}

// The role a new message most likely has: the other side of the conversation from the last one.
function nextRole(messages) {
  const last = messages.at(-1);
  return !last || last.role !== "user" ? "user" : "assistant";
}

// options: label ("Variant 2"), onChange, simple (show one user message as a plain prompt box, of class `boxClass`),
// prefill (mark a trailing assistant message), placeholder, promptName (the `name` of the plain box), empty (what an
// empty list says).
export function messagesEditor(messages, options) {
  const {
    label, onChange, simple = false, prefill = false, placeholder = "", promptName = null, empty = "", boxClass = "msg-prompt",
  } = options;
  const holder = h("div", { class: "msg-editor", role: "group", "aria-label": `${label}: messages` });
  let pasting = false;

  const changed = () => { render(); onChange(); };
  const move = (index, step) => {
    const [message] = messages.splice(index, 1);
    messages.splice(index + step, 0, message);
    changed();
    holder.querySelector(`[data-message-index="${index + step + 1}"] [data-op=${step < 0 ? "up" : "down"}]`)?.focus();
  };
  const content = (message, attributes) => h("textarea", {
    rows: Math.min(8, Math.max(2, message.content.split("\n").length)), value: message.content, spellcheck: "true",
    oninput: (event) => { message.content = event.target.value; onChange(); },
    ...attributes,
  });
  const errorSlot = () => h("p", { class: "field-error", "data-role": "message-error", role: "alert", hidden: true });

  function row(message, index) {
    const n = index + 1;
    const where = `${label}, message ${n}`;
    const isPrefill = prefill && message.role === "assistant" && index === messages.length - 1;
    const tool = (op, text, name, onclick, disabled) =>
      h("button", { type: "button", class: "tool", "data-op": op, "aria-label": name, title: name, disabled, onclick }, text);
    return h("div", { class: `msg-row role-${message.role}`, "data-message-index": n },
      h("div", { class: "msg-row-head" },
        h("select", {
          class: "msg-role", "aria-label": `${where}: role`,
          onchange: (event) => { message.role = event.target.value; changed(); },
        }, ...ROLES.map((role) => h("option", { value: role, selected: role === message.role }, role))),
        isPrefill ? h("span", { class: "prefill-badge", title: "A trailing assistant message: the model continues it" }, "prefill") : null,
        h("span", { class: "msg-tools" },
          tool("up", "↑", `Move ${where} up`, () => move(index, -1), index === 0),
          tool("down", "↓", `Move ${where} down`, () => move(index, 1), index === messages.length - 1),
          tool("remove", "×", `Remove ${where}`, () => {
            messages.splice(index, 1);
            if (simple && !messages.length) messages.push({ role: "user", content: "" }); // back to the prompt box
            changed();
          }))),
      content(message, { class: "msg-content", "aria-label": `${where}: content`, placeholder: index === 0 ? placeholder : "" }),
      errorSlot());
  }

  function pasteBox() {
    const text = h("textarea", {
      rows: 5, class: "mono", spellcheck: "false", "data-role": "paste-text", "aria-label": `${label}: messages as JSON`,
      placeholder: '[{"role": "system", "content": "…"}, {"role": "user", "content": "…"}]',
    });
    const error = h("p", { class: "field-error", "data-role": "paste-error", role: "alert", hidden: true });
    const use = () => {
      const parsed = parseMessages(text.value);
      if (parsed.error) {
        error.textContent = parsed.error;
        error.hidden = false;
        text.setAttribute("aria-invalid", "true");
        text.focus();
        return;
      }
      messages.splice(0, messages.length, ...parsed.messages);
      pasting = false;
      changed();
    };
    return h("div", { class: "paste-box", "data-role": "paste-box" },
      h("label", {}, "Paste an OpenAI-style JSON message list", text),
      error,
      h("div", { class: "paste-actions" },
        h("button", { type: "button", "data-action": "use-pasted", onclick: use }, "Use these messages"),
        h("button", { type: "button", class: "link", onclick: () => { pasting = false; render(); } }, "Cancel")));
  }

  function render() {
    const actions = h("div", { class: "msg-actions" },
      h("button", {
        type: "button", class: "link", "data-action": "add-message",
        onclick: () => {
          messages.push({ role: nextRole(messages), content: "" });
          changed();
          holder.querySelector(".msg-row:last-of-type textarea")?.focus();
        },
      }, "+ Add message"),
      h("button", {
        type: "button", class: "link", "data-action": "paste-messages", "aria-expanded": String(pasting),
        onclick: () => { pasting = !pasting; render(); if (pasting) holder.querySelector("[data-role=paste-text]")?.focus(); },
      }, "Paste messages"));
    let body;
    if (simple && isSimple(messages)) {
      body = [h("div", { class: boxClass, "data-message-index": 1 },
        h("label", {}, "Prompt", content(messages[0], { name: promptName, placeholder })),
        errorSlot())];
    } else {
      body = messages.length ? messages.map(row) : [h("p", { class: "muted small" }, empty)];
    }
    holder.replaceChildren(...body, actions, ...(pasting ? [pasteBox()] : []));
  }

  render();
  return holder;
}

// Show each message's problems beside it: `byIndex` maps a message's number (from 1) to its messages.
export function markMessageErrors(holder, byIndex) {
  for (const slot of holder.querySelectorAll("[data-message-index]")) {
    const texts = byIndex.get(Number(slot.dataset.messageIndex)) || [];
    const error = slot.querySelector(":scope > [data-role=message-error]");
    error.hidden = texts.length === 0;
    error.textContent = texts.join(" ");
    slot.classList.toggle("has-error", texts.length > 0);
  }
}

// Where a server message about messages points: {variant, shared, message} (numbers from 1, variant null for the
// group's shared block). The server names them "Variant 2 (B): message 3: …", "Variant 2 (B) message 3 uses …",
// "Variant 2 (B) shared message 1 …" and "Shared message 1: …".
export function locate(text) {
  const shared = /^Shared message (\d+)\b/.exec(text);
  if (shared) return { variant: null, message: Number(shared[1]) };
  const own = /^Variant (\d+)(?: \(.*?\))?:? (shared )?message (\d+)\b/.exec(text);
  if (!own) return null;
  return own[2] ? { variant: null, message: Number(own[3]) } : { variant: Number(own[1]), message: Number(own[3]) };
}
