// The workspace's model catalog for the editor's model pickers: one <datalist> for every model field, plus a
// short note under a field saying what the chosen id is (simulated, not in the catalog, or malformed).
import { h } from "./dom.js";

export async function loadCatalog(url, datalist) {
  const response = await fetch(url, { credentials: "same-origin" }).catch(() => null);
  const data = response?.ok ? await response.json() : { results: [], errors: [] };
  const models = data.results || [];
  datalist.replaceChildren(
    ...models.map((model) => h("option", {
      value: model.id,
      label: `${model.name}${model.simulated ? " · simulated" : ""} · ${model.connection}`,
    })),
  );
  const simulated = new Set(models.filter((m) => m.simulated).map((m) => m.connection));
  const connections = new Set(models.map((m) => m.connection));
  return {
    models,
    errors: (data.errors || []).map((e) => `Could not list the models of ${e.connection}: ${e.error}`),
    describe(id) {
      const [connection, model] = (id || "").split("::", 2);
      if (!id) return { text: "Choose a model.", kind: "warn" };
      if (!model) return { text: "Write it as connection::model, e.g. simulated::writer.", kind: "error" };
      if (simulated.has(connection)) return { text: "Simulated: offline and deterministic, for trying things out.", kind: "sim" };
      if (!connections.has(connection) && connections.size) return { text: `No connection named ${connection} lists models here.`, kind: "warn" };
      const base = model.split("?")[0];
      if (!models.some((m) => m.connection === connection && m.model === base)) {
        return { text: "Not in this connection's catalog; it will still be tried.", kind: "warn" };
      }
      return { text: "", kind: "" };
    },
  };
}

export function showModelNote(note, catalog, id) {
  if (!note) return;
  const { text, kind } = catalog ? catalog.describe(id) : { text: "", kind: "" };
  note.textContent = text;
  note.className = `field-note${kind ? ` note-${kind}` : ""}`;
}
