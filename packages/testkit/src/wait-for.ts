export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /**
   * Named in the timeout error so a failing test says what it was waiting for; a function is called
   * only then, so it can describe what a process had printed by the deadline rather than at the start.
   */
  what?: string | (() => string);
}

/**
 * Polls `check` until it returns a truthy value; tests wait on conditions, never on fixed sleeps.
 *
 * Most waits cover an agent's start: about a second on an idle machine, over ten on two cores shared
 * with a heavy suite on a slow host. The default stays inside the 30 s a test may run, so a wait that
 * never ends still fails naming what it waited for.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<NonNullable<T>> {
  const { timeoutMs = 20_000, intervalMs = 10, what = 'condition' } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? `: ${lastError.message}` : '';
      const waitedFor = typeof what === 'function' ? what() : what;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${waitedFor}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
