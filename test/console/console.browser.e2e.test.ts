import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type RedisHandle, startRedis, waitFor } from '@tributary/testkit';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTelegramMessage, type Stack, startStack } from '../stack/stack-fixture.js';

// Debian's Chromium (`.ci/run` installs it), headless; playwright-core drives it and downloads nothing.
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const TOKEN = 'console-admin-token-0123456789ab';
/** Set to a path (docs/console-overview.png) to save the overview's screenshot there. */
const SCREENSHOT = process.env.TRIBUTARY_CONSOLE_SCREENSHOT;

let server: RedisHandle;
let stack: Stack;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  server = await startRedis();
  stack = await startStack({ ADMIN_TOKENS: `ops:act:${TOKEN}` }, server);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  // A CSP violation or a script error shows in the browser's console: the test fails on any.
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await server?.stop();
}, 60_000);

const replies = (chat: number) =>
  stack.calls('telegram', 'sendMessage').filter((c) => (c.body as { chat_id: number }).chat_id === chat);

describe('the operator console in headless Chromium', () => {
  it('signs in with a token kept in this tab only and shows the live overview', async () => {
    await page.goto(`${stack.ingress.adminUrl}/`);
    await page.getByLabel('admin token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    expect(await page.textContent('#who')).toBe('ops (act)');
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(await page.evaluate("sessionStorage.getItem('tributary.adminToken')")).toBe(TOKEN);

    // Counts change without a reload.
    await postTelegramMessage(stack, 9601, 9601, '@tributary_bot hello console');
    await waitFor(() => replies(9601).length === 1, { what: 'a reply', timeoutMs: 30_000 });
    await page
      .locator('[data-count="active threads"] .n')
      .filter({ hasText: '1' })
      .waitFor({ timeout: 10_000 });
  });

  it('finds a dead letter a failing agent left and re-drives it after a confirmation', async () => {
    await postTelegramMessage(
      stack,
      9602,
      9602,
      '@tributary_bot fail\n@agent {"error": "console test failure"}',
    );
    await page
      .locator('[data-count="dead letters"] .n')
      .filter({ hasText: '1' })
      .waitFor({ timeout: 30_000 });
    if (SCREENSHOT) {
      await mkdir(dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
    }
    await page.getByRole('link', { name: 'Dead letters', exact: true }).click();
    await page.getByText('console test failure').first().waitFor();
    await page.getByRole('checkbox').first().check();
    await page.locator('[data-action="redrive-selected"]').click();
    await expect.poll(() => page.textContent('#confirm-text')).toBe('redrive 1 dead letter?');
    await page.locator('#confirm-ok').click();
    await page.getByRole('status').filter({ hasText: 'redrive: 1 done' }).waitFor();
    const audit = (await (
      await fetch(`${stack.ingress.adminUrl}/admin/audit?limit=1`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
    ).json()) as { items: unknown[] };
    expect(audit.items[0]).toMatchObject({
      actor: 'ops',
      action: 'dead-letters.redrive',
      result: { done: 1 },
    });
  });

  it('pauses and resumes a thread, and reads a batch packed prompt', async () => {
    await page.getByRole('link', { name: 'Threads', exact: true }).click();
    const thread = page.getByRole('link', { name: /9601/ });
    await thread.click();
    await page.locator('[data-action="pause"]').click();
    await page.locator('#confirm-ok').click();
    await page.getByRole('status').filter({ hasText: 'paused' }).waitFor();
    await page.locator('.pill.paused').first().waitFor();

    await postTelegramMessage(stack, 9601, 9611, '@tributary_bot still there?');
    await page.locator('#search input').fill('9611');
    await page.locator('#search button').click();
    await page.getByText('paused: no turn starts until resumed').waitFor();
    expect(replies(9601)).toHaveLength(1);

    await page.getByRole('link', { name: /9601/ }).click();
    await page.locator('[data-action="resume"]').click();
    await page.locator('#confirm-ok').click();
    await page.getByRole('status').filter({ hasText: 'resumed' }).waitFor();
    await waitFor(() => replies(9601).length === 2, { what: 'the reply after resume', timeoutMs: 30_000 });

    await page.reload();
    await page.locator('[data-prompt]').first().click();
    const prompt = page.locator('pre.block').first();
    await prompt.waitFor();
    expect(await prompt.textContent()).toMatch(/^<sender_context>\n\{"schema":"openab\.sender\.v1"/);
    expect(problems).toEqual([]);
  });
});
