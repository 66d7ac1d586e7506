// The experiment build form, enhanced: "Add a prompt" / "Add a parameter set" copy an empty row in the page
// (without this script they post the form back for one more row), "Remove" takes a row out and renumbers the
// rest as Django's formsets count them, and the evaluation shows only the fields of the chosen judge type.
const form = document.getElementById("build-form");

function renumber(prefix) {
  const rows = document.querySelectorAll(`#${prefix}-rows [data-row]`);
  const pattern = new RegExp(`^(id_)?${prefix}-(\\d+|__prefix__)-`);
  rows.forEach((row, index) => {
    row.querySelectorAll("[name], [id], label[for]").forEach((el) => {
      for (const attr of ["name", "id", "for"]) {
        const value = el.getAttribute(attr);
        if (value && pattern.test(value)) el.setAttribute(attr, value.replace(pattern, `$1${prefix}-${index}-`));
      }
    });
  });
  form.querySelector(`input[name="${prefix}-TOTAL_FORMS"]`).value = String(rows.length);
  const add = form.querySelector(`[data-add-row="${prefix}"]`);
  add.disabled = rows.length >= Number(add.dataset.max);
}

function addRow(prefix) {
  const template = document.getElementById(`${prefix}-template`);
  const row = template.content.firstElementChild.cloneNode(true);
  document.getElementById(`${prefix}-rows`).append(row);
  renumber(prefix);
  row.querySelector("input, textarea")?.focus();
}

function showEvaluationFields() {
  const box = document.getElementById("evaluation");
  const type = box.querySelector("select[name=evaluation_type]").value;
  const classifying = box.dataset.classification.split(" ").includes(type);
  box.querySelectorAll("[data-when=classification]").forEach((el) => (el.hidden = !classifying));
  box.querySelectorAll("[data-when=scored]").forEach((el) => (el.hidden = classifying || !type));
}

if (form) {
  form.querySelectorAll("[data-remove-row]").forEach((button) => (button.hidden = false));
  form.addEventListener("click", (event) => {
    const add = event.target.closest("[data-add-row]");
    if (add) {
      event.preventDefault();
      addRow(add.dataset.addRow);
      return;
    }
    const remove = event.target.closest("[data-remove-row]");
    if (remove) {
      const rows = remove.closest(".form-rows");
      remove.closest("[data-row]").remove();
      renumber(rows.id.replace(/-rows$/, ""));
    }
  });
  form.querySelector("select[name=evaluation_type]").addEventListener("change", showEvaluationFields);
  showEvaluationFields();
  ["params", "prompts"].forEach(renumber);
}
