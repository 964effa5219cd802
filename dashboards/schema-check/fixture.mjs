// Writes a small OpenMetrics file of made-up headroom samples: every family of /metrics with
// the names, types and labels listed in headroom's metrics spec (src/live/openmetrics.rs),
// for a fleet of two workers over ten minutes, one sample every 15 s. check.sh backfills it
// into the Prometheus it starts, so that each dashboard query must find series, not only parse.
// The values are invented and only roughly consistent; they are not headroom's output.
//
//   node fixture.mjs END_UNIX_SECONDS > fixture.om
const end = Number(process.argv[2]);
if (!Number.isFinite(end)) {
  console.error('usage: node fixture.mjs END_UNIX_SECONDS');
  process.exit(2);
}
const STEP = 15;
const times = [];
for (let t = end - 600; t <= end; t += STEP) times.push(t);

const workers = ['1/2', '2/2'];
const ops = ['read', 'write'];
const quantiles = [['0.5', 0.002], ['0.99', 0.02], ['0.999', 0.05], ['1', 0.2]];
const base = (worker) => ({ run: 'fixture', workload: 'keyvalue', worker });

const lines = [];
function labels(l) {
  return '{' + Object.entries(l).map(([k, v]) => `${k}="${v}"`).join(',') + '}';
}
// One family: its TYPE line, then each series' samples in time order.
function family(name, type, series) {
  lines.push(`# TYPE ${name} ${type}`);
  const sample = type === 'counter' ? `${name}_total` : name;
  for (const [l, value] of series) {
    for (const t of times) lines.push(`${sample}${labels(l)} ${value(t - times[0])} ${t}`);
  }
}
const each = (f) => workers.flatMap(f);

family('headroom_requests', 'counter', each((w) =>
  ops.flatMap((op) => ['warmup', 'measure'].map((phase) => [{ ...base(w), op, phase }, (s) => 500 * s]))));
family('headroom_errors', 'counter', each((w) =>
  ops.flatMap((op) => ['timeout', 'overloaded'].map((c) => [{ ...base(w), op, phase: 'measure', class: c }, (s) => Math.floor(s / 30)]))));
for (const name of ['headroom_response_time_seconds', 'headroom_service_time_seconds', 'headroom_window_response_time_seconds', 'headroom_window_service_time_seconds']) {
  family(name, 'gauge', each((w) => ops.flatMap((op) => quantiles.map(([q, v]) => [{ ...base(w), op, quantile: q }, () => v]))));
}
for (const name of ['headroom_send_lag_seconds', 'headroom_hiccup_seconds']) {
  family(name, 'gauge', each((w) => quantiles.map(([q, v]) => [{ ...base(w), quantile: q }, () => v / 10])));
}
family('headroom_attempted_requests_per_second', 'gauge', each((w) => [[base(w), () => 1000]]));
family('headroom_achieved_requests_per_second', 'gauge', each((w) => [[base(w), () => 990]]));
family('headroom_backlog_requests', 'gauge', each((w) => [[base(w), () => 3]]));
family('headroom_in_flight_requests', 'gauge', each((w) => [[base(w), () => 40]]));
family('headroom_client_cpu_seconds', 'counter', each((w) => [[base(w), (s) => 0.8 * s]]));
family('headroom_client_resident_memory_bytes', 'gauge', each((w) => [[base(w), () => 150e6]]));
family('headroom_sla_windows', 'counter', each((w) =>
  [['pass', 0.9], ['fail', 0.1]].map(([verdict, share]) => [{ ...base(w), window: '10s', verdict }, (s) => Math.floor((s / 10) * share)])));
family('headroom_validity', 'gauge', each((w) =>
  ['pending', 'valid'].map((verdict) => [{ ...base(w), verdict }, (s) => Number((verdict === 'valid') === s >= 300)])));
family('headroom_intervals', 'counter', each((w) => [[base(w), (s) => Math.floor(s)]]));
family('headroom_trial_rate_requests_per_second', 'gauge', each((w) => [[base(w), (s) => (s < 300 ? 1000 : 2000)]]));
family('headroom_trial_repeat', 'gauge', each((w) => [[base(w), (s) => 1 + Math.floor(s / 150) % 2]]));
const stages = ['starting', 'populate', 'warmup', 'measure', 'between', 'ended'];
family('headroom_phase', 'gauge', each((w) =>
  stages.map((phase, i) => [{ ...base(w), phase }, (s) => Number(Math.min(stages.length - 1, Math.floor(s / 100)) === i)])));
family('headroom_capacity_bracket_requests_per_second', 'gauge', each((w) =>
  [['low', 1000], ['high', 3000]].map(([bound, v]) => [{ ...base(w), bound }, () => v])));

lines.push('# EOF');
process.stdout.write(lines.join('\n') + '\n');
