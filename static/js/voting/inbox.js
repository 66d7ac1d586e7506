// The "To vote" inbox: one round at a time from the inbox API, with what it asked, voted on by button or by key
// (1–5 pick, T tie, B all bad, S skip, U undo the last vote or skip; each key has its button); the next round
// loads at once and the tally updates live. A later turn of a conversation shows the conversation so far (what was
// asked, collapsed above the answers; each column's own earlier answers in its column) and takes an optional vote
// on the whole conversation.
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
  article.append(head);
  if (output.earlier?.length) article.append(earlierAnswers(output.earlier));
  article.append(body);
  return article;
}

// This column's own answers in the turns before, collapsed: the server reads them from its own messages, so they
// are never another column's, and this column keeps its place and name in every turn.
function earlierAnswers(earlier) {
  const details = document.createElement("details");
  details.className = "col-history";
  details.dataset.role = "history";
  const summary = document.createElement("summary");
  summary.textContent = `Earlier answers (${earlier.length})`;
  details.append(summary);
  for (const turn of earlier) {
    const label = document.createElement("span");
    label.className = "muted";
    label.textContent = `Turn ${turn.turn} answer`;
    const pre = document.createElement("pre");
    pre.textContent = turn.answer;
    details.append(label, pre);
  }
  return details;
}

// What every column was asked in the turns before (collapsed) and this turn's follow-up (shown).
function showConversation(view) {
  const conversation = view.round ? view.conversation : null;
  const details = part("conversation");
  details.hidden = !conversation;
  part("follow-up").hidden = !conversation;
  showConversationVote(view);
  if (!conversation) return;
  part("conversation-body").replaceChildren(
    ...conversation.asked.map((asked) => {
      const item = document.createElement("li");
      const label = document.createElement("strong");
      label.textContent = `Turn ${asked.turn} · ${asked.turn === 1 ? "asked" : "you"}: `;
      const pre = document.createElement("pre");
      pre.textContent = asked.text ?? "Each column was asked in words of its own; they show once you vote.";
      item.append(label, pre);
      return item;
    }),
  );
  part("conversation-preview").textContent = `${conversation.asked.length} earlier turn${conversation.asked.length === 1 ? "" : "s"}`;
  const label = document.createElement("strong");
  label.textContent = `Turn ${conversation.turn} · you: `;
  const pre = document.createElement("pre");
  pre.textContent = conversation.message;
  part("follow-up").replaceChildren(label, pre);
}

function showConversationVote(view) {
  const box = part("conversation-vote");
  const conversation = view.round ? view.conversation : null;
  box.hidden = !conversation;
  if (!conversation) return;
  part("conversation-blind").hidden = view.labels_visible;
  part("conversation-voted").hidden = !conversation.voted;
  const choice = (label, body, pressed, disabled = false) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "conversation-choice";
    button.textContent = label;
    button.disabled = disabled;
    button.setAttribute("aria-pressed", String(pressed));
    button.setAttribute("aria-label", `Whole conversation: ${label}`);
    button.addEventListener("click", () => perform(() => voteConversation(body)));
    return button;
  };
  part("conversation-choices").replaceChildren(
    ...view.outputs.map((output) =>
      choice(output.shown_as, { output: output.id }, conversation.vote_output === output.id, output.status !== "ok"),
    ),
    choice("Tie", { verdict: "tie" }, conversation.vote_choice === "tie"),
    choice("All bad", { verdict: "all_bad" }, conversation.vote_choice === "all_bad"),
  );
}

// One vote per person per conversation, apart from this turn's (which is still to cast): the turn stays shown.
async function voteConversation(body) {
  const result = await postJSON(`/api/v1/rounds/${current.round.id}/conversation-vote/`, body);
  if (!result.ok) return showError(`Your vote on the conversation was not saved: ${errorText(result.data)}`);
  const conversation = current.conversation;
  conversation.voted = true;
  conversation.vote_output = body.output ?? null;
  conversation.vote_choice = body.output ? "winner" : body.verdict;
  showConversationVote(current);
}

function pickButton(output, index) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "vote-choice";
  button.dataset.key = String(index + 1);
  button.disabled = output.status !== "ok"; // only a complete answer can win
  const key = document.createElement("kbd");
  key.textContent = String(index + 1);
  button.append(key, ` ${output.shown_as}`);
  button.setAttribute("aria-label", `Vote for ${output.shown_as}`);
  return button;
}

function text(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function block(title, body) {
  const heading = document.createElement("h3");
  heading.textContent = title;
  const pre = document.createElement("pre");
  pre.textContent = body;
  return [heading, pre];
}

// What the answers were asked: the round's variables and, where every answer got the same, its system prompt and
// prompt. Prompts of their own show per answer only once names do (blind mode: they would say which is which).
function showInput(view) {
  const details = part("input");
  details.hidden = !view.input;
  if (!view.input) return;
  const { variables, system_prompt: system, prompt, own_prompts: own } = view.input;
  const body = [];
  const names = Object.keys(variables);
  if (names.length) {
    const list = document.createElement("dl");
    for (const name of names) {
      const term = document.createElement("dt");
      term.textContent = name;
      const value = document.createElement("dd");
      value.textContent = text(variables[name]);
      list.append(term, value);
    }
    body.push(list);
  }
  if (system) body.push(...block("System prompt", system));
  if (prompt) body.push(...block("Prompt", prompt));
  if (own && view.labels_visible) {
    for (const output of view.outputs) {
      const sent = [output.rendered_system_prompt, output.rendered_prompt].filter(Boolean).join("\n\n");
      body.push(...block(`Prompt of ${output.shown_as}`, sent));
    }
  } else if (own) {
    const note = document.createElement("p");
    note.className = "muted";
    note.textContent = "Each answer was asked in words of its own; they show once you vote, as they would say which is which.";
    body.push(note);
  }
  part("input-body").replaceChildren(...body);
  const first = names.length ? `${names[0]}: ${text(variables[names[0]])}` : prompt || "";
  part("input-preview").textContent = first.length > 80 ? `${first.slice(0, 79)}…` : first;
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
  showInput(view);
  showConversation(view);
  part("picks").replaceChildren(...view.outputs.map(pickButton));
  for (const button of root.querySelectorAll("[data-needs-round]")) button.hidden = view.round === null;
  if (view.round === null) {
    part("title").textContent = "All done";
    part("blind-note").hidden = true;
    showTally(null);
    return;
  }
  const turn = view.conversation ? ` · turn ${view.conversation.turn}` : "";
  part("title").textContent = `${view.group.title} · round ${view.round.number}${turn}`;
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
  last.textContent = `Your vote on ${title}, round ${round.number}: ${what}. Undo (U) takes it back.`;
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
  part("last").textContent = "Skipped; it will not come back unless you undo (U).";
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

// A key and its button do the same; one action at a time, so the next acts on the round it sees.
async function perform(run) {
  if (busy) return;
  busy = true;
  showError("");
  try {
    await run();
  } finally {
    busy = false;
    root.dataset.actions = String(Number(root.dataset.actions || 0) + 1); // finished actions, for page tests
  }
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  if (event.target.closest("input, textarea, select, [contenteditable]")) return;
  const run = action(event.key.toLowerCase());
  if (!run) return;
  event.preventDefault();
  perform(run);
});

part("actions").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-key]");
  const run = button && !button.disabled && action(button.dataset.key);
  if (run) perform(run);
});

loadNext();
