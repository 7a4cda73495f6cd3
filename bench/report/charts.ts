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
/** Roughly how wide one character of an axis label draws, in pixels. */
const LABEL_CHAR_PX = 7;
/** Bar values: four significant digits, thousands separated, no SI prefixes ("970m" ms misleads). */
const VALUE_FORMAT = ',.4~r';

/** The charts the result asks for, or bars of its first numeric column per its first column. */
export function chartHints(result: BenchResult): ChartHint[] {
  if (result.charts?.length) return result.charts;
  const numeric = result.columns.findIndex((_, i) => result.rows.every((r) => typeof r[i] === 'number'));
  if (numeric <= 0) return [];
  return [{ title: result.columns[numeric]!, x: result.columns[0]!, y: result.columns[numeric]! }];
}

type Datum = Record<string, string | number>;

/** The rows drawn: those with a number to draw, less any facet that is zero throughout. */
function chartData(result: BenchResult, hint: ChartHint): Datum[] {
  const values = result.rows
    .map((row) => Object.fromEntries(result.columns.map((c, i) => [c, row[i]])) as Datum)
    .filter((datum) => typeof datum[hint.y] === 'number');
  if (!hint.facet) return values;
  const drawn = new Set(values.filter((v) => v[hint.y] !== 0).map((v) => v[hint.facet!]));
  return values.filter((v) => drawn.has(v[hint.facet!]));
}

export function chartSpec(result: BenchResult, hint: ChartHint): TopLevelSpec {
  const values = chartData(result, hint);
  // Bars turn sideways when their labels would not fit under them, so every label reads in full.
  const width = hint.facet ? 220 : 480;
  const categories = new Set(values.map((v) => v[hint.x]));
  const longest = Math.max(...[...categories].map((c) => String(c).length));
  const sideways = longest * LABEL_CHAR_PX > width / categories.size;
  const category = {
    field: hint.x,
    type: 'nominal',
    sort: null,
    // Sideways, the title stands above the labels instead of across them.
    axis: sideways
      ? {
          labelLimit: 0,
          title: hint.x,
          titleAngle: 0,
          titleAlign: 'right',
          titleBaseline: 'bottom',
          titleX: -6,
          titleY: -6,
        }
      : { labelLimit: 0, title: hint.x, labelAngle: 0 },
  };
  const measure = { field: hint.y, type: 'quantitative', title: hint.y };
  // A group (baseline against Tributary, before against after) gets a colour each and a legend.
  const color = hint.group
    ? {
        field: hint.group,
        type: 'nominal',
        sort: null,
        legend: { title: hint.group, orient: 'top', labelLimit: 0 },
      }
    : { value: '#4c78a8' };
  const offset = hint.group ? { [sideways ? 'yOffset' : 'xOffset']: { field: hint.group, sort: null } } : {};
  const encoding = sideways
    ? { y: category, x: measure, color, ...offset }
    : { x: category, y: measure, color, ...offset };
  // The value on each bar, so a zero (an "after" that emptied) is seen, not missed.
  const label = sideways
    ? { type: 'text', align: 'left', dx: 3, fontSize: 10 }
    : { type: 'text', baseline: 'bottom', dy: -2, fontSize: 10 };
  const bars = {
    encoding,
    layer: [
      { mark: { type: 'bar', tooltip: false } },
      {
        mark: label,
        encoding: {
          text: { field: hint.y, type: 'quantitative', format: VALUE_FORMAT },
          color: { value: '#333' },
        },
      },
    ],
  };
  const common = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: hint.title,
    background: 'white',
    data: { values },
    config: { font: FONT, view: { stroke: null } },
  };
  const size = (width: number, height: number) =>
    sideways ? { width, height: { step: hint.group ? 26 : 20 } } : { width, height };
  if (!hint.facet) return { ...common, ...size(width, 220), ...bars } as TopLevelSpec;
  return {
    ...common,
    // In the table's order: Vega-Lite sorts facets by name unless given the order.
    facet: {
      field: hint.facet,
      type: 'nominal',
      sort: [...new Set(values.map((v) => v[hint.facet!]))],
      title: hint.facet,
      header: { labelFontWeight: 'bold', labelFontSize: 12 },
    },
    columns: sideways ? 2 : 3,
    // Each facet shows only its own bars: a table may hold different measures per facet (e2e, memory).
    resolve: { scale: { x: 'independent', y: 'independent' } },
    spec: { ...size(width, 140), ...bars },
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
