// The verdict panel of a round: judging's server-rendered partial, fetched by URL. "Judge this round" posts
// the form and shows the panel it gets back; while a verdict is queued or running the panel reloads itself
// on `verdict.done` (call `verdictDone(event)` from the page's socket) or, failing that, every few seconds.
import { csrfToken } from "../csrf.js";

const POLL_MS = 3000;

export class VerdictPanel {
  constructor(slot, url) {
    this.slot = slot;
    this.url = url;
    this.timer = null;
    slot?.addEventListener("submit", (event) => {
      if (!event.target.matches(".verdict-form")) return;
      event.preventDefault();
      this.judge(event.target);
    });
  }

  get section() {
    return this.slot?.querySelector(".verdict-panel");
  }

  async load() {
    if (!this.slot) return;
    const response = await fetch(this.url, { credentials: "same-origin" }).catch(() => null);
    if (response?.ok) this.show(await response.text());
  }

  show(html) {
    this.slot.innerHTML = html;
    clearTimeout(this.timer);
    if (this.section?.dataset.pending === "1") this.timer = setTimeout(() => this.load(), POLL_MS);
  }

  async judge(form) {
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    const response = await fetch(form.action, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken() },
      body: new FormData(form),
    }).catch(() => null);
    if (!response) {
      button.disabled = false;
      return;
    }
    this.show(await response.text()); // a refusal (400) comes back as the panel with the reason
  }

  verdictDone(event) {
    if (Number(this.section?.dataset.round) === event.round) this.load();
  }
}

// Standalone use: every [data-verdict-panel] element on a page loads its panel.
for (const slot of document.querySelectorAll("[data-verdict-panel]")) new VerdictPanel(slot, slot.dataset.verdictPanel).load();
