import { AdminError, type AdminTarget, type Answer, adminCall, adminTarget } from './admin-client.js';
import { type Column, formatTable } from './admin-tables.js';
import { type Command, parseCommandArgs, positiveInteger, UsageError } from './command-line.js';

const THREAD_ACTIONS = ['pause', 'resume', 'cancel', 'cancel-all', 'reset'];

const threadColumns: Column<Answer>[] = [
  ['thread', (r) => r.thread],
  ['status', (r) => (r.paused ? `${r.status},paused` : r.status)],
  ['owner', (r) => r.owner],
  ['lease', (r) => r.leaseExpiresAt],
  ['backlog', (r) => r.backlog],
  ['since', (r) => r.since],
];
const deadLetterColumns: Column<Answer>[] = [
  ['thread', (r) => r.thread],
  ['batch', (r) => r.batchId],
  ['messages', (r) => r.messages],
  ['dead at', (r) => r.deadAt],
  ['reason', (r) => r.reason],
];
const deadReplyColumns: Column<Answer>[] = [
  ['thread', (r) => r.thread],
  ['reply', (r) => r.id],
  ['attempts', (r) => r.attempts],
  ['dead at', (r) => r.deadAt],
  ['reason', (r) => r.reason],
];
const outcomeColumns = (key: string): Column<Answer>[] => [
  ['thread', (r) => r.thread],
  ...(key === 'thread' ? [] : [[key, (r: Answer) => r[key]] as Column<Answer>]),
  ['outcome', (r) => r.outcome],
  ['detail', (r) => r.detail],
];

/** `tributary admin`: the admin API from a terminal. */
export const adminCommand: Command = {
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        json: { type: 'boolean', default: false },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        'all-pages': { type: 'boolean', default: false },
        state: { type: 'string' },
        reason: { type: 'string' },
        everything: { type: 'boolean', default: false },
        'dry-run': { type: 'boolean', default: false },
        days: { type: 'string' },
        clear: { type: 'boolean', default: false },
      },
      true,
    );
    const [what, ...args] = positionals;
    if (what === undefined) throw new UsageError('say what to list or do');
    const limit = values.limit === undefined ? undefined : positiveInteger('limit', values.limit);
    const out = (value: unknown, table: () => string) =>
      process.stdout.write(`${values.json ? JSON.stringify(value, null, 2) : table()}\n`);
    try {
      const target = await adminTarget(process.env);
      const list = async (path: string, columns: Column<Answer>[], extra: Record<string, string> = {}) => {
        const query = new URLSearchParams(extra);
        if (limit) query.set('limit', String(limit));
        if (values.cursor) query.set('cursor', values.cursor);
        const pages: Answer[] = [];
        let page = await adminCall(target, `${path}?${query}`);
        pages.push(page);
        while (values['all-pages'] && page.next) {
          query.set('cursor', page.next);
          page = await adminCall(target, `${path}?${query}`);
          pages.push(page);
        }
        const items = pages.flatMap((p) => p.items);
        const last = pages.at(-1);
        out({ ...last, items }, () => {
          const groups = last.groups?.length
            ? `\n\nby reason:\n${formatTable<Answer>(
                [
                  ['count', (g) => g.count],
                  ['reason', (g) => g.reason],
                ],
                last.groups,
              )}`
            : '';
          const more = last.next ? `\n\nmore: --cursor ${last.next}` : '';
          return `${formatTable(columns, items)}${groups}${more}`;
        });
      };
      await run(target, what, args, values, list, out);
    } catch (error) {
      if (!(error instanceof AdminError)) throw error;
      process.stderr.write(`tributary admin ${what}: ${error.message}\n`);
      process.exitCode = error.exitCode;
    }
  },
};

/** Each route's days, today first, and the budget each route has now. */
function usageTable(answer: Answer): string {
  const budgets: Record<string, { tokens: number; source: string }> = answer.budgets;
  const budgetOf = (route: string) => {
    const budget = budgets[route];
    return budget ? `${budget.tokens} (${budget.source})` : '-';
  };
  const cost = (r: Answer) =>
    Object.entries(r.cost as Record<string, number>)
      .map(([currency, amount]) => `${amount.toFixed(4)} ${currency}`)
      .join(', ') || '-';
  const rows = formatTable<Answer>(
    [
      ['day', (r) => r.day],
      ['route', (r) => r.route],
      ['turns', (r) => r.turns],
      ['input', (r) => r.inputTokens],
      ['output', (r) => r.outputTokens],
      ['total', (r) => r.totalTokens],
      ['cost', cost],
      ['daily budget', (r) => budgetOf(r.route)],
    ],
    answer.items,
  );
  const idle = Object.keys(budgets).filter((route) => !answer.items.some((r: Answer) => r.route === route));
  return idle.length === 0
    ? rows
    : `${rows}

budgets of routes with no usage: ${idle.map((r) => `${r} ${budgetOf(r)}`).join(', ')}`;
}

type Out = (value: unknown, table: () => string) => void;
type List = (path: string, columns: Column<Answer>[], extra?: Record<string, string>) => Promise<void>;
type Values = {
  state?: string;
  reason?: string;
  cursor?: string;
  everything: boolean;
  'dry-run': boolean;
  days?: string;
  clear: boolean;
};

async function run(target: AdminTarget, what: string, args: string[], values: Values, list: List, out: Out) {
  const one = (name: string) => {
    if (args.length !== 1) throw new UsageError(`${what} takes one ${name}`);
    return encodeURIComponent(args[0]!);
  };
  const filterOf = () => {
    if (values.reason !== undefined) return { reason: values.reason };
    if (values.everything) return { all: true };
    throw new UsageError(`${what} needs --reason R or --everything`);
  };
  const bulk = async (path: string, body: Record<string, unknown>, key: string) => {
    const from = body.items === undefined && values.cursor ? { cursor: values.cursor } : {};
    const answer = await adminCall(target, path, 'POST', { ...body, ...from, dryRun: values['dry-run'] });
    const more = answer.next ? `; more may match: run it again with --cursor ${answer.next}` : '';
    out(answer, () =>
      answer.dryRun
        ? `matches ${answer.matched}${more}`
        : `${formatTable(outcomeColumns(key), answer.items)}\n\n${answer.action}: ${answer.result.done} done, ${answer.result.absent} already gone${more}`,
    );
  };
  const single = async (path: string) => {
    const answer = await adminCall(target, path, 'POST');
    out(answer, () => String(answer.result));
  };

  switch (what) {
    case 'overview': {
      const o = await adminCall(target, '/overview');
      return out(o, () =>
        [
          `threads   running ${o.threads.running}  runnable ${o.threads.runnable}  scheduled ${o.threads.scheduled}  paused ${o.threads.paused}  active ${o.threads.active}`,
          `backlog   ${o.backlog} messages`,
          `workers   ${o.workers.total} (${o.workers.taking} taking turns), ${o.workers.sessions} sessions`,
          `pools     ${o.pools.map((p: Answer) => `${p.pool}: ${p.workers} workers, ${p.runnable} waiting`).join('; ')}`,
          `dead      ${o.deadLetters.total} letters, ${o.deadReplies.total} replies`,
          ...o.deadLetters.byReason.map((g: Answer) => `  ${String(g.count).padStart(5)}  ${g.reason}`),
        ].join('\n'),
      );
    }
    case 'threads':
      return list('/threads', threadColumns, values.state ? { state: values.state } : {});
    case 'thread': {
      const report = await adminCall(target, `/threads/${one('thread')}`);
      return out(report, () =>
        [
          `${report.thread}: ${report.state.status}${report.state.paused ? ', paused' : ''}, backlog ${report.state.backlog}, owner ${report.state.owner ?? '-'}`,
          `session   ${report.session ? `${report.session.sessionId} on ${report.session.worker}` : '-'}`,
          '',
          formatTable<Answer>(
            [
              ['batch', (b) => b.batchId],
              ['status', (b) => b.status],
              ['messages', (b) => b.messages.length],
              ['ended', (b) => b.endedAt],
              ['reason', (b) => b.reason ?? b.stopReason],
            ],
            report.history,
          ),
          `\ndead letters ${report.deadLetters.length}, replies waiting ${report.pendingReplies.length}, dead replies ${report.deadReplies.length}`,
        ].join('\n'),
      );
    }
    case 'message': {
      const found = await adminCall(target, `/messages/${one('message id')}`);
      return out(found, () =>
        formatTable<Answer>(
          [
            ['thread', (r) => r.thread],
            ['status', (r) => (r.paused ? `${r.status},paused` : r.status)],
            ['batch', (r) => r.batch?.id],
            ['outcome', (r) => r.batch?.outcome ?? r.reason],
          ],
          found.items,
        ),
      );
    }
    case 'dead-letters':
      return list('/dead-letters', deadLetterColumns, values.reason ? { reason: values.reason } : {});
    case 'dead-replies':
      return list('/dead-replies', deadReplyColumns, values.reason ? { reason: values.reason } : {});
    case 'pools': {
      const pools = await adminCall(target, '/pools');
      return out(pools, () =>
        formatTable<Answer>(
          [
            ['pool', (p) => p.pool],
            ['workers', (p) => p.workers],
            ['waiting', (p) => p.runnable],
            ['running', (p) => p.running],
            ['', (p) => (p.workers === 0 && p.runnable > 0 ? 'NO WORKER: its threads wait' : '')],
          ],
          pools.items,
        ),
      );
    }
    case 'workers': {
      const workers = await adminCall(target, '/workers');
      return out(workers, () =>
        formatTable<Answer>(
          [
            ['worker', (w) => w.owner],
            ['pool', (w) => w.pool],
            ['state', (w) => w.state],
            ['running', (w) => w.running],
            ['sessions', (w) => w.sessions.length],
            ['agent pids', (w) => w.agentProcesses.map((p: Answer) => p.pid)],
          ],
          workers.items,
        ),
      );
    }
    case 'audit':
      return list('/audit', [
        ['at', (e) => e.at],
        ['who', (e) => e.actor],
        ['action', (e) => e.action],
        ['target', (e) => e.target],
        ['result', (e) => e.result],
      ]);
    case 'drain':
      return single(`/workers/${one('worker')}/drain`);
    case 'usage': {
      if (args.length > 0) throw new UsageError('usage takes no arguments: --days N');
      const days = values.days === undefined ? 7 : positiveInteger('days', values.days);
      const answer = await adminCall(target, `/usage?days=${days}`);
      return out(answer, () => usageTable(answer));
    }
    case 'budget': {
      const [route, tokens] = args;
      if (route === undefined || (tokens === undefined) !== values.clear || args.length > 2)
        throw new UsageError('budget takes a route and a number of tokens, or a route and --clear');
      const path = `/budgets/${encodeURIComponent(route)}`;
      const answer = values.clear
        ? await adminCall(target, path, 'DELETE')
        : await adminCall(target, path, 'PUT', { dailyTokens: positiveInteger('tokens', tokens!) });
      return out(answer, () => String(answer.result));
    }
    case 'redrive-letter':
    case 'discard-letter':
    case 'redrive-reply':
    case 'discard-reply': {
      if (args.length !== 2) throw new UsageError(`${what} takes a thread and an id`);
      const [action, kind] = what.split('-') as [string, string];
      const path = `/threads/${encodeURIComponent(args[0]!)}/dead-${kind}s/${encodeURIComponent(args[1]!)}/${action}`;
      return single(path);
    }
    case 'redrive-letters':
    case 'discard-letters':
    case 'redrive-replies':
    case 'discard-replies': {
      if (args.length > 0)
        throw new UsageError(`${what} takes a filter, not ids: --reason R or --everything`);
      const [action, kind] = what.split('-') as [string, string];
      const path = kind === 'letters' ? '/dead-letters/actions' : '/dead-replies/actions';
      return bulk(path, { action, ...filterOf() }, kind === 'letters' ? 'batchId' : 'id');
    }
    default: {
      if (!THREAD_ACTIONS.includes(what)) throw new UsageError(`unknown admin command '${what}'`);
      if (values.state !== undefined) {
        if (args.length > 0) throw new UsageError(`${what} takes threads or --state, not both`);
        return bulk('/threads/actions', { action: what, state: values.state }, 'thread');
      }
      if (args.length === 0) throw new UsageError(`${what} needs threads or --state S`);
      if (args.length === 1) return single(`/threads/${one('thread')}/${what}`);
      return bulk('/threads/actions', { action: what, items: args.map((thread) => ({ thread })) }, 'thread');
    }
  }
}
