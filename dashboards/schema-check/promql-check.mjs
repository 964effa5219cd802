// Sends every PromQL expression of a dashboard to a running Prometheus as an instant query:
// Prometheus parses it, type-checks it and evaluates it, and a parse or evaluation error comes
// back as an error. With --expect-series, an expression that finds no series fails too
// (check.sh's Prometheus holds the samples of fixture.mjs, so a misspelt metric or label
// name finds nothing).
//
//   node promql-check.mjs DASHBOARD.json http://127.0.0.1:PORT UNIX_TIME [--expect-series]
//
// Before sending, Grafana's variables are replaced as Grafana would leave a valid expression:
// query, custom and interval variables by .* (they only appear inside =~ matchers here), textbox
// and constant variables by their default, $__rate_interval and $__interval by 1m, $__range by
// 1h. A variable that is neither the dashboard's nor one of those is an error.
// Exit codes: 0 every expression was accepted, 1 at least one failed, 2 bad usage.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const expectSeries = args.includes('--expect-series');
const [path, base, time] = args.filter((a) => a !== '--expect-series');
if (!path || !base || !/^\d+$/.test(time ?? '')) {
  console.error('usage: node promql-check.mjs DASHBOARD.json http://HOST:PORT UNIX_TIME [--expect-series]');
  process.exit(2);
}
const dashboard = JSON.parse(readFileSync(path, 'utf8'));

const GLOBALS = {
  __rate_interval: '1m',
  __interval: '1m',
  __interval_ms: '60000',
  __range: '1h',
  __range_s: '3600',
  __range_ms: '3600000',
};
const variables = new Map((dashboard.templating?.list ?? []).map((v) => [v.name, v]));

function valueOf(name) {
  if (Object.hasOwn(GLOBALS, name)) return GLOBALS[name];
  const v = variables.get(name);
  if (!v) throw new Error(`unknown variable $${name}`);
  switch (v.type) {
    case 'textbox':
    case 'constant': {
      const q = typeof v.query === 'string' ? v.query : '';
      if (q === '') throw new Error(`variable $${name} has no default value to check with`);
      return q;
    }
    case 'query':
    case 'custom':
      return '.*';
    case 'interval':
      return '1m';
    default:
      throw new Error(`variable $${name} of type ${v.type} has no place in a PromQL expression`);
  }
}

// $name, ${name}, ${name:format} and [[name]]; $1 (a label_replace group) is left alone.
const VARIABLE = /\$\{([A-Za-z_]\w*)(?::[^}]*)?\}|\$([A-Za-z_]\w*)|\[\[([A-Za-z_]\w*)(?::[^\]]*)?\]\]/g;
function substitute(expr) {
  return expr.replace(VARIABLE, (_, a, b, c) => valueOf(a ?? b ?? c));
}

// What to check: each panel query, and the series selector of each query variable.
const checks = [];
const panels = [];
for (const p of dashboard.panels ?? []) {
  panels.push(p);
  if (p.type === 'row') panels.push(...(p.panels ?? []));
}
for (const p of panels) {
  for (const t of p.targets ?? []) {
    if (typeof t.expr !== 'string' || t.expr.trim() === '') {
      checks.push({ where: `panel ${p.id} query ${t.refId}`, error: 'no expr' });
    } else {
      checks.push({ where: `panel ${p.id} query ${t.refId}`, expr: t.expr });
    }
  }
}
for (const v of dashboard.templating?.list ?? []) {
  if (v.type !== 'query') continue;
  const q = typeof v.query === 'string' ? v.query : v.query?.query;
  const where = `variable $${v.name}`;
  if (typeof q !== 'string') {
    checks.push({ where, error: 'no query' });
    continue;
  }
  // Grafana's Prometheus variable functions; their PromQL part is checked.
  const m = /^\s*(label_values|query_result|label_names)\(([\s\S]*)\)\s*$/.exec(q);
  if (!m) {
    checks.push({ where, expr: q });
  } else if (m[1] === 'label_values') {
    const args = m[2];
    const comma = args.lastIndexOf(',');
    const label = (comma < 0 ? args : args.slice(comma + 1)).trim();
    if (!/^[A-Za-z_]\w*$/.test(label)) checks.push({ where, error: `label_values: ${JSON.stringify(label)} is not a label name` });
    if (comma >= 0) checks.push({ where: `${where} (label_values selector)`, expr: args.slice(0, comma).trim() });
  } else if (m[1] === 'query_result') {
    checks.push({ where: `${where} (query_result)`, expr: m[2] });
  }
}

let failed = 0;
for (const c of checks) {
  let expr;
  try {
    if (c.error) throw new Error(c.error);
    expr = substitute(c.expr);
    const body = new URLSearchParams({ query: expr, time });
    const res = await fetch(`${base}/api/v1/query`, { method: 'POST', body });
    const answer = await res.json();
    if (answer.status !== 'success') throw new Error(`Prometheus: ${answer.errorType}: ${answer.error}`);
    const found = seriesCount(answer.data);
    if (expectSeries && found === 0) throw new Error('no series found (a metric or label name that headroom does not export?)');
    const warnings = answer.warnings?.length ? ` (warnings: ${answer.warnings.join('; ')})` : '';
    console.log(`  ok   ${c.where} [${found} series]: ${oneLine(expr)}${warnings}`);
  } catch (e) {
    failed += 1;
    console.log(`  FAIL ${c.where}: ${e.message}`);
    if (c.expr) console.log(`       expression: ${oneLine(expr ?? c.expr)}`);
  }
}

function seriesCount(data) {
  if (data?.resultType === 'vector' || data?.resultType === 'matrix') return data.result.length;
  return data?.result === undefined ? 0 : 1; // a scalar or a string
}

function oneLine(s) {
  return s.replace(/\s+/g, ' ').trim();
}

console.log(
  `promql: ${checks.length - failed} of ${checks.length} expressions accepted by Prometheus` +
    (expectSeries ? ', each finding series in the fixture' : ''),
);
process.exit(failed === 0 ? 0 : 1);
