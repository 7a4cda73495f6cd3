/** Stdout carries the protocol, so the agent logs one JSON line per event to stderr. */
export type Log = (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: object) => void;

export const stderrLog: Log = (level, message, fields) => {
  const line = { time: new Date().toISOString(), level, pid: process.pid, name: 'tributary-agent', message };
  process.stderr.write(`${JSON.stringify({ ...line, ...fields })}\n`);
};
