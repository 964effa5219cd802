// Checks of a dashboard's JSON that a type cannot express: it parses as JSON, panel ids are
// unique, every panel has a description and a gridPos inside the 24-column grid, no two panels
// overlap, and every panel and query uses the dashboard's data source variable.
//
//   node structure-check.mjs DASHBOARD.json
//
// Exit codes: 0 all checks pass, 1 a check failed, 2 the file is not JSON (nothing else is run).
import { readFileSync } from 'node:fs';

const path = process.argv[2];
if (!path) {
  console.error('usage: node structure-check.mjs DASHBOARD.json');
  process.exit(2);
}

let dashboard;
try {
  dashboard = JSON.parse(readFileSync(path, 'utf8'));
} catch (e) {
  console.error(`${path}: not valid JSON: ${e.message}`);
  process.exit(2);
}

const failures = [];
const fail = (msg) => failures.push(msg);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

if (!isObject(dashboard)) {
  console.error(`${path}: the top level is not a JSON object`);
  process.exit(2);
}

// schemaVersion: 39 is Grafana 11's; the current one is what @grafana/schema's defaultDashboard holds.
let current = null;
try {
  ({
    defaultDashboard: { schemaVersion: current },
  } = await import('@grafana/schema'));
} catch {
  // Without the package the comparison is skipped; check.sh always has it installed.
}
if (typeof dashboard.schemaVersion !== 'number' || dashboard.schemaVersion < 39) {
  fail(`schemaVersion ${JSON.stringify(dashboard.schemaVersion)}: want a number, 39 or newer`);
} else if (current !== null && dashboard.schemaVersion > current) {
  fail(`schemaVersion ${dashboard.schemaVersion} is newer than @grafana/schema's current ${current}`);
}
if (typeof dashboard.uid !== 'string' || dashboard.uid.length === 0 || dashboard.uid.length > 40) {
  fail(`uid ${JSON.stringify(dashboard.uid)}: want a string of 1 to 40 characters`);
}

const dsVar = (dashboard.templating?.list ?? []).find((v) => v?.type === 'datasource');
const dsUids = dsVar ? new Set([`\${${dsVar.name}}`, `$${dsVar.name}`]) : new Set();
if (!dsVar) fail('no templating variable of type "datasource"');

// Panels, with a row's own panels after the row.
const panels = [];
for (const p of Array.isArray(dashboard.panels) ? dashboard.panels : []) {
  panels.push(p);
  if (p?.type === 'row' && Array.isArray(p.panels)) panels.push(...p.panels);
}
if (panels.length === 0) fail('no panels');

const ids = new Map();
const boxes = [];
for (const [i, p] of panels.entries()) {
  const name = `panel ${p?.id ?? `#${i}`} (${JSON.stringify(p?.title ?? '')})`;
  if (!isObject(p)) {
    fail(`panel #${i} is not an object`);
    continue;
  }
  if (!Number.isInteger(p.id)) fail(`${name}: id is not an integer`);
  else if (ids.has(p.id)) fail(`${name}: id ${p.id} is also the id of ${ids.get(p.id)}`);
  else ids.set(p.id, name);

  // A row's schema has no description field; every other panel must explain itself.
  if (p.type !== 'row' && (typeof p.description !== 'string' || p.description.trim() === '')) {
    fail(`${name}: no description`);
  }

  const g = p.gridPos;
  if (!isObject(g) || !['x', 'y', 'w', 'h'].every((k) => Number.isInteger(g[k]))) {
    fail(`${name}: gridPos ${JSON.stringify(g)} is not {x, y, w, h} integers`);
  } else if (g.x < 0 || g.y < 0 || g.w < 1 || g.h < 1 || g.x + g.w > 24) {
    fail(`${name}: gridPos ${JSON.stringify(g)} is outside the 24-column grid`);
  } else {
    for (const other of boxes) {
      const o = other.g;
      if (g.x < o.x + o.w && o.x < g.x + g.w && g.y < o.y + o.h && o.y < g.y + g.h) {
        fail(`${name}: gridPos overlaps ${other.name}`);
      }
    }
    boxes.push({ g, name });
  }

  if (p.type === 'row') continue;
  if (!dsUids.has(p.datasource?.uid)) {
    fail(`${name}: datasource ${JSON.stringify(p.datasource)} is not the dashboard's data source variable`);
  }
  const targets = Array.isArray(p.targets) ? p.targets : [];
  if (targets.length === 0) fail(`${name}: no queries`);
  const refIds = new Set();
  for (const t of targets) {
    if (refIds.has(t?.refId)) fail(`${name}: refId ${JSON.stringify(t?.refId)} twice`);
    refIds.add(t?.refId);
    if (t?.datasource !== undefined && !dsUids.has(t.datasource?.uid)) {
      fail(`${name} query ${t?.refId}: datasource ${JSON.stringify(t.datasource)} is not the dashboard's data source variable`);
    }
  }
}

console.log(
  `structure: ${panels.length} panels, ids unique, descriptions, gridPos in a 24-column grid without overlap, ` +
    `data source variable; schemaVersion ${dashboard.schemaVersion}` +
    (current !== null ? ` (@grafana/schema's current: ${current})` : ''),
);
if (failures.length > 0) {
  for (const f of failures) console.log(`  FAIL ${f}`);
  console.log(`structure: ${failures.length} failed`);
  process.exit(1);
}
console.log('structure: ok');
