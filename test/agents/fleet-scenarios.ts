// What measure.ts does with real ingress and worker processes around an agent (agent-fleet.ts).
import { waitFor } from '@tributary/testkit';
import { type AgentFleet, aliveInGroups, descendants, marker, newThread } from './agent-fleet.js';
import { codexProvider } from './agent-profiles.js';

export interface Scenario {
  /** The one agent it applies to, when not all. */
  only?: 'codex';
  run(fleet: AgentFleet, rounds: number): Promise<unknown>;
}

const occurrences = (texts: string[], needle: string) => texts.join('\n').split(needle).length - 1;
const excerpt = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…` : text);

/** A new thread's first message: acknowledged → the model's request → the reply, cold and warm. */
const newThreadLatency: Scenario = {
  async run(fleet, rounds) {
    const results: Record<string, { ackToModelMs: number; ackToReplyMs: number }[]> = {};
    for (const spares of [0, 1]) {
      const worker = await fleet.startWorker({ AGENT_WARM_SPARES: String(spares) });
      const samples: { ackToModelMs: number; ackToReplyMs: number }[] = [];
      for (let i = 0; i < rounds; i++) {
        if (spares > 0) await fleet.sparesReady(worker, spares);
        const tag = marker('new');
        const { eventId, ackAt } = await fleet.send(newThread(), `hello ${tag}`);
        const request = await fleet.firstRequestWith(tag);
        await fleet.reply(eventId);
        samples.push({ ackToModelMs: request.at - ackAt, ackToReplyMs: fleet.replyAt(eventId)! - ackAt });
      }
      results[`AGENT_WARM_SPARES=${spares}`] = samples;
      await worker.cli.stop();
    }
    return results;
  },
};

/** SIGKILL of the worker running a turn; the other worker takes the thread over. */
const killMidTurn: Scenario = {
  async run(fleet) {
    const noSpares = { AGENT_WARM_SPARES: '0' };
    const first = await fleet.startWorker(noSpares);
    const tag = marker('killed');
    const thread = newThread();
    const { eventId } = await fleet.send(thread, `SLOW ${tag}`);
    // The turn's streamed request, not a side question the agent asks its model first (gemini does).
    const interrupted = await waitFor(() => fleet.requestsWith(tag).find((r) => r.streamed), {
      what: 'the turn to reach the model',
      timeoutMs: 180_000,
    });
    // Let the stream run a moment, so the killed turn is mid-answer.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const workerPid = first.cli.child.pid!;
    const workerGroup = Number(
      descendants(process.pid).find((p) => p.pid === workerPid)?.pgid ?? process.pid,
    );
    const agentProcesses = descendants(workerPid).filter((p) => p.pgid !== workerGroup);
    const groups = new Set(agentProcesses.map((p) => p.pgid));
    const second = await fleet.startWorker(noSpares);
    const killedAt = Date.now();
    first.cli.child.kill('SIGKILL');
    const goneAt = await waitFor(() => (aliveInGroups(groups).length === 0 ? Date.now() : undefined), {
      what: 'the killed worker’s agent processes to end',
      timeoutMs: 60_000,
      intervalMs: 50,
    }).catch(() => undefined);
    const reply = await fleet.reply(eventId, 240_000);
    const runs = fleet.requestsWith(tag).filter((r) => r.streamed);
    const rerun = runs.at(-1)!;
    void second;
    return {
      agentProcessesBeforeKill: agentProcesses.map((p) => p.args.slice(0, 80)),
      agentsGoneAfterKillMs: goneAt === undefined ? 'still alive after 60 s' : goneAt - killedAt,
      killedStreamEndedAfterKillMs:
        interrupted.endedAt === undefined ? 'still streaming' : interrupted.endedAt - killedAt,
      killedStreamAbandoned: interrupted.abandoned ?? false,
      modelRequestsWithTheMessage: runs.length,
      rerunAfterKillMs: rerun.at - killedAt,
      messageTimesInRerun: occurrences(rerun.userTexts, tag),
      reply: excerpt(reply),
    };
  },
};

/** SIGKILL of the worker while a shell command the agent started runs: does the command end too? */
const killDuringTool: Scenario = {
  async run(fleet) {
    const worker = await fleet.startWorker({ AGENT_WARM_SPARES: '0', AGENT_PERMISSION_POLICY: 'allow-once' });
    const seconds = 61 + Math.floor(Math.random() * 30);
    const command = `sleep ${seconds}`;
    await fleet.send(newThread(), `RUN-SHELL: ${command}; echo slept ${marker('tool')}`);
    const workerPid = worker.cli.child.pid!;
    const tool = await waitFor(() => descendants(workerPid).find((p) => p.args === command), {
      what: `the agent's ${command}`,
      timeoutMs: 180_000,
      intervalMs: 100,
    });
    // Agents are spawned in process groups of their own: the groups of the worker's direct children
    // other than its own (the warden's).
    const workerGroup = descendants(process.pid).find((p) => p.pid === workerPid)!.pgid;
    const agentGroups = new Set(
      descendants(workerPid)
        .filter((p) => p.ppid === workerPid && p.pgid !== workerGroup)
        .map((p) => p.pgid),
    );
    const chain = descendants(workerPid).map((p) => `${p.pid}/${p.pgid}/${p.sid} ${p.args.slice(0, 40)}`);
    const killedAt = Date.now();
    worker.cli.child.kill('SIGKILL');
    const endedAt = await waitFor(
      () => (aliveInGroups(new Set([tool.pgid])).some((p) => p.pid === tool.pid) ? undefined : Date.now()),
      { what: 'the tool to end', timeoutMs: 10_000, intervalMs: 50 },
    ).catch(() => undefined);
    const survivor = endedAt === undefined;
    if (survivor) process.kill(tool.pid, 'SIGKILL');
    return {
      toolInAgentGroup: agentGroups.has(tool.pgid),
      processes: chain,
      toolEndedAfterKillMs: survivor
        ? 'still running 10 s after the kill (killed by this script)'
        : endedAt - killedAt,
    };
  },
};

/** /cancel during a turn, then the thread's next message. */
const cancelThenNext: Scenario = {
  async run(fleet) {
    const worker = await fleet.startWorker();
    const thread = newThread();
    const slow = marker('cancelled');
    const { eventId: slowId } = await fleet.send(thread, `SLOW ${slow}`);
    await fleet.firstRequestWith(slow);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await fleet.control(thread, '/cancel');
    const cancelledReply = await fleet.reply(slowId);
    const next = marker('after-cancel');
    const { eventId: nextId, ackAt } = await fleet.send(thread, `and now this ${next}`);
    const nextReply = await fleet.reply(nextId);
    const repairs = worker.cli.logs.filter((l) => String(l.msg).includes('after a cancel'));
    return {
      cancelledReply: excerpt(cancelledReply),
      nextReply: excerpt(nextReply),
      nextReplyMs: fleet.replyAt(nextId)! - ackAt,
      modelRequestsForNext: fleet.requestsWith(next).filter((r) => r.streamed).length,
      repairLogged: repairs.length,
    };
  },
};

/** The model asks for a shell command (`RUN-SHELL` or `RUN-ESCALATED`); the policy answers the agent. */
function shellCommand(request: 'SHELL' | 'ESCALATED'): Scenario {
  return {
    ...(request === 'ESCALATED' ? { only: 'codex' as const } : {}),
    async run(fleet) {
      const results: Record<string, unknown> = {};
      for (const policy of ['allow-once', 'reject']) {
        const worker = await fleet.startWorker({ AGENT_PERMISSION_POLICY: policy, AGENT_WARM_SPARES: '0' });
        // No $(…) or $((…)): gemini-cli refuses any command with a substitution in it.
        const text = `RUN-${request}: echo tool-ran ${marker('shell')}`;
        const { eventId } = await fleet.send(newThread(), text);
        const reply = await fleet.reply(eventId);
        const asked = worker.cli.logs.filter((l) => String(l.msg).includes('permission'));
        const finished = worker.cli.logs.find((l) => l.msg === 'turn finished');
        const warnings = worker.cli.logs.filter((l) => Number(l.level) >= 40).map((l) => String(l.msg));
        results[policy] = {
          reply: excerpt(reply),
          stopReason: finished?.stopReason,
          warnings,
          permissionLogLines: asked.map((l) =>
            `${l.msg} ${l.outcome ? JSON.stringify(l.outcome) : ''}`.trim(),
          ),
        };
        await worker.cli.stop();
      }
      return results;
    },
  };
}

/** codex pointed at the endpoint with `openai_base_url` instead of a provider entry. */
const codexBaseUrl: Scenario = {
  only: 'codex',
  async run(fleet) {
    const viaProvider = fleet.profile.workerEnv.AGENT_COMMAND!;
    const viaBaseUrl = viaProvider.replace(
      codexProvider(fleet.model.url),
      `-c openai_base_url=${fleet.model.url}/v1`,
    );
    await fleet.startWorker({ AGENT_COMMAND: viaBaseUrl, AGENT_WARM_SPARES: '0' });
    const tag = marker('base-url');
    const before = fleet.model.requests.length;
    const { eventId, ackAt } = await fleet.send(newThread(), `hello ${tag}`);
    const reply = await fleet.reply(eventId);
    const requests = fleet.model.requests.slice(before);
    const post = requests.find((r) => r.method === 'POST' && !r.upgrade);
    return {
      webSocketAttempts: requests.filter((r) => r.upgrade).length,
      firstRequestAfterAckMs: requests[0] ? requests[0].at - ackAt : undefined,
      firstPostAfterAckMs: post ? post.at - ackAt : undefined,
      ackToReplyMs: fleet.replyAt(eventId)! - ackAt,
      reply: excerpt(reply),
    };
  },
};

export const SCENARIOS: Record<string, Scenario> = {
  'new-thread': newThreadLatency,
  kill: killMidTurn,
  'kill-tool': killDuringTool,
  cancel: cancelThenNext,
  shell: shellCommand('SHELL'),
  escalated: shellCommand('ESCALATED'),
  websocket: codexBaseUrl,
};
