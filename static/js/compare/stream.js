// Each answer's text as assembled from output.delta events, checked against their offsets.
// The server counts offsets in Unicode code points (Python str length), not UTF-16 units, so we do too.

const codePoints = (text) => Array.from(text).length;

export class Streams {
  constructor() {
    this.byOutput = new Map();
  }

  get(output) {
    return this.byOutput.get(String(output));
  }

  // Apply one delta. Returns the answer's state: {text, length, gap}. `gap` means some text was never received
  // (the page joined mid-answer or an event was lost); the stored answer replaces it when the output is done.
  apply(output, offset, text) {
    const key = String(output);
    const state = this.byOutput.get(key) || { text: "", length: 0, gap: false };
    if (offset > state.length) {
      state.gap = true;
      state.text += state.length ? " … " : "… ";
    } else if (offset < state.length) {
      text = Array.from(text).slice(state.length - offset).join(""); // a repeat of text already shown
      offset = state.length;
    }
    state.text += text;
    state.length = offset + codePoints(text);
    this.byOutput.set(key, state);
    return state;
  }

  forget(output) {
    this.byOutput.delete(String(output));
  }
}
