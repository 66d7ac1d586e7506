// The report page's chart: each variant's win rate among decisive votes with its exact (Clopper–Pearson) 95% interval.
import { intervalChart, readJSON } from "./charts.js";

const canvas = document.getElementById("winrate-chart");
if (canvas) {
  intervalChart(canvas, readJSON("winrate-data"), {
    min: 0,
    max: 1,
    format: (share) => `${Math.round(share * 100)}%`,
    axisTitle: "win rate among decisive votes",
  });
}
