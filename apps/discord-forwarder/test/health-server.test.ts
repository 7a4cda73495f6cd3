import { expect, it } from 'vitest';
import { startHealthServer } from '../src/health-server.js';

it('answers /readyz 503 with a JSON error while the Gateway session is down, 200 once it is up', async () => {
  let connected = false;
  const app = await startHealthServer(0, '127.0.0.1', () => connected);
  try {
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    const down = await fetch(`${base}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ error: expect.stringContaining('Gateway') });
    connected = true;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  } finally {
    await app.close();
  }
});
