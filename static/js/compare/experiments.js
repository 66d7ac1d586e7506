// The experiment page: live progress over the group's socket (the database is the record: every event, and a slow
// poll as a fallback, re-reads the status over HTTP), a reload with the results once the run has finished, and
// client-side filters on the results grid.
import { socketURL } from "../csrf.js";

const root = document.getElementById("experiment");

function followProgress() {
  const bar = document.getElementById("experiment-progress");
  const text = document.getElementById("experiment-progress-text");
  const stopped = document.getElementById("experiment-stopped");
  let pending = null;
  let socket = null;

  // As the server's spent_text filter writes it: calls of unknown price counted apart, never a $0 for "no price".
  function spentText(status) {
    const unpriced = status.unpriced_calls || 0;
    if (unpriced && !status.spent) return "unknown";
    const known = `$${status.spent.toFixed(6)}`;
    return unpriced ? `${known} + ${unpriced} call${unpriced === 1 ? "" : "s"} of unknown price` : known;
  }

  async function refresh() {
    pending = null;
    const response = await fetch(root.dataset.statusUrl, { credentials: "same-origin" });
    if (!response.ok) return;
    const status = await response.json();
    bar.max = Math.max(status.total, 1);
    bar.value = status.done + status.not_started;
    const notStarted = status.not_started ? ` · ${status.not_started} not started` : "";
    text.textContent = `${status.done} of ${status.total} calls${notStarted}${status.finished ? " · finished" : ""} · spent ${spentText(status)}`;
    if (status.stopped) {
      stopped.textContent = status.stopped;
      stopped.hidden = false;
    }
    if (status.finished) {
      if (socket) socket.close();
      location.reload(); // the results grid and the averages are drawn by the server
    }
  }

  function soon() {
    if (!pending) pending = setTimeout(refresh, 300);
  }

  socket = new WebSocket(socketURL(root.dataset.socket));
  socket.addEventListener("open", soon);
  socket.addEventListener("message", (message) => {
    const event = JSON.parse(message.data);
    if (["progress", "round.done", "output.done", "resync"].includes(event.type)) soon();
  });
  setInterval(soon, 5000);
}

function filterGrid() {
  const form = document.getElementById("grid-filters");
  const grid = document.getElementById("results-grid");
  if (!form || !grid) return;
  const apply = () => {
    const wanted = Object.fromEntries(new FormData(form));
    const shown = new Set();
    for (const th of grid.querySelectorAll("thead th[data-col]")) {
      const visible = ["model", "parameters", "prompt"].every((key) => !wanted[key] || th.dataset[key] === wanted[key]);
      if (visible) shown.add(th.dataset.col);
      th.hidden = !visible;
    }
    const rowText = (wanted.row || "").toLowerCase();
    for (const tr of grid.querySelectorAll("tbody tr[data-row]")) {
      let problem = false;
      for (const td of tr.querySelectorAll("td[data-col]")) {
        td.hidden = !shown.has(td.dataset.col);
        if (!td.hidden && td.dataset.problem === "1") problem = true;
      }
      tr.hidden = !tr.dataset.row.toLowerCase().includes(rowText) || (wanted.problems && !problem);
    }
  };
  form.addEventListener("input", apply);
  form.addEventListener("submit", (event) => event.preventDefault());
}

if (root) {
  filterGrid();
  if (root.dataset.finished !== "1") followProgress();
}
