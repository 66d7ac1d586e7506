// The comparison page's "highlight what differs": two answers of the round side by side, differences marked.
// The server renders the diff (escaped before marking up); the round region is redrawn by page.js, so events are
// caught on the document.
async function show(section) {
  const body = section.querySelector("[data-role=diff-body]");
  const on = section.querySelector("[data-role=diff-toggle]").checked;
  body.hidden = !on;
  if (!on) return;
  const a = section.querySelector("[data-role=diff-a]").value;
  const b = section.querySelector("[data-role=diff-b]").value;
  const response = await fetch(`${section.dataset.url}?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`, { credentials: "same-origin" });
  body.innerHTML = response.ok ? await response.text() : "<p>Could not compare these answers; reload the page to try again.</p>";
}

document.addEventListener("change", (event) => {
  const section = event.target.closest("[data-role=answer-diff]");
  if (section) show(section);
});
