// The "To vote" inbox: one round at a time from the inbox API, voted on by keyboard alone (1–5 pick, T tie,
// B all bad, S skip, U undo the last vote or skip); the next round loads at once and the tally updates live.
import { postJSON, socketURL } from "../csrf.js";

const root = document.getElementById("inbox");
const blind = root.dataset.blind === "true";
const part = (role) => root.querySelector(`[data-role="${role}"]`);
const history = []; // {round, kind}: what U takes back, newest last
let current = null;
let socket = null;
let busy = false;

function nextURL() {
  return `${root.dataset.nextUrl}?${root.dataset.filters}blind=${blind}`;
}

function errorText(data) {
  return data.detail || Object.values(data).flat().join(" ") || "The server refused.";
}

function showError(text) {
  const error = part("error");
  error.hidden = !text;
  error.textContent = text || "";
}

function column(output, index) {
  const article = document.createElement("article");
  article.className = `col status-${output.status}`;
  article.dataset.output = output.id;
  const head = document.createElement("header");
  head.className = "col-head";
  const key = document.createElement("kbd");
  key.className = "col-key";
  key.textContent = String(index + 1);
  const title = document.createElement("h3");
  title.className = "col-title";
  title.textContent = output.shown_as;
  head.append(key, title);
  if (output.model) {
    const model = document.createElement("p");
    model.className = "col-sub col-model mono";
    model.textContent = output.model;
    head.append(model);
  }
  const body = document.createElement("div");
  body.className = "col-body";
  body.tabIndex = 0;
  if (output.html) {
    const answer = document.createElement("div");
    answer.className = "answer";
    answer.innerHTML = output.html; // rendered and sanitized by the server, as on the comparison page
    body.append(answer);
  } else {
    const text = document.createElement("pre");
    text.className = "answer-stream";
    text.textContent = output.text || output.error || "No text.";
    body.append(text);
  }
  article.append(head, body);
  return article;
}

function showTally(tally) {
  if (!tally) return (part("tally").textContent = "");
  const total = `${tally.total} vote${tally.total === 1 ? "" : "s"} so far`;
  if (!tally.outputs) return (part("tally").textContent = `${total}; the split appears once you vote.`);
  const split = current.outputs.map((o) => `${o.shown_as} ${tally.outputs[o.id] || 0}`);
  part("tally").textContent = `${total}: ${split.join(", ")}, tie ${tally.tie}, all bad ${tally.all_bad}`;
}

function listen(groupId) {
  if (socket?.groupId === groupId) return;
  socket?.close();
  socket = new WebSocket(socketURL(`/ws/groups/${groupId}/`));
  socket.groupId = groupId;
  root.dataset.live = "0";
  socket.addEventListener("open", () => (root.dataset.live = "1"));
  socket.addEventListener("message", (message) => {
    const event = JSON.parse(message.data);
    if (event.type !== "vote.tally" || event.round !== current?.round?.id) return;
    // In blind mode the broadcast carries only the total, and the split stays hidden until this person votes.
    showTally(current.labels_visible ? event : { total: event.total });
  });
}

function render(view) {
  current = view;
  const columns = part("columns");
  columns.replaceChildren();
  part("empty").hidden = view.round !== null;
  part("remaining").textContent = `${view.remaining} round${view.remaining === 1 ? "" : "s"} left to vote on`;
  root.dataset.round = view.round?.id ?? "";
  if (view.round === null) {
    part("title").textContent = "All done";
    part("blind-note").hidden = true;
    showTally(null);
    return;
  }
  part("title").textContent = `${view.group.title} · round ${view.round.number}`;
  part("blind-note").hidden = view.labels_visible;
  columns.className = `columns cols-${view.outputs.length}`;
  view.outputs.forEach((output, index) => columns.append(column(output, index)));
  showTally(view.tally);
  listen(view.group.id);
}

async function loadNext() {
  const response = await fetch(nextURL(), { credentials: "same-origin" }).catch(() => null);
  if (!response?.ok) return showError("Could not load the next round; reload the page.");
  render(await response.json());
}

// After a vote, say what it was for: the round's names, now revealed to this person.
async function showLast(roundId, title, choice) {
  const response = await fetch(`/api/v1/rounds/${roundId}/`, { credentials: "same-origin" }).catch(() => null);
  if (!response?.ok) return;
  const round = await response.json();
  const picked = round.outputs.find((o) => o.id === choice.output);
  const what = picked ? `${picked.shown_as} (${picked.model})` : choice.verdict === "tie" ? "a tie" : "all bad";
  const last = part("last");
  last.hidden = false;
  last.textContent = `Your vote on ${title}, round ${round.number}: ${what}. Press U to undo.`;
}

async function vote(body) {
  const roundId = current.round.id;
  const title = current.group.title;
  const result = await postJSON(`/api/v1/rounds/${roundId}/vote/`, body);
  if (!result.ok) return showError(`Your vote was not saved: ${errorText(result.data)}`);
  history.push({ round: roundId, kind: "vote" });
  await loadNext();
  await showLast(roundId, title, body);
}

async function skip() {
  const roundId = current.round.id;
  const result = await postJSON(root.dataset.skipUrl, { round: roundId });
  if (!result.ok) return showError(`Could not skip: ${errorText(result.data)}`);
  history.push({ round: roundId, kind: "skip" });
  part("last").hidden = false;
  part("last").textContent = "Skipped; it will not come back unless you press U.";
  await loadNext();
}

async function undo() {
  const last = history.pop();
  if (!last) return showError("Nothing to undo yet.");
  const result = await postJSON(root.dataset.undoUrl, { round: last.round, blind });
  if (!result.ok) return showError(`Could not undo: ${errorText(result.data)}`);
  part("last").hidden = false;
  part("last").textContent = result.data.undone === "vote" ? "Vote taken back: vote again." : "Skip taken back.";
  render(result.data);
}

function action(key) {
  if (!current) return null;
  if (key === "u") return undo;
  if (current.round === null) return null;
  if (/^[1-5]$/.test(key)) {
    const output = current.outputs[Number(key) - 1];
    return output?.status === "ok" ? () => vote({ output: output.id }) : null;
  }
  return { t: () => vote({ verdict: "tie" }), b: () => vote({ verdict: "all_bad" }), s: skip }[key] || null;
}

document.addEventListener("keydown", async (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  if (event.target.closest("input, textarea, select, [contenteditable]")) return;
  const run = action(event.key.toLowerCase());
  if (!run) return;
  event.preventDefault();
  if (busy) return; // one action at a time: the next key acts on the round it sees
  busy = true;
  showError("");
  try {
    await run();
  } finally {
    busy = false;
    root.dataset.actions = String(Number(root.dataset.actions || 0) + 1); // finished actions, for page tests
  }
});

loadNext();
