/**
 * PNG charts of a result table, drawn offline: a Vega-Lite spec compiled to Vega, rendered to SVG
 * headlessly, rasterised by resvg (a Rust renderer shipped prebuilt in its npm package). Nothing is
 * fetched: the data is inlined in the spec and the fonts are the system's.
 */
import { Resvg } from '@resvg/resvg-js';
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { BenchResult, ChartHint } from '../bench-result.js';

const FONT = 'DejaVu Sans';

/** The charts the result asks for, or bars of its first numeric column per its first column. */
export function chartHints(result: BenchResult): ChartHint[] {
  if (result.charts?.length) return result.charts;
  const numeric = result.columns.findIndex((_, i) => result.rows.every((r) => typeof r[i] === 'number'));
  if (numeric <= 0) return [];
  return [{ title: result.columns[numeric]!, x: result.columns[0]!, y: result.columns[numeric]! }];
}

export function chartSpec(result: BenchResult, hint: ChartHint): TopLevelSpec {
  const values = result.rows
    .map((row) => Object.fromEntries(result.columns.map((c, i) => [c, row[i]])))
    .filter((datum) => typeof datum[hint.y] === 'number');
  const bars = {
    mark: { type: 'bar', tooltip: false },
    encoding: {
      x: {
        field: hint.x,
        type: 'nominal',
        sort: null,
        axis: { labelAngle: -35, labelLimit: 320, title: null },
      },
      y: { field: hint.y, type: 'quantitative', title: null },
      color: { field: hint.group ?? hint.x, type: 'nominal', sort: null, legend: null },
      ...(hint.group ? { xOffset: { field: hint.group, type: 'nominal', sort: null } } : {}),
    },
  } as const;
  const common = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: hint.title,
    background: 'white',
    data: { values },
    config: { font: FONT, view: { stroke: null } },
  };
  if (!hint.facet) return { ...common, width: 480, height: 220, ...bars } as TopLevelSpec;
  return {
    ...common,
    // In the table's order: Vega-Lite sorts facets by name unless given the order.
    facet: {
      field: hint.facet,
      type: 'nominal',
      sort: [...new Set(values.map((v) => v[hint.facet!]))],
      title: null,
    },
    columns: 3,
    // Each facet shows only its own bars: a table may hold different measures per facet (e2e, memory).
    resolve: { scale: { x: 'independent', y: 'independent' } },
    spec: { width: 220, height: 140, ...bars },
  } as TopLevelSpec;
}

export async function renderPng(spec: TopLevelSpec): Promise<Buffer> {
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  const png = new Resvg(svg, {
    font: { loadSystemFonts: true, defaultFontFamily: FONT },
    fitTo: { mode: 'zoom', value: 2 },
    background: 'white',
  });
  return png.render().asPng();
}
