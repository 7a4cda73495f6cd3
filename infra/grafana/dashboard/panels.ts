// The one panel shape the dashboard uses: a time series with a unit, axis label, legend and a
// description, its queries each with their legend.
import {
  LegendDisplayMode,
  LegendPlacement,
  VizLegendOptionsBuilder,
} from '@grafana/grafana-foundation-sdk/common';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';

/** Panels read the datasource the dashboard's datasource variable names. */
export const DATASOURCE = { type: 'prometheus', uid: `\${datasource}` };

/** A query and the legend of each series it returns. */
export type Query = readonly [expr: string, legend: string];

export interface PanelSpec {
  title: string;
  /** What the panel answers and what to do when it looks wrong. */
  description: string;
  /** A Grafana unit id: s, bytes, percentunit, reqps, ops, short, none. */
  unit: string;
  /** The y axis title. */
  axis: string;
  queries: readonly Query[];
  /** Grid columns out of 24. */
  span?: number;
}

export function timeseries(spec: PanelSpec): PanelBuilder {
  const panel = new PanelBuilder()
    .title(spec.title)
    .description(spec.description)
    .datasource(DATASOURCE)
    .unit(spec.unit)
    .axisLabel(spec.axis)
    .min(0)
    .height(8)
    .span(spec.span ?? 8)
    .fillOpacity(10)
    .legend(
      new VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(LegendDisplayMode.Table)
        .placement(LegendPlacement.Bottom)
        .calcs(['lastNotNull', 'max']),
    );
  spec.queries.forEach(([expr, legend], index) => {
    panel.withTarget(
      new DataqueryBuilder()
        .expr(expr)
        .legendFormat(legend)
        .refId(String.fromCharCode(65 + index))
        .datasource(DATASOURCE),
    );
  });
  return panel;
}
