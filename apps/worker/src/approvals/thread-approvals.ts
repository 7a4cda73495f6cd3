import { setTimeout as sleep } from 'node:timers/promises';
import {
  choosePermission,
  type PermissionAsker,
  type RequestPermissionOutcome,
  type RequestPermissionRequest,
} from '@tributary/acp';
import type { Metrics, SecretScrubber } from '@tributary/observability';
import { type MessageRef, type PlatformClient, platformOfThread } from '@tributary/platforms';
import type { Approval, Approvals } from '@tributary/queue';
import type { Logger } from 'pino';
import type { RunningTurns, TurnPlace } from '../turns/running-turns.js';

export interface ThreadApprovalsDeps {
  approvals: Pick<Approvals, 'open' | 'shownIn' | 'get' | 'settle'>;
  clients: ReadonlyMap<string, PlatformClient>;
  running: Pick<RunningTurns, 'running'>;
  secrets: Pick<SecretScrubber, 'scrub'>;
  metrics: Pick<Metrics, 'approvalRequestsTotal' | 'approvalOutcomesTotal' | 'approvalWaitSeconds'>;
  logger: Logger;
  /** APPROVAL_TIMEOUT_MS */
  timeoutMs: number;
  /** APPROVAL_FALLBACK: what answers a request nobody answered in time, or that could not be asked. */
  fallback: 'reject' | 'allow-once';
  /** How often a waiting request is looked at in Redis. */
  pollMs?: number;
}

/**
 * The `ask` policy (docs/adr/0056): a permission request is recorded with its turn's fence, posted into
 * the thread with a button per option, and answered with what the thread's starter or an approver
 * clicked (ingress settles it). Nobody in time: the fallback answers, and the thread is told. The turn
 * cancelled, its lease lost or the worker stopping: `cancelled`, as ACP requires; a re-run asks again.
 */
export class ThreadApprovals {
  constructor(private readonly deps: ThreadApprovalsDeps) {}

  /**
   * A failure of Redis while the request waits (or is recorded) answers with the fallback, at warn and
   * counted, instead of failing the agent's request with an error it cannot explain.
   */
  readonly ask: PermissionAsker = async (request, thread) => {
    try {
      return await this.put(request, thread);
    } catch (error) {
      return this.unavailable(request, thread, platformOfThread(thread), (error as Error).message);
    }
  };

  private async put(request: RequestPermissionRequest, thread: string): Promise<RequestPermissionOutcome> {
    const { deps } = this;
    const platform = platformOfThread(thread);
    const running = deps.running.running(thread);
    if (running === undefined) return { outcome: 'cancelled' };
    const client = deps.clients.get(platform);
    const title = deps.secrets.scrub(request.toolCall.title ?? `a ${request.toolCall.kind ?? 'tool'} call`);
    if (client?.askApproval === undefined) {
      return this.unavailable(request, thread, platform, 'the platform has no buttons to ask with');
    }
    const id = await deps.approvals.open({
      thread,
      batchId: running.place.batchId,
      fence: running.place.fence,
      toolCallId: request.toolCall.toolCallId,
      toolKind: request.toolCall.kind ?? 'other',
      title,
      options: request.options.map(({ optionId, name, kind }) => ({ optionId, name, kind })),
    });
    try {
      const messageId = await client.askApproval(running.place.target, {
        id,
        text: `🔐 The agent asks to run **${title}**. The person who started this conversation or an approver may answer.`,
        options: request.options,
      });
      await deps.approvals.shownIn(id, messageId);
    } catch (error) {
      await deps.approvals.settle(id, 'cancelled');
      return this.unavailable(request, thread, platform, (error as Error).message);
    }
    deps.metrics.approvalRequestsTotal.inc({ platform });
    const settled = await this.settled(id, running.signal, request);
    deps.metrics.approvalWaitSeconds.observe(
      { platform },
      ((settled.settledAt ?? Date.now()) - settled.askedAt) / 1000,
    );
    return this.outcomeOf(settled, request, client, running.place, platform);
  }

  /** Waits until the request is settled: by a click, by the time-out, or by the turn's end. */
  private async settled(id: string, turn: AbortSignal, request: RequestPermissionRequest): Promise<Approval> {
    const { approvals } = this.deps;
    const deadline = Date.now() + this.deps.timeoutMs;
    for (;;) {
      const approval = await approvals.get(id);
      if (approval === undefined) throw new Error(`permission request ${id} is gone from Redis`);
      if (approval.state !== 'pending') return approval;
      if (turn.aborted || Date.now() >= deadline) {
        const fallback = this.fallback(request);
        const optionId = fallback.outcome === 'selected' ? fallback.optionId : '';
        // A click may have settled it in between: then the click stands.
        await approvals.settle(id, turn.aborted ? 'cancelled' : 'timed-out', turn.aborted ? '' : optionId);
        continue;
      }
      await sleep(Math.min(this.deps.pollMs ?? 250, deadline - Date.now()), undefined, {
        signal: turn,
      }).catch(() => {});
    }
  }

  private async outcomeOf(
    approval: Approval,
    request: RequestPermissionRequest,
    client: PlatformClient,
    place: TurnPlace,
    platform: string,
  ): Promise<RequestPermissionOutcome> {
    const { metrics, logger } = this.deps;
    const thread = approval.thread;
    if (approval.state === 'answered' && approval.optionId !== undefined) {
      metrics.approvalOutcomesTotal.inc({ platform, outcome: 'answered' });
      return { outcome: 'selected', optionId: approval.optionId };
    }
    if (approval.state === 'timed-out') {
      metrics.approvalOutcomesTotal.inc({ platform, outcome: 'timed_out' });
      const fallback = this.fallback(request);
      const label = optionName(request, fallback) ?? 'refused';
      logger.warn(
        { thread, approval: approval.id, toolCallId: approval.toolCallId, fallback: label },
        'nobody answered the permission request in time; the fallback answered it',
      );
      const said = `⏱ Nobody answered in ${Math.round(this.deps.timeoutMs / 1000)} s, so the request was answered **${label}**: ${approval.title}`;
      await this.say(client, place.target, approval, said, thread);
      return fallback;
    }
    metrics.approvalOutcomesTotal.inc({ platform, outcome: 'cancelled' });
    await this.settleShown(
      client,
      place.target,
      approval,
      `⏹ Cancelled with its turn: ${approval.title}`,
      thread,
    );
    return { outcome: 'cancelled' };
  }

  /** Edits the request to say how it ended and says it in the thread, so people are notified. */
  private async say(
    client: PlatformClient,
    target: MessageRef,
    approval: Approval,
    text: string,
    thread: string,
  ) {
    await this.settleShown(client, target, approval, text, thread);
    await client.send(target, text).catch((error: unknown) => {
      this.deps.logger.warn(
        { err: error, thread },
        'notice of an unanswered permission request not delivered',
      );
    });
  }

  private async settleShown(
    client: PlatformClient,
    target: MessageRef,
    approval: Approval,
    text: string,
    thread: string,
  ): Promise<void> {
    if (approval.messageId === undefined || client.settleApproval === undefined) return;
    await client.settleApproval(target, approval.messageId, text).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, thread }, 'permission request message not updated');
    });
  }

  private unavailable(
    request: RequestPermissionRequest,
    thread: string,
    platform: string,
    why: string,
  ): RequestPermissionOutcome {
    this.deps.metrics.approvalOutcomesTotal.inc({ platform, outcome: 'unavailable' });
    this.deps.logger.warn(
      { thread, platform, why },
      'permission request could not be put to the thread; the fallback answered it',
    );
    return this.fallback(request);
  }

  private fallback(request: RequestPermissionRequest): RequestPermissionOutcome {
    return choosePermission(this.deps.fallback, request.options, false);
  }
}

function optionName(
  request: RequestPermissionRequest,
  outcome: RequestPermissionOutcome,
): string | undefined {
  if (outcome.outcome !== 'selected') return undefined;
  return request.options.find((option) => option.optionId === outcome.optionId)?.name;
}
