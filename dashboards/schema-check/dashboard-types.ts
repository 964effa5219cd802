// Types that dashboards/check.sh checks dashboards/headroom.json against. Everything here is
// built from the types @grafana/schema publishes; what is declared here rather than imported is
// marked as such.
import type { Dashboard, DataQuery, FieldConfig, FieldConfigSource, GridPos, Panel, RowPanel } from '@grafana/schema';
import type * as BarGauge from '@grafana/schema/dist/esm/raw/composable/bargauge/panelcfg/x/BarGaugePanelCfg_types.gen';
import type * as Stat from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type * as StateTimeline from '@grafana/schema/dist/esm/raw/composable/statetimeline/panelcfg/x/StateTimelinePanelCfg_types.gen';
import type * as TimeSeries from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';

type IsAny<T> = 0 extends 1 & T ? true : false;

/**
 * The JSON form of a schema type. @grafana/schema declares many fields as TypeScript string
 * enums (FieldColorModeId, GraphDrawStyle, ...); in a dashboard's JSON such a field holds the
 * enum member's string value, and TypeScript never lets a string literal stand for a string
 * enum. Json<T> replaces each string enum by the union of its values (`${E}`) and leaves
 * everything else as it is: numeric enums, string literal unions, optional fields, arrays.
 */
export type Json<T> =
  IsAny<T> extends true
    ? T
    : T extends string
      ? `${T}`
      : T extends number | boolean | null | undefined
        ? T
        : T extends ReadonlyArray<infer U>
          ? Array<Json<U>>
          : T extends object
            ? { [K in keyof T]: Json<T[K]> }
            : T;

/**
 * A Prometheus query. @grafana/schema does not publish the Prometheus data source's query
 * model (it belongs to the data source plugin), only the DataQuery every query extends: the
 * fields below that DataQuery lacks are declared here, for the fields this dashboard uses.
 */
export interface PrometheusQuery extends DataQuery {
  expr: string;
  legendFormat?: string;
  range?: boolean;
  instant?: boolean;
  editorMode?: 'code' | 'builder';
  format?: 'time_series' | 'table' | 'heatmap';
  interval?: string;
}

/**
 * The field config of a panel plugin: Grafana's FieldConfig with `custom` narrowed to the
 * plugin's own field config type. (The generic FieldConfig<T> of @grafana/schema joins T with
 * Record<string, unknown>, which would accept any misspelled key in `custom`.)
 */
type PluginFieldConfigSource<Custom> = Omit<FieldConfigSource, 'defaults'> & {
  defaults: Omit<FieldConfig, 'custom'> & { custom?: Custom };
};

/** Panels with no custom field config of their own (stat, bar gauge) accept no `custom` key. */
type NoCustom = Record<string, never>;

/**
 * A panel of a given plugin: Grafana's Panel with its `type`, `options`, `fieldConfig` and
 * `targets` narrowed to that plugin's published types. Stricter than Grafana on purpose: id,
 * title, description and gridPos are required, and options are the complete Options type
 * (Grafana would fill in missing options with defaults).
 */
type PluginPanel<Type extends string, Options, Custom> = Omit<
  Panel,
  'type' | 'options' | 'fieldConfig' | 'targets' | 'id' | 'title' | 'description' | 'gridPos'
> & {
  type: Type;
  id: number;
  title: string;
  description: string;
  gridPos: GridPos;
  options: Options;
  fieldConfig: PluginFieldConfigSource<Custom>;
  targets: PrometheusQuery[];
};

export type TimeSeriesPanel = PluginPanel<'timeseries', TimeSeries.Options, TimeSeries.FieldConfig>;
export type StatPanel = PluginPanel<'stat', Stat.Options, NoCustom>;
export type BarGaugePanel = PluginPanel<'bargauge', BarGauge.Options, NoCustom>;
export type StateTimelinePanel = PluginPanel<'state-timeline', StateTimeline.Options, StateTimeline.FieldConfig>;

/** The panel plugins this check knows; a panel of any other type fails it. */
export type KnownPanel = TimeSeriesPanel | StatPanel | BarGaugePanel | StateTimelinePanel;

export type KnownRow = Omit<RowPanel, 'panels'> & { panels: KnownPanel[] };

/** Grafana's Dashboard whose panels are all of the plugins above. */
export type HeadroomDashboard = Omit<Dashboard, 'panels'> & { panels: Array<KnownPanel | KnownRow> };

// The narrowed type must stay within Grafana's: a dashboard that passes it must pass Dashboard.
type Within<A, B> = [A] extends [B] ? true : false;
export const headroomDashboardIsADashboard: Within<Json<HeadroomDashboard>, Json<Dashboard>> = true;
