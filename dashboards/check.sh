#!/usr/bin/env bash
# check.sh — checks a Grafana dashboard (dashboards/headroom.json by default) without Grafana:
#
#   dashboards/check.sh [DASHBOARD.json]
#
#   1. structure: the file is JSON; panel ids unique; every panel has a description and a
#      gridPos inside the 24-column grid, no two overlapping; queries use the data source
#      variable; schemaVersion 39 or newer (schema-check/structure-check.mjs).
#   2. types: `tsc --noEmit --strict` against the types @grafana/schema publishes: once against
#      its Dashboard type, once against Dashboard with each panel narrowed to its plugin's
#      published Options and FieldConfig types (schema-check/dashboard-types.ts). The JSON is
#      pasted into a generated .ts file as an object literal, so that TypeScript reports unknown
#      fields and checks string values against the schema's enums and literal unions (an
#      `import` of the JSON file would widen every string to `string` and skip both).
#   3. promql: every query expression, and the selector of every query variable, sent as an
#      instant query to a Prometheus started here (127.0.0.1 only, no scrape targets, stopped by
#      its pid), which answers an error for an expression it cannot parse or evaluate; its TSDB
#      holds made-up samples of every headroom metric family (schema-check/fixture.mjs,
#      backfilled with promtool), and an expression that finds no series fails too
#      (schema-check/promql-check.mjs).
#
# The npm packages pinned in schema-check/package-lock.json are installed with `npm ci` into
# ${HEADROOM_CACHE_DIR:-~/.cache/headroom}/grafana-schema, never into the work tree, and again
# only when the lock file changes. Needs node and npm, curl, perl, and prometheus with promtool
# (Debian: apt-get install nodejs npm curl prometheus; PROMETHEUS and PROMTOOL name others).
# HEADROOM_DASHBOARD_CHECK_PORT (default 19091) is the port Prometheus listens on.
# Exit codes: 0 all checks passed, 1 a check failed, 2 bad usage or a missing tool.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CHECK=$HERE/schema-check
CACHE=${HEADROOM_CACHE_DIR:-$HOME/.cache/headroom}/grafana-schema
PORT=${HEADROOM_DASHBOARD_CHECK_PORT:-19091}
PROMETHEUS=${PROMETHEUS:-prometheus}
PROMTOOL=${PROMTOOL:-promtool}
# The fixture's last sample and the queries' evaluation time (2024-01-01T00:00:00Z).
FIXTURE_END=1704067200

die() { echo "check.sh: $*" >&2; exit 2; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }
run() { echo "+ $*" >&2; "$@"; }

[[ $# -le 1 ]] || die "usage: $0 [DASHBOARD.json]"
[[ ${1:-} != -* ]] || die "usage: $0 [DASHBOARD.json]"
DASHBOARD=$(realpath "${1:-$HERE/headroom.json}")
[[ -f $DASHBOARD ]] || die "no such file: $DASHBOARD"
need node "apt-get install nodejs"
need npm "apt-get install npm"
need curl "apt-get install curl"
need perl "apt-get install perl"
need "$PROMETHEUS" "apt-get install prometheus, or set PROMETHEUS"
need "$PROMTOOL" "apt-get install prometheus, or set PROMTOOL"

start=$SECONDS
work=""
promdir=""
prom_pid=""
cleanup() {
    if [[ -n $prom_pid ]]; then
        kill "$prom_pid" 2>/dev/null || true
        wait "$prom_pid" 2>/dev/null || true
    fi
    [[ -z $work ]] || rm -rf "$work"
    [[ -z $promdir ]] || rm -rf "$promdir"
}
trap cleanup EXIT

# --- the pinned npm packages, outside the work tree ------------------------------------------
mkdir -p "$CACHE"
if ! cmp -s "$CHECK/package-lock.json" "$CACHE/package-lock.json" \
    || [[ ! -x $CACHE/node_modules/.bin/tsc || ! -f $CACHE/node_modules/@grafana/schema/package.json ]]; then
    echo "== installing the pinned packages into $CACHE"
    rm -rf "$CACHE/node_modules" "$CACHE/package-lock.json"
    cp "$CHECK/package.json" "$CHECK/package-lock.json" "$CACHE/"
    (cd "$CACHE" && run npm ci --no-audit --no-fund --loglevel=error)
fi
schema_version=$(node -p "require('$CACHE/node_modules/@grafana/schema/package.json').version")
tsc_version=$("$CACHE/node_modules/.bin/tsc" --version)
echo "== checking ${DASHBOARD} with @grafana/schema ${schema_version}, typescript ${tsc_version#Version }, $("$PROMETHEUS" --version 2>&1 | head -n1)"

# A scratch directory beside node_modules, so that the copied files resolve @grafana/schema.
work=$(mktemp -d "$CACHE/run.XXXXXX")
cp "$CHECK/dashboard-types.ts" "$CHECK/tsconfig.json" "$CHECK/structure-check.mjs" \
    "$CHECK/promql-check.mjs" "$CHECK/fixture.mjs" "$work/"

failed=()

# --- 1. structure -----------------------------------------------------------------------------
echo "== 1/3 structure"
set +e
(cd "$work" && run node structure-check.mjs "$DASHBOARD")
rc=$?
set -e
if [[ $rc -eq 2 ]]; then
    echo "check.sh: FAILED: the dashboard is not JSON; nothing else checked" >&2
    exit 1
fi
[[ $rc -eq 0 ]] || failed+=(structure)

# --- 2. types ---------------------------------------------------------------------------------
# The JSON's first line is line 4 of each generated file; errors are reported against the JSON.
echo "== 2/3 types (@grafana/schema ${schema_version}: Dashboard; timeseries, stat, bargauge, state-timeline panel types)"
{
    echo "import type { Dashboard } from '@grafana/schema';"
    echo "import type { Json } from './dashboard-types';"
    echo "export const dashboard: Json<Dashboard> ="
    cat "$DASHBOARD"
    echo ";"
} >"$work/grafana-dashboard.gen.ts"
{
    echo "import type { HeadroomDashboard, Json } from './dashboard-types';"
    echo ""
    echo "export const dashboard: Json<HeadroomDashboard> ="
    cat "$DASHBOARD"
    echo ";"
} >"$work/panel-types.gen.ts"
set +e
(cd "$work" && run "$CACHE/node_modules/.bin/tsc" -p tsconfig.json --noEmit --strict --pretty false) >"$work/tsc.out" 2>&1
rc=$?
set -e
DASHBOARD=$DASHBOARD perl -pe '
    s{^(grafana-dashboard|panel-types)\.gen\.ts\((\d+),(\d+)\)}
     {"$ENV{DASHBOARD}:" . ($2 - 3) . ":$3 [" . ($1 eq "panel-types" ? "panel types" : "Dashboard") . "]"}e' \
    "$work/tsc.out"
if [[ $rc -eq 0 ]]; then
    echo "types: ok"
else
    echo "types: failed"
    failed+=(types)
fi

# --- 3. promql --------------------------------------------------------------------------------
echo "== 3/3 promql (${PROMETHEUS} on 127.0.0.1:${PORT}, TSDB holding the fixture's samples)"
if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    die "127.0.0.1:$PORT is in use; set HEADROOM_DASHBOARD_CHECK_PORT to a free port"
fi
promdir=$(mktemp -d "${TMPDIR:-/tmp}/headroom-dashboard-check.XXXXXX")
cat >"$promdir/prometheus.yml" <<'EOF'
# No targets: this Prometheus only answers the dashboard's queries from backfilled samples.
global:
  scrape_interval: 1m
scrape_configs: []
EOF
(cd "$work" && run node fixture.mjs "$FIXTURE_END") >"$promdir/fixture.om"
run "$PROMTOOL" tsdb create-blocks-from openmetrics --quiet "$promdir/fixture.om" "$promdir/data"
echo "+ $PROMETHEUS --config.file=$promdir/prometheus.yml --web.listen-address=127.0.0.1:$PORT --storage.tsdb.path=$promdir/data --storage.tsdb.retention.time=100y &"
"$PROMETHEUS" --config.file="$promdir/prometheus.yml" --web.listen-address="127.0.0.1:$PORT" \
    --storage.tsdb.path="$promdir/data" --storage.tsdb.retention.time=100y \
    >"$promdir/prometheus.log" 2>&1 &
prom_pid=$!
ready=""
for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$PORT/-/ready" >/dev/null 2>&1; then ready=1; break; fi
    kill -0 "$prom_pid" 2>/dev/null || break
    sleep 0.2
done
if [[ -z $ready ]]; then
    tail -n 20 "$promdir/prometheus.log" >&2
    echo "check.sh: Prometheus did not become ready on 127.0.0.1:$PORT" >&2
    exit 1
fi
set +e
(cd "$work" && run node promql-check.mjs "$DASHBOARD" "http://127.0.0.1:$PORT" "$FIXTURE_END" --expect-series)
rc=$?
set -e
[[ $rc -eq 0 ]] || failed+=(promql)
kill "$prom_pid" 2>/dev/null || true
wait "$prom_pid" 2>/dev/null || true
prom_pid=""

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "check.sh: FAILED: $(IFS=,; echo "${failed[*]}") ($((SECONDS - start)) s)"
    exit 1
fi
echo "check.sh: all checks passed: structure, types, promql ($((SECONDS - start)) s)"
