// Timings, token counts and costs written exactly as the server's compare_format filters write them.
const DASH = "—";

export function duration(ms) {
  if (ms === null || ms === undefined) return DASH;
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function tokens(count, estimated = false) {
  if (count === null || count === undefined) return DASH;
  const text = count.toLocaleString("en-US");
  return estimated ? `≈${text}` : text;
}

// A finished answer's cost, as the server's answer_cost filter writes it: null (no known price, or no usage
// reported) reads "unknown", never $0; a cancelled answer's, or an absent one, a dash.
export function answerCost(cost, status) {
  if (cost === null && status !== "cancelled") return "unknown";
  return usd(cost);
}

export function usd(cost) {
  if (cost === null || cost === undefined) return DASH;
  if (cost === 0) return "$0";
  if (cost < 0.0001) return "<$0.0001";
  return `$${cost.toFixed(4)}`;
}
