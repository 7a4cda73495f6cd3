/** A Slack `ts` ("1700000000.123456", seconds and microseconds) as an ISO-8601 UTC instant in ms. */
export function slackTsToIso(ts: string): string {
  const [seconds = '', fraction = ''] = ts.split('.');
  const ms = Number(seconds) * 1000 + Number(fraction.padEnd(3, '0').slice(0, 3));
  return new Date(ms).toISOString();
}
