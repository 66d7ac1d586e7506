// The vote panel of a round: the voting app's partial, fetched by URL and wired here. Votes go to the vote API;
// tallies update live from vote.tally events; keys 1–5 pick an answer, T a tie, B "all bad".
import { postJSON } from "../csrf.js";

export class VotePanel {
  constructor(slot, url, { onChange, onReveal }) {
    this.slot = slot;
    this.url = url;
    this.onChange = onChange;
    this.onReveal = onReveal;
    this.myOutput = null;
  }

  get section() {
    return this.slot?.querySelector(".vote-panel");
  }

  async load() {
    if (!this.slot) return;
    const response = await fetch(this.url, { credentials: "same-origin" }).catch(() => null);
    if (!response?.ok) return;
    this.slot.innerHTML = await response.text(); // the voting app's server-rendered partial
    const section = this.section;
    this.myOutput = section.dataset.myOutput || null;
    section.addEventListener("click", (event) => {
      const button = event.target.closest(".vote-choice");
      if (button && !button.disabled) this.cast(button);
      const whole = event.target.closest(".conversation-choice");
      if (whole && !whole.disabled) this.castOnConversation(whole);
    });
    this.onChange(this.myOutput);
  }

  buttonFor(key) {
    return this.section?.querySelector(`.vote-choice[data-key="${key}"]`);
  }

  async cast(button) {
    const section = this.section;
    const hidden = section.dataset.showTally !== "1";
    const body = button.dataset.output ? { output: Number(button.dataset.output) } : { verdict: button.dataset.verdict };
    for (const other of section.querySelectorAll(".vote-choice")) other.setAttribute("aria-pressed", String(other === button));
    const result = await postJSON(section.dataset.voteUrl, body);
    if (!result.ok) {
      const status = section.querySelector("[data-role=vote-status]");
      status.textContent = `Your vote was not saved: ${Object.values(result.data).flat().join(" ") || "try again."}`;
      status.classList.add("error");
      return;
    }
    if (hidden) {
      await this.onReveal(); // blind mode: names and the real column order arrive now, with a new panel
      if (!this.slot.isConnected) return;
    }
    await this.load();
    const status = this.section?.querySelector("[data-role=vote-status]");
    if (status && result.data.live === "delayed") status.textContent = result.data.detail; // saved, not yet live
  }

  // A vote on the whole conversation (a later turn's panel): counted apart from this turn's vote. In a blind
  // conversation it is what shows the names, so the round is reloaded with them.
  async castOnConversation(button) {
    const box = button.closest("[data-conversation-url]");
    const body = button.dataset.output ? { output: Number(button.dataset.output) } : { verdict: button.dataset.verdict };
    const result = await postJSON(box.dataset.conversationUrl, body);
    if (!result.ok) {
      const status = this.section.querySelector("[data-role=vote-status]");
      status.textContent = `Your vote was not saved: ${Object.values(result.data).flat().join(" ") || "try again."}`;
      status.classList.add("error");
      return;
    }
    await this.onReveal();
    if (this.slot.isConnected) await this.load();
  }

  tally(event) {
    const section = this.section;
    if (!section || Number(section.dataset.round) !== event.round || section.dataset.showTally !== "1") return;
    if (!event.outputs) return this.load(); // blind mode: the counts come over HTTP, to those who have voted
    for (const counter of section.querySelectorAll("[data-tally]")) {
      const key = counter.dataset.tally;
      if (key === "total") counter.textContent = event.total;
      else if (key === "tie") counter.textContent = event.tie;
      else if (key === "all_bad") counter.textContent = event.all_bad;
      else counter.textContent = event.outputs[key] || 0;
    }
    const word = section.querySelector("[data-role=votes-word]"); // "1 vote so far", "2 votes so far"
    if (word) word.textContent = event.total === 1 ? "vote" : "votes";
  }
}

const KEYS = { t: "t", T: "t", b: "b", B: "b" };

// One keyboard listener for the page; it asks for the panel of the round shown at the moment.
export function listenForVoteKeys(currentPanel) {
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    if (event.target.closest("input, textarea, select, [contenteditable]")) return;
    const key = /^[1-5]$/.test(event.key) ? event.key : KEYS[event.key];
    const button = key && currentPanel()?.buttonFor(key);
    if (!button || button.disabled) return;
    event.preventDefault();
    button.focus();
    currentPanel().cast(button);
  });
}
