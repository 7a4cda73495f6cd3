import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Preloaded into the ingress process that bench/intake.ts starts. Answers `'probe'` on the IPC channel
 * with the process's own CPU time and the longest event-loop stall since the previous answer: how long
 * an unrelated request could have waited, measured inside the process, without the client's noise.
 */
const stalls = monitorEventLoopDelay({ resolution: 1 });
stalls.enable();
// The channel must not keep a process alive that its own shutdown would end.
process.channel?.unref();
process.on('message', (message) => {
  if (message !== 'probe') return;
  process.send?.({ cpu: process.cpuUsage(), stallMs: stalls.max / 1e6 });
  stalls.reset();
});
