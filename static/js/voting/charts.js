// Interval charts on the vendored Chart.js (static/vendor/chartjs, loaded before this module as window.Chart):
// each row is a floating bar from its interval's low to high, with a mark at the estimate.
const RANGE_FILL = "rgba(49, 86, 211, 0.22)";
const ACCENT = "#3156d3";
const INK = "#1d1f23";

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
  return new window.Chart(canvas, {
    data: {
      labels: rows.map((row) => row.label),
      datasets: [
        {
          type: "bar",
          label: "95% interval",
          data: rows.map((row) => [row.low, row.high]),
          backgroundColor: RANGE_FILL,
          borderColor: ACCENT,
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
          pointBackgroundColor: INK,
          pointBorderColor: INK,
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
}

export function readJSON(id) {
  return JSON.parse(document.getElementById(id).textContent);
}
