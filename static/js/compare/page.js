// The comparison page: streams every column live over the group's socket, keeps the round in step with the
// database over HTTP (on connect, after each answer, on a gap in an answer's text and when the server says events
// were missed while the socket stayed open), switches rounds in place,
// and runs the header's actions and tabs. Votes and the judge's verdicts are the voting and judging apps'
// partials, fetched by URL into the round (vote.js, judging/verdict_panel.js).
import { postJSON, socketURL } from "../csrf.js";
import { VerdictPanel } from "../judging/verdict_panel.js";
import { answerCost, duration, tokens } from "./format.js";
import { Streams } from "./stream.js";
import { VotePanel, listenForVoteKeys } from "./vote.js";

const FINAL = new Set(["ok", "error", "timeout", "cancelled"]);
const STATUS_LABELS = {
  queued: "Queued", running: "Running", ok: "OK", error: "Error", timeout: "Timed out", cancelled: "Cancelled",
};

const root = document.getElementById("compare");
const region = document.getElementById("round-region");
const notice = root.querySelector(".cmp-notice");
const cancelButton = root.querySelector("[data-action=cancel]");
const streams = new Streams();
let panel = null;
let verdicts = null;

const roundEl = () => region.querySelector(".round");
const columnOf = (output) => region.querySelector(`.col[data-output="${Number(output)}"]`);
const roundURL = (template, number) => template.replace("/rounds/0/", `/rounds/${Number(number)}/`);

function showNotice(text, link) {
  notice.replaceChildren(text);
  if (link) {
    const a = document.createElement("a");
    a.href = "#";
    a.textContent = link.text;
    a.addEventListener("click", (event) => { event.preventDefault(); link.onClick(); notice.hidden = true; });
    notice.append(" ", a);
  }
  notice.hidden = false;
}

function setChip(chip, status, label) {
  if (!chip) return;
  chip.className = `chip status-${status}`;
  chip.textContent = label || STATUS_LABELS[status] || status;
}

// --- Streaming -------------------------------------------------------------------------------------------

function nearBottom(body) {
  return body.scrollHeight - body.scrollTop - body.clientHeight < 40;
}

function showStream(column, state) {
  if (FINAL.has(column.dataset.status)) return;
  const pre = column.querySelector("[data-role=stream]");
  if (!pre) return;
  const body = column.querySelector("[data-role=body]");
  const follow = nearBottom(body);
  column.querySelector("[data-role=waiting]")?.remove();
  pre.textContent = state.text; // raw model text: never parsed as HTML while it streams
  if (state.gap && !column.querySelector(".gap-note")) {
    const note = document.createElement("p");
    note.className = "gap-note";
    note.textContent = "Joined mid-answer: the full text appears when it finishes.";
    body.prepend(note);
  }
  if (column.dataset.status !== "running") {
    column.dataset.status = "running";
    column.className = "col status-running";
    setChip(column.querySelector("[data-role=status]"), "running", "Streaming");
  }
  if (follow) body.scrollTop = body.scrollHeight;
}

function restoreStreams() {
  for (const column of region.querySelectorAll(".col")) {
    const state = streams.get(column.dataset.output);
    if (state) showStream(column, state);
  }
}

function onDelta(event) {
  const hadGap = streams.get(event.output)?.gap;
  const state = streams.apply(event.output, event.offset, event.text);
  const column = columnOf(event.output);
  if (column) showStream(column, state);
  if (state.gap && !hadGap) resyncSoon(); // text went missing: what else did?
}

function onDone(event) {
  streams.forget(event.output);
  const column = columnOf(event.output);
  if (!column) return;
  delete column.dataset.synced; // until the stored version replaces it (see merge)
  column.dataset.status = event.status;
  column.className = `col status-${event.status}`;
  setChip(column.querySelector("[data-role=status]"), event.status);
  const body = column.querySelector("[data-role=body]");
  const parts = [];
  if (event.error) {
    const error = document.createElement("p");
    error.className = "col-error";
    error.setAttribute("role", "alert");
    error.textContent = event.error;
    parts.push(error);
  }
  if (event.html) {
    const answer = document.createElement("div");
    answer.className = "answer";
    answer.innerHTML = event.html; // rendered and sanitized by the server (lab.markdown), never by this page
    parts.push(answer);
  } else if (!event.error) {
    const empty = document.createElement("p");
    empty.className = "muted";
    empty.textContent = "No text.";
    parts.push(empty);
  }
  body.replaceChildren(...parts);
  // A blind column has no figures until its reader votes (compare.blind): the event carries none either.
  const metric = (name, text) => { const cell = column.querySelector(`[data-metric=${name}]`); if (cell) cell.textContent = text; };
  metric("queued", duration(event.queued_ms));
  metric("ttft", duration(event.ttft_ms));
  metric("latency", duration(event.latency_ms));
  metric("tokens", `${tokens(event.input_tokens, event.tokens_estimated)} / ${tokens(event.output_tokens, event.tokens_estimated)}`);
  metric("cost", answerCost(event.cost, event.status));
  resyncSoon(); // the round total and the other columns' state come from the database
}

// --- Keeping in step with the database ---------------------------------------------------------------------

let resyncing = null;
let resyncAgain = false;
let resyncTimer = null;

function resyncSoon(delay = 150) {
  clearTimeout(resyncTimer);
  resyncTimer = setTimeout(resync, delay);
}

async function fetchRound(number) {
  const response = await fetch(roundURL(root.dataset.partialUrl, number), { credentials: "same-origin" });
  if (!response.ok) return null;
  const template = document.createElement("template");
  template.innerHTML = await response.text();
  return template.content.querySelector(".round");
}

async function resync() {
  if (resyncing) { resyncAgain = true; return resyncing; }
  const current = roundEl();
  if (!current) return null;
  resyncing = (async () => {
    const fresh = await fetchRound(current.dataset.number).catch(() => null);
    if (fresh && roundEl() === current) merge(current, fresh);
  })();
  await resyncing;
  resyncing = null;
  if (resyncAgain) { resyncAgain = false; resync(); }
  return null;
}

const columnOrder = (el) => [...el.querySelectorAll(".col")].map((c) => c.dataset.output).join(",");

function merge(current, fresh) {
  if (current.dataset.labelsVisible !== fresh.dataset.labelsVisible || columnOrder(current) !== columnOrder(fresh)) {
    replaceRound(fresh); // blind mode lifted: names and the real order arrive together
    return;
  }
  current.querySelector(".round-nav").replaceWith(fresh.querySelector(".round-nav"));
  current.querySelector(".round-error")?.remove();
  const error = fresh.querySelector(".round-error");
  if (error) current.querySelector(".round-nav").after(error);
  for (const column of fresh.querySelectorAll(".col")) {
    const shown = columnOf(column.dataset.output);
    if (!FINAL.has(column.dataset.status)) {
      if (!streams.get(column.dataset.output) && shown.dataset.status === "queued" && column.dataset.status === "running") {
        shown.querySelector("[data-role=waiting]")?.replaceChildren("Waiting for the first token…");
      }
      continue;
    }
    // A stored answer already shown stays as it is, so reading or selecting in it is never disturbed.
    if (shown.dataset.synced && shown.dataset.status === column.dataset.status) continue;
    const scroll = shown.querySelector("[data-role=body]").scrollTop;
    shown.replaceWith(column);
    column.querySelector("[data-role=body]").scrollTop = scroll;
  }
  // The follow-up box opens once the round is done with a complete answer (the server decides: view.continuable).
  const followUp = current.querySelector("[data-action=continue]");
  if (followUp) followUp.hidden = fresh.querySelector("[data-action=continue]")?.hidden ?? true;
  const wasFinished = isFinished(current);
  current.dataset.status = fresh.dataset.status;
  roundChanged(!wasFinished && isFinished(current));
}

const isFinished = (el) => ["done", "cancelled", "failed"].includes(el.dataset.status);

function replaceRound(fresh) {
  region.replaceChildren(fresh);
  region.classList.remove("empty", "card");
  restoreStreams();
  mountPanels();
  roundChanged(false);
}

// After the round region changed: the cancel button, the vote panel when voting opens, the picked column.
function roundChanged(justFinished) {
  const el = roundEl();
  if (cancelButton) cancelButton.hidden = !el || isFinished(el);
  if (justFinished) panel?.load();
  markPick(panel?.myOutput);
}

function markPick(output) {
  for (const column of region.querySelectorAll(".col")) {
    column.classList.toggle("is-pick", Boolean(output) && column.dataset.output === String(output));
  }
}

function mountPanels() {
  const el = roundEl();
  if (!el) return;
  panel = new VotePanel(el.querySelector("[data-role=vote-slot]"), el.dataset.panelUrl, {
    onChange: markPick,
    onReveal: resync,
  });
  panel.load();
  const verdictSlot = el.querySelector("[data-role=verdict-slot]");
  verdicts = new VerdictPanel(verdictSlot, verdictSlot.dataset.url);
  verdicts.load();
}

async function showRound(number, push = true) {
  const fresh = await fetchRound(number).catch(() => null);
  if (!fresh) { showNotice("Could not load that round; try again."); return; }
  replaceRound(fresh);
  if (push) history.pushState({ number: Number(number) }, "", roundURL(root.dataset.roundUrl, number));
}

// --- Socket events -------------------------------------------------------------------------------------------

function onRoundStarted(event) {
  const el = roundEl();
  const last = el?.querySelector("[data-role=last]");
  if (last && event.number > Number(last.textContent)) resyncSoon(); // the navigator gains a round
  if (el && Number(el.dataset.round) === event.round) {
    el.dataset.status = "running";
    setChip(el.querySelector("[data-role=round-status]"), "running");
    for (const output of event.outputs) {
      columnOf(output)?.querySelector("[data-role=waiting]")?.replaceChildren("Waiting for the first token…");
    }
  } else if (!startedHere.has(event.number) && (!el || event.number > Number(el.dataset.number))) {
    showNotice(`Round ${event.number} started.`, { text: "Show it", onClick: () => showRound(event.number) });
  }
}

function onProgress(event) {
  const el = roundEl();
  if (!el || el.dataset.run !== event.run) return;
  const box = el.querySelector(".run-progress");
  box.hidden = false;
  box.querySelector("progress").max = event.total;
  box.querySelector("progress").value = event.done;
  box.querySelector("[data-role=progress-text]").textContent = `${event.done} of ${event.total} rounds done`;
}

// Until its request is sent, a column says how many calls are ahead of it on its connection (text, not HTML).
// A tool call streams into its column as it arrives: each event carries the call so far and replaces the one
// before; whether its arguments are valid comes with the stored answer (the resync after output.done).
function onToolCall(event) {
  const list = columnOf(event.output)?.querySelector("[data-role=tool-calls]");
  if (!list) return;
  list.hidden = false;
  let call = list.querySelector(`[data-index="${event.index}"]`);
  if (!call) {
    call = document.createElement("div");
    call.className = "tool-call";
    call.dataset.index = String(event.index);
    const head = document.createElement("p");
    head.className = "tool-head";
    const name = document.createElement("span");
    name.className = "mono tool-name";
    head.append(name);
    const args = document.createElement("pre");
    args.className = "tool-args";
    call.append(head, args);
    list.append(call);
  }
  call.querySelector(".tool-name").textContent = event.name;
  call.querySelector(".tool-args").textContent = event.arguments;
}

function onWaiting(event) {
  const ahead = `${event.ahead} ahead`;
  const connection = event.connection ? `connection ${event.connection}` : "its connection"; // blind: unnamed
  columnOf(event.output)?.querySelector("[data-role=waiting]")?.replaceChildren(`Waiting for ${connection} — ${ahead}`);
}

function handle(event) {
  const el = roundEl();
  switch (event.type) {
    case "output.delta": onDelta(event); break;
    case "output.done": onDone(event); break;
    case "output.waiting": onWaiting(event); break;
    case "output.tool_call": onToolCall(event); break;
    case "round.started": onRoundStarted(event); break;
    case "round.done": if (el && Number(el.dataset.round) === event.round) resync(); break;
    case "progress": onProgress(event); break;
    case "vote.tally": panel?.tally(event); break;
    case "verdict.done": verdicts?.verdictDone(event); break;
    case "resync": resyncAll(); break;
    default: break;
  }
}

// The server says events may have been lost while the socket stayed open (the channel layer restarted): reload
// the round, the tally and the verdicts over HTTP, as on a reconnect.
function resyncAll() {
  resync();
  panel?.load();
  verdicts?.load();
}

let retries = 0;
let connected = false;
function connect() {
  const socket = new WebSocket(socketURL(root.dataset.socket));
  socket.addEventListener("open", () => {
    retries = 0;
    root.dataset.live = "1";
    startPending();
    if (connected) resyncAll(); else resync(); // on a reconnect, votes and verdicts may have changed meanwhile too
    connected = true;
  });
  socket.addEventListener("message", (message) => handle(JSON.parse(message.data)));
  socket.addEventListener("close", (event) => {
    root.dataset.live = "0";
    if (event.code === 4401 || event.code === 4403) {
      showNotice("Live updates stopped: you are signed out or no longer a member. Reload the page.");
      return;
    }
    // At most 4 s apart: after an outage longer than the channel layer's retries closed the socket, the page is
    // live again within about that long of the server being back.
    setTimeout(connect, Math.min(4000, 500 * 2 ** retries++));
  });
}

// --- Actions and tabs ------------------------------------------------------------------------------------------

function errorText(data) {
  if (data.detail) return data.detail;
  return Object.values(data).flat().join(" ") || "The server refused.";
}

// The rounds this page started, which it shows or lists in the navigator: no "Round N started" notice for them.
const startedHere = new Set();

// `start` is the runs API's body: {repeat} or {dataset} (one round per row, checked by the same service).
async function startRuns(start, button) {
  button.disabled = true;
  // The response cache is opt-in per run: the toggle beside the run buttons.
  const cache = root.querySelector("[data-role=use-cache]")?.checked ?? false;
  const result = await postJSON(root.dataset.runsUrl, { ...start, cache });
  button.disabled = false;
  if (!result.ok) { showNotice(`Could not start: ${errorText(result.data)}`); return; }
  notice.hidden = true;
  const numbers = result.data.rounds.map((round) => round.number);
  for (const number of numbers) startedHere.add(number);
  // A test set is voted through row by row, from its first round. Repeats land on the newest round: the others
  // of the batch are behind it in the navigator, and no "Round N started" notice then points past the round shown.
  await showRound(start.dataset ? Math.min(...numbers) : Math.max(...numbers));
}

// A comparison just saved in the editor is started here, as soon as the socket listens (or after a short wait
// without one), so its first tokens are not streamed before anyone is listening. The editor left the runs API's
// body: {repeat} or {dataset}.
const pendingKey = `promptlab:start:${root.dataset.group}`;
const pendingStart = pendingFrom(sessionStorage.getItem(pendingKey));
sessionStorage.removeItem(pendingKey);
let pendingTimer = null;

function pendingFrom(stored) {
  try {
    const start = JSON.parse(stored);
    return start && typeof start === "object" ? start : null;
  } catch {
    return null;
  }
}

function startPending() {
  if (!pendingStart || startPending.done) return;
  startPending.done = true;
  clearTimeout(pendingTimer);
  startRuns(pendingStart, root.querySelector("[data-action=rerun]") || document.createElement("button"));
}

if (pendingStart) {
  showNotice("Starting the run…");
  pendingTimer = setTimeout(startPending, 3000);
}

root.querySelector("[data-action=rerun]")?.addEventListener("click", (event) => startRuns({ repeat: 1 }, event.currentTarget));

root.querySelector("[data-action=run-more]")?.addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  startRuns({ repeat: Number(form.elements.repeat.value) || 1 }, form.querySelector("button"));
});

root.querySelector("[data-action=run-dataset]")?.addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  startRuns({ dataset: Number(form.elements.test_set.value) }, form.querySelector("button"));
});

cancelButton?.addEventListener("click", async () => {
  const el = roundEl();
  if (!el) return;
  cancelButton.disabled = true;
  const result = await postJSON(el.dataset.cancelUrl);
  cancelButton.disabled = false;
  if (!result.ok) showNotice(`Could not cancel: ${errorText(result.data)}`);
  resync();
});

// --- Conversations: continue a finished round, or re-run a turn (the same follow-up again: a branch) -----------

async function continueFrom(url, message, button) {
  button.disabled = true;
  const result = await postJSON(url, { message });
  button.disabled = false;
  if (!result.ok) { showNotice(`Could not continue: ${errorText(result.data)}`); return false; }
  notice.hidden = true;
  startedHere.add(result.data.number);
  await showRound(result.data.number);
  return true;
}

region.addEventListener("submit", (event) => {
  const form = event.target.closest("[data-action=continue]");
  if (!form) return;
  event.preventDefault();
  const message = form.elements.message.value;
  if (!message.trim()) { showNotice("Write a follow-up message first."); return; }
  continueFrom(form.dataset.continueUrl, message, form.querySelector("button"));
});

region.addEventListener("click", (event) => {
  const button = event.target.closest("[data-action=rerun-turn]");
  if (button) continueFrom(button.dataset.continueUrl, button.dataset.message, button);
});

region.addEventListener("click", (event) => {
  const link = event.target.closest("[data-round-link]");
  if (!link || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  showRound(link.dataset.roundLink);
});

window.addEventListener("popstate", (event) => {
  if (event.state?.number) showRound(event.state.number, false);
});

const tabs = [...root.querySelectorAll("[role=tab]")];
async function selectTab(tab) {
  for (const other of tabs) {
    const selected = other === tab;
    other.setAttribute("aria-selected", String(selected));
    other.tabIndex = selected ? 0 : -1;
    document.getElementById(other.getAttribute("aria-controls")).hidden = !selected;
  }
  const tabPanel = document.getElementById(tab.getAttribute("aria-controls"));
  if (tabPanel.dataset.src) {
    // The report is the voting app's; fetched fresh each time, as votes keep coming in.
    const response = await fetch(tabPanel.dataset.src, { credentials: "same-origin" });
    if (response.ok) tabPanel.innerHTML = await response.text();
  }
}
for (const tab of tabs) {
  tab.addEventListener("click", () => selectTab(tab));
  tab.addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (!step) return;
    const next = tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length];
    next.focus();
    selectTab(next);
  });
}

history.replaceState({ number: Number(roundEl()?.dataset.number) || null }, "");
mountPanels();
listenForVoteKeys(() => panel);
connect();
