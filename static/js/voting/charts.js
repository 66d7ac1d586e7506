// Interval charts on the vendored Chart.js (static/vendor/chartjs, loaded before this module as window.Chart):
// each row is a floating bar from its interval's low to high, with a mark at the estimate.
// Colours come from the theme's CSS variables (static/css/theme.css) at draw time, and again when the system
// switches between light and dark, so a chart reads in either.
const DARK = window.matchMedia("(prefers-color-scheme: dark)");

function themeColours() {
  const style = getComputedStyle(document.documentElement);
  const read = (name) => style.getPropertyValue(name).trim();
  return {
    range: read("--chart-range"), accent: read("--accent"), ink: read("--fg"), muted: read("--muted"), grid: read("--chart-grid"),
  };
}

function paint(chart) {
  const colours = themeColours();
  const [range, estimate] = chart.data.datasets;
  Object.assign(range, { backgroundColor: colours.range, borderColor: colours.accent });
  Object.assign(estimate, { pointBackgroundColor: colours.ink, pointBorderColor: colours.ink });
  chart.options.color = colours.muted;
  for (const scale of Object.values(chart.options.scales)) {
    scale.ticks.color = colours.muted;
    scale.grid.color = colours.grid;
    scale.border.color = colours.grid;
    scale.title.color = colours.ink;
  }
  chart.options.plugins.legend.labels.color = colours.ink;
}

export function intervalChart(canvas, rows, { horizontal = false, min, max, format, axisTitle }) {
  const valueAxis = horizontal ? "x" : "y";
  const categoryAxis = horizontal ? "y" : "x";
  const indexAxis = horizontal ? "y" : "x";
  const tooltipLine = (item) => {
    const row = rows[item.dataIndex];
    return item.datasetIndex === 0
      ? `95% interval ${format(row.low)}–${format(row.high)}`
      : `estimate ${format(row.estimate)}`;
  };
  const chart = new window.Chart(canvas, {
    data: {
      labels: rows.map((row) => row.label),
      datasets: [
        {
          type: "bar",
          label: "95% interval",
          data: rows.map((row) => [row.low, row.high]),
          borderWidth: 1,
          borderSkipped: false,
          barPercentage: 0.55,
          pointStyle: "rect", // its legend entry
          indexAxis,
        },
        {
          type: "line",
          label: "estimate",
          data: rows.map((row) => row.estimate),
          showLine: false,
          pointStyle: "rectRot",
          pointRadius: 6,
          pointHoverRadius: 7,
          indexAxis,
        },
      ],
    },
    options: {
      indexAxis,
      animation: false, // the figures are the point; and a chart that is drawn at once reads well when printed
      responsive: true,
      maintainAspectRatio: false,
      scales: {
        [valueAxis]: {
          min,
          max,
          beginAtZero: false, // ratings sit around 1000: a bar from zero would hide the intervals
          title: { display: true, text: axisTitle },
          ticks: { callback: (value) => format(value) },
        },
        [categoryAxis]: { ticks: { autoSkip: false } },
      },
      plugins: {
        legend: { display: true, position: "bottom", labels: { usePointStyle: true } },
        tooltip: { callbacks: { label: tooltipLine } },
      },
    },
  });
  paint(chart);
  chart.update();
  DARK.addEventListener("change", () => { paint(chart); chart.update(); });
  return chart;
}

export function readJSON(id) {
  return JSON.parse(document.getElementById(id).textContent);
}
