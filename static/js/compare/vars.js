// A variables editor: rows of name and value, each value text or JSON. Used for the shared variables and for
// each variant's overrides. It edits the `rows` array it is given, so the editor's state is always current.
import { h } from "./dom.js";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function rowsFrom(variables) {
  return Object.entries(variables || {}).map(([name, value]) =>
    typeof value === "string" ? { name, value, json: false } : { name, value: JSON.stringify(value), json: true });
}

// The rows as an object of name → value, with one message per row that cannot be used.
export function valuesOf(rows, where) {
  const values = {};
  const errors = [];
  rows.forEach((row, index) => {
    const name = row.name.trim();
    if (!name && !row.value) return;
    const label = `${where}, row ${index + 1}`;
    if (!NAME.test(name)) {
      errors.push(`${label}: “${name}” is not a variable name (letters, digits and _, not starting with a digit).`);
      return;
    }
    if (name in values) errors.push(`${label}: ${name} is set twice.`);
    if (!row.json) { values[name] = row.value; return; }
    try {
      values[name] = JSON.parse(row.value);
    } catch {
      errors.push(`${label}: the value of ${name} is not valid JSON.`);
    }
  });
  return { values, errors };
}

export function variablesEditor(rows, { label, onChange }) {
  const list = h("div", { class: "vars", role: "group", "aria-label": label });
  const render = () => {
    list.replaceChildren(
      ...rows.map((row, index) => {
        const number = index + 1;
        return h("div", { class: "var-row" },
          h("input", {
            class: "var-name mono", value: row.name, placeholder: "name", spellcheck: "false", autocomplete: "off",
            "aria-label": `${label}: name of variable ${number}`,
            oninput: (event) => { row.name = event.target.value; onChange(); },
          }),
          h("textarea", {
            class: "var-value", rows: row.value.includes("\n") ? 3 : 1, value: row.value,
            placeholder: row.json ? '{"json": true}' : "value",
            "aria-label": `${label}: value of variable ${number}`,
            oninput: (event) => { row.value = event.target.value; onChange(); },
          }),
          h("label", { class: "var-json check" },
            h("input", {
              type: "checkbox", checked: row.json,
              onchange: (event) => { row.json = event.target.checked; onChange(); },
            }),
            h("span", {}, "JSON")),
          h("button", {
            type: "button", class: "icon", "aria-label": `${label}: remove variable ${number}`, title: "Remove",
            onclick: () => { rows.splice(index, 1); render(); onChange(); },
          }, "×"));
      }),
      h("button", {
        type: "button", class: "link add-var",
        onclick: () => {
          rows.push({ name: "", value: "", json: false });
          render();
          list.querySelectorAll(".var-name")[rows.length - 1]?.focus();
        },
      }, "+ Add variable"),
    );
  };
  render();
  return list;
}
