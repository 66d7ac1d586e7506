// The leaderboard's chart: each rating with its bootstrap 95% interval, best first, on the 400-point scale.
import { intervalChart, readJSON } from "./charts.js";

const canvas = document.getElementById("ratings-chart");
if (canvas) {
  const rows = readJSON("ratings-data");
  // Give every row room to read its label, however many there are.
  canvas.parentElement.style.height = `${Math.max(220, 34 * rows.length + 90)}px`;
  intervalChart(canvas, rows, {
    horizontal: true,
    format: (value) => Math.round(value).toLocaleString("en-US"),
    axisTitle: "rating (1000 = average; 400 points = 10:1 odds)",
  });
}
