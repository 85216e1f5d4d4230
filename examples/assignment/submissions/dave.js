const fs = require("fs");

function parseLines(text) {
  const out = [];
  for (let raw of text.split("\n")) {
    raw = raw.trim();
    if (!raw) {
      continue;
    }
    const [who, pts] = raw.split(/\s+/);
    out.push([who, parseInt(pts, 10)]);
  }
  return out;
}

function mark(p) {
  if (p >= 90) {
    return "A";
  } else if (p >= 80) {
    return "B";
  } else if (p >= 70) {
    return "C";
  }
  return "F";
}

function tally(rows) {
  const order = [...rows].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]));
  let sum = 0;
  const hist = { A: 0, B: 0, C: 0, F: 0 };
  for (const [who, pts] of rows) {
    sum += pts;
    hist[mark(pts)] += 1;
  }
  const mean = rows.length ? sum / rows.length : 0.0;
  return [order.slice(0, 3), mean, hist];
}

function run() {
  const rows = parseLines(fs.readFileSync(0, "utf8"));
  const [best, mean, hist] = tally(rows);
  for (const [who, pts] of best) {
    console.log(`${who} ${pts}`);
  }
  console.log(`average ${mean.toFixed(2)}`);
  for (const letter of "ABCF") {
    console.log(`${letter}: ${hist[letter]}`);
  }
}

run();
