// Settings page: the worker health check (HTTP enqueue, answer over the workspace socket).
import { postJSON, socketURL } from "./csrf.js";

const button = document.getElementById("worker-check");
if (button) {
  const status = document.getElementById("worker-status");
  const seen = document.getElementById("worker-seen");
  const socket = new WebSocket(socketURL(button.dataset.ws));
  socket.addEventListener("message", (message) => {
    const event = JSON.parse(message.data);
    if (event.type === "worker.pong") {
      status.textContent = "The worker answered.";
      seen.textContent = new Date().toLocaleString();
    }
  });
  button.addEventListener("click", async () => {
    status.textContent = "Asking the worker…";
    const result = await postJSON(button.dataset.url);
    if (!result.ok) status.textContent = result.data.detail || "Could not queue the check.";
    setTimeout(() => {
      if (status.textContent === "Asking the worker…") status.textContent = "No answer in 10 s: is a worker running?";
    }, 10000);
  });
}
