// A variables editor: rows of name and value, each value text or JSON. Used for the shared variables and for
// each variant's overrides. It edits the `rows` array it is given, so the editor's state is always current.
// A value {"$file": id} names an uploaded image: its row shows it small, and "Image…" uploads one into that row.
import { csrfToken } from "../csrf.js";
import { h } from "./dom.js";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// The file id a row's value names, or null.
export function fileIdOf(row) {
  if (!row.json) return null;
  try {
    const value = JSON.parse(row.value);
    const keys = value && typeof value === "object" && !Array.isArray(value) ? Object.keys(value) : [];
    return keys.length === 1 && keys[0] === "$file" && Number.isInteger(value.$file) ? value.$file : null;
  } catch {
    return null;
  }
}

function thumbnail(row) {
  const id = fileIdOf(row);
  return id === null ? null : h("img", { class: "var-thumb", src: `/api/v1/files/${id}/`, alt: `Image ${row.name}` });
}

// Upload an image into a workspace; the row then holds its reference. Errors come back as the API's messages.
async function upload(workspace, file) {
  const body = new FormData();
  body.append("file", file);
  const response = await fetch(`/api/v1/workspaces/${workspace}/files/`, {
    method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrfToken() }, body,
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error([].concat(data.file || data.detail || "The upload failed.").join(" "));
  return data.id;
}

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

export function variablesEditor(rows, { label, onChange, workspace }) {
  const list = h("div", { class: "vars", role: "group", "aria-label": label });
  const render = () => {
    list.replaceChildren(
      ...rows.map((row, index) => {
        const number = index + 1;
        const shown = fileIdOf(row);  // the image this row shows, if any
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
            // Drawn again only when the value starts or stops naming an image: a redraw on every change would
            // replace the "+ variable" button under a click that follows typing.
            onchange: () => { if (fileIdOf(row) !== shown) render(); },
          }),
          thumbnail(row),
          workspace ? h("label", { class: "var-upload link", title: "Upload an image into this variable" },
            h("input", {
              type: "file", accept: "image/png,image/jpeg,image/webp,image/gif", class: "sr-only",
              "aria-label": `${label}: image for variable ${number}`,
              onchange: async (event) => {
                const file = event.target.files[0];
                if (!file) return;
                try {
                  row.value = JSON.stringify({ $file: await upload(workspace, file) });
                  row.json = true;
                  row.error = "";
                  if (!row.name) row.name = "image";
                } catch (error) {
                  row.error = error.message;
                }
                render();
                onChange();
              },
            }),
            h("span", {}, "Image…")) : null,
          row.error ? h("span", { class: "var-error error", role: "alert" }, row.error) : null,
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
