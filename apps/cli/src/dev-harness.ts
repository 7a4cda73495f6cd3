/**
 * What `tributary dev` runs on besides the services: a private redis-server and a local reply receiver,
 * from the test harness (@tributary/testkit). The harness is a development dependency: the runtime
 * image has neither it nor the container tooling it brings, and there `tributary dev` says so instead
 * of failing on a missing module.
 */
export type DevHarness = typeof import('@tributary/testkit');

export async function loadDevHarness(): Promise<DevHarness> {
  try {
    return await import('@tributary/testkit');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error(
      'this installation has no development tools: run `tributary dev` from a clone of the repository ' +
        'after `npm ci`; a deployment runs `tributary ingress` and `tributary worker`',
    );
  }
}
