// Judge editor: show only the chosen kind's fields, add and remove metric rows of the Django formset (the server
// checks everything on save; without this script every field shows and the form works the same).
const kind = document.querySelector("select[name=kind]");

// A section marked with its kinds hides whole; a field marked so hides with its label.
function showKind() {
  const chosen = kind.value || "rubric";
  for (const marked of document.querySelectorAll(".judge-editor [data-kinds]")) {
    const box = marked.tagName === "SECTION" ? marked : marked.closest("label");
    box.hidden = !marked.dataset.kinds.split(" ").includes(chosen);
  }
}

if (kind) {
  kind.addEventListener("change", showKind);
  showKind();
}
const rows = document.querySelector("[data-role=metric-rows]");
const template = document.querySelector("[data-role=metric-template]");
const total = document.querySelector("input[name=metrics-TOTAL_FORMS]");
const maximum = Number(document.querySelector("input[name=metrics-MAX_NUM_FORMS]")?.value || 10);
const add = document.querySelector("[data-role=add-metric]");

// Django's formset counts removed rows too, so the cap is on rows added, ticked or not.
function refresh() {
  add.disabled = Number(total.value) >= maximum;
  add.title = add.disabled ? `At most ${maximum} metrics` : "";
}

add?.addEventListener("click", () => {
  const index = Number(total.value);
  const html = template.innerHTML.replaceAll("__prefix__", String(index));
  rows.insertAdjacentHTML("beforeend", html);
  total.value = String(index + 1);
  rows.lastElementChild.querySelector("input")?.focus();
  refresh();
});

// Ticking "Remove" greys the row out; it is left out when saved (Django's formset DELETE field).
rows?.addEventListener("change", (event) => {
  if (!event.target.name?.endsWith("-DELETE")) return;
  event.target.closest("[data-role=metric]").classList.toggle("removed", event.target.checked);
  refresh();
});

if (rows) {
  // A form sent back with errors keeps its ticked rows: grey them out as if just ticked.
  for (const box of rows.querySelectorAll("input[name$='-DELETE']:checked")) box.closest("[data-role=metric]").classList.add("removed");
  refresh();
}
