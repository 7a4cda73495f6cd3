import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ContentBlock } from '@tributary/acp';
import { unpackBatch } from '@tributary/packing';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  message,
  replies,
  startHarness,
  type WorkerHarness,
  waitForReplies,
} from '../../apps/worker/test/worker-fixture.js';

/** An agent written only against the ACP SDK's agent side, standing in for the SDK's example agent. */
const AGENT = fileURLToPath(new URL('./sdk-style-agent.mjs', import.meta.url));

let h: WorkerHarness | undefined;
let recordDir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (recordDir) await rm(recordDir, { recursive: true, force: true });
  recordDir = undefined;
});

/** A worker whose agent is the conformance agent, pausing `workMs` twice per turn. */
async function start(workMs: number, env: Record<string, string> = {}) {
  recordDir = await mkdtemp(join(tmpdir(), 'conformance-agent-'));
  const record = join(recordDir, 'prompts.jsonl');
  h = await startHarness({ AGENT_COMMAND: `node "${AGENT}"`, ...env }, undefined, {
    agentEnv: { CONFORMANCE_AGENT_WORK_MS: String(workMs), CONFORMANCE_AGENT_RECORD: record },
  });
  const prompts = async (): Promise<ContentBlock[][]> =>
    (await readFile(record, 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
  return { harness: h, prompts };
}

const signalled = (harness: WorkerHarness, kind: 'started' | 'progress', count: number) =>
  waitFor(() => harness.signals.filter((s) => s.kind === kind).length >= count, {
    what: `${count} ${kind} signals`,
  });

describe('conformance agent (stand-in for the ACP SDK example agent)', () => {
  it('three messages sent while a turn runs make two prompts; the later two are packed into one', async () => {
    const { harness, prompts } = await start(1_000);
    const first = message('please look at the build');
    await harness.send('th', first);
    // The tool call is announced: the first turn is running and still has a pause and a permission ahead.
    await signalled(harness, 'progress', 1);
    const later = [message('also the tests', 'grace'), message('and the docs', 'alan')];
    for (const event of later) await harness.send('th', event);

    await waitForReplies(harness, 'th', 2);
    const sent = replies(harness, 'th');
    expect(sent.map((r) => r.stopReason)).toEqual(['end_turn', 'end_turn']);
    // Packed: each event is a sender_context text block and a prompt text block.
    expect(sent[0]!.text).toContain('Received 2 content block(s), 2 of them text.');
    expect(sent[1]!.text).toContain('Received 4 content block(s), 4 of them text.');

    const received = await prompts();
    expect(received).toHaveLength(2);
    expect(unpackBatch(received[0]!).map((e) => e.prompt)).toEqual([first.text]);
    const batch = unpackBatch(received[1]!);
    expect(batch.map((e) => e.prompt)).toEqual(later.map((e) => e.text));
    expect(received[1]!.filter((b) => b.type === 'text' && b.text.includes('<sender_context>'))).toHaveLength(
      2,
    );
  });

  it.each([
    { label: 'unset', policy: undefined, chosen: 'allow-once' },
    { label: 'allow-once', policy: 'allow-once', chosen: 'allow-once' },
    { label: 'allow-always', policy: 'allow-always', chosen: 'allow-always' },
    { label: 'allow', policy: 'allow', chosen: 'allow-always' },
    { label: 'reject', policy: 'reject', chosen: 'reject-once' },
  ])('answers the permission request per AGENT_PERMISSION_POLICY $label', async ({ policy, chosen }) => {
    const { harness } = await start(10, policy === undefined ? {} : { AGENT_PERMISSION_POLICY: policy });
    await harness.send('th', message('edit the file'));
    await waitForReplies(harness, 'th', 1);
    const [reply] = replies(harness, 'th');
    expect(reply!.stopReason).toBe('end_turn');
    expect(reply!.text).toContain(`Permission: selected ${chosen}.`);
  });

  it('/cancel while the agent works marks the reply cancelled, with a notice after the partial reply', async () => {
    const { harness } = await start(20_000);
    await harness.send('th', message('a long job'));
    // The partial reply has streamed and the tool call is announced; the agent is now pausing.
    await signalled(harness, 'progress', 1);
    expect(await harness.worker.controls.cancel('th')).toEqual({ wasRunning: true });

    await waitForReplies(harness, 'th', 1);
    await waitFor(() => harness.sent.some((m) => m.thread === 'th' && m.kind === 'notice'), {
      what: 'the cancel notice',
    });
    const onThread = harness.sent.filter((m) => m.thread === 'th');
    expect(onThread.map((m) => m.kind)).toEqual(['reply', 'notice']);
    expect(onThread[0]!.stopReason).toBe('cancelled');
    expect(onThread[0]!.text).toContain('Received 2 content block(s), 2 of them text.');
    expect(onThread[0]!.text).not.toContain('Permission:');
    expect(onThread[1]!.text).toBe('This turn was cancelled, so the reply above may be incomplete.');
  });
});
