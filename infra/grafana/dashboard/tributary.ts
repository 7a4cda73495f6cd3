// The Tributary dashboard, as code. `npx tsx infra/grafana/generate-dashboard.ts` writes it to
// infra/grafana/dashboards/tributary.json, which Grafana provisions; a test fails when that file is
// not this code's current output.
import {
  DashboardBuilder,
  DashboardCursorSync,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  RowBuilder,
  VariableRefresh,
  VariableSort,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DATASOURCE, type PanelSpec, timeseries } from './panels.js';
import { fleet, increaseBy, PLATFORM, quantile, rateBy, recorded, scope } from './queries.js';

/** A multi-value variable of the values label `name` takes on the series `from` (All: any, or none). */
function labelVariable(name: string, label: string, from: string): QueryVariableBuilder {
  return new QueryVariableBuilder(name)
    .label(label)
    .datasource(DATASOURCE)
    .query({ query: `label_values(${from}, ${name})`, refId: name })
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc)
    .includeAll(true)
    .multi(true)
    .allValue('.*')
    .current({ text: ['All'], value: ['$__all'] });
}

type Row = readonly [title: string, panels: readonly PanelSpec[]];

const MISSION: Row = [
  'Mission: what one dispatched prompt carries',
  [
    {
      title: 'Envelope tokens per event',
      description: "Tokens of one event's <sender_context> envelope, per dispatched event.",
      unit: 'short',
      axis: 'tokens',
      span: 6,
      queries: [
        [quantile(0.5, 'platform', 'tributary_context_tokens_per_event', PLATFORM), 'p50 {{platform}}'],
        [quantile(0.95, 'platform', 'tributary_context_tokens_per_event', PLATFORM), 'p95 {{platform}}'],
      ],
    },
    {
      title: 'p95 batch size (1 h)',
      description: 'Events per dispatched prompt at the 95th percentile over the last hour (recording rule).',
      unit: 'short',
      axis: 'events per prompt',
      span: 6,
      queries: [[recorded('tributary:p95_batch_size', PLATFORM), '{{platform}}']],
    },
    {
      title: 'Envelope tokens per dispatch',
      description:
        'p95 batch size × mean envelope tokens: what repeating the sender context costs a prompt. TributaryContextPerDispatchHigh fires at 1000.',
      unit: 'short',
      axis: 'tokens per prompt',
      span: 6,
      queries: [
        [
          `${recorded('tributary:p95_batch_size', PLATFORM)} * on (namespace, platform) ${recorded('tributary:context_tokens_per_event:mean1h', PLATFORM)}`,
          '{{platform}}',
        ],
      ],
    },
    {
      title: 'Packed blocks per prompt',
      description: 'ACP ContentBlocks in one dispatched prompt, 95th percentile.',
      unit: 'short',
      axis: 'blocks per prompt',
      span: 6,
      queries: [[quantile(0.95, 'platform', 'tributary_packed_block_count', PLATFORM), 'p95 {{platform}}']],
    },
  ],
];

const TURNS: Row = [
  'Turns',
  [
    {
      title: 'Turn duration by stop reason',
      description: 'How long agent turns take, by how they ended.',
      unit: 's',
      axis: 'duration',
      queries: [
        [quantile(0.5, 'stop_reason', 'tributary_turn_duration_seconds'), 'p50 {{stop_reason}}'],
        [quantile(0.95, 'stop_reason', 'tributary_turn_duration_seconds'), 'p95 {{stop_reason}}'],
      ],
    },
    {
      title: 'Turns by outcome',
      description: 'Turns ended per second, by outcome.',
      unit: 'ops',
      axis: 'turns per second',
      queries: [[rateBy('outcome', 'tributary_turns_total'), '{{outcome}}']],
    },
    {
      title: 'Queue wait',
      description:
        'From acceptance at ingress to dispatch to the agent, per event: near 0 for an idle thread (I1).',
      unit: 's',
      axis: 'wait',
      queries: [
        [quantile(0.5, 'platform', 'tributary_queue_wait_seconds', PLATFORM), 'p50 {{platform}}'],
        [quantile(0.95, 'platform', 'tributary_queue_wait_seconds', PLATFORM), 'p95 {{platform}}'],
      ],
    },
  ],
];

const QUEUE: Row = [
  'Queue and workers',
  [
    {
      title: 'Backlog',
      description: 'Messages in the inboxes of runnable and running threads (fleet-wide, read from Redis).',
      unit: 'short',
      axis: 'messages',
      span: 6,
      queries: [[fleet('tributary_backlog_messages'), 'backlog']],
    },
    {
      title: 'Runnable and running threads',
      description: 'Threads waiting for a worker (the autoscaling signal) and threads whose turn runs.',
      unit: 'short',
      axis: 'threads',
      span: 6,
      queries: [
        [fleet('tributary_threads_runnable'), 'runnable'],
        [fleet('tributary_threads_running'), 'running'],
      ],
    },
    {
      title: 'Doorbell jobs by state',
      description:
        "BullMQ doorbell jobs by state, and doorbells waiting in their route's line in front of the queue (fleet-wide).",
      unit: 'short',
      axis: 'jobs',
      span: 6,
      queries: [
        [fleet('tributary_bullmq_jobs', 'state'), '{{state}}'],
        [fleet('tributary_doorbells_lined'), 'lined'],
      ],
    },
    {
      title: 'Live ACP sessions and consuming workers',
      description: 'Agent sessions held open across workers, and workers whose doorbell canary is consumed.',
      unit: 'short',
      axis: 'count',
      span: 6,
      queries: [
        [`sum (tributary_acp_sessions_live${scope()})`, 'live sessions'],
        [`sum (tributary_doorbell_consumer_up${scope()})`, 'consuming workers'],
      ],
    },
  ],
];

const INGRESS: Row = [
  'Ingress',
  [
    {
      title: 'Ingress requests by outcome',
      description: 'Webhook requests per second by outcome.',
      unit: 'reqps',
      axis: 'requests per second',
      queries: [[rateBy('outcome', 'tributary_ingress_requests_total', PLATFORM), '{{outcome}}']],
    },
    {
      title: 'Acknowledgement time',
      description: "Time ingress takes to answer a webhook. Slack's deadline is 3 s.",
      unit: 's',
      axis: 'duration',
      queries: [
        [
          quantile(0.5, 'platform', 'tributary_ingress_request_duration_seconds', PLATFORM),
          'p50 {{platform}}',
        ],
        [
          quantile(0.99, 'platform', 'tributary_ingress_request_duration_seconds', PLATFORM),
          'p99 {{platform}}',
        ],
      ],
    },
    {
      title: 'Refusals and duplicates',
      description: 'Messages refused before acknowledgement (backpressure, gates) and duplicates absorbed.',
      unit: 'reqps',
      axis: 'per second',
      queries: [
        [rateBy('platform, reason', 'tributary_refusals_total', PLATFORM), 'refused {{platform}} {{reason}}'],
        [rateBy('platform', 'tributary_duplicates_total', PLATFORM), 'duplicate {{platform}}'],
      ],
    },
    {
      title: 'Redis down (ingress)',
      description:
        'Ingress instances refusing webhooks (503) because Redis does not answer, and outages begun.',
      unit: 'short',
      axis: 'instances / outages',
      queries: [
        [`sum (tributary_ingress_redis_down${scope()})`, 'instances with Redis down'],
        [increaseBy('', 'tributary_ingress_redis_outages_total'), 'outages begun'],
      ],
    },
  ],
];

const REPLIES: Row = [
  'Replies and agents',
  [
    {
      title: 'Reply deliveries by outcome',
      description: 'Committed replies and notices delivered, retried later, or given up (dead) per second.',
      unit: 'ops',
      axis: 'deliveries per second',
      queries: [[rateBy('outcome', 'tributary_reply_deliveries_total'), '{{outcome}}']],
    },
    {
      title: 'Dead replies',
      description:
        'Replies given up after REPLY_RETRY_HORIZON_MS: the agent answered but the user did not see it. Re-drive from the admin API.',
      unit: 'short',
      axis: 'replies',
      queries: [[increaseBy('', 'tributary_reply_deliveries_total', 'outcome="dead"'), 'dead replies']],
    },
    {
      title: 'Agent start failures and restarts',
      description:
        'Agent processes that failed to start or initialize, agents restarted, and workers taking no new threads because their agent keeps failing to start (their batches wait, uncounted).',
      unit: 'short',
      axis: 'events',
      queries: [
        [increaseBy('', 'tributary_agent_start_failures_total'), 'start failures'],
        [increaseBy('', 'tributary_agent_restarts_total'), 'restarts'],
        [`sum (tributary_agent_starts_failing${scope()})`, 'workers holding off threads'],
      ],
    },
    {
      title: 'Agent start wait',
      description:
        'How long agent starts wait for their turn (each worker starts at most AGENT_START_CONCURRENCY at once), and starts waiting now.',
      unit: 's',
      axis: 'wait',
      queries: [
        [quantile(0.99, '', 'tributary_agent_start_wait_seconds'), 'p99 wait'],
        [quantile(0.5, '', 'tributary_agent_start_wait_seconds'), 'p50 wait'],
      ],
    },
    {
      title: 'Warm spares',
      description:
        'Agents kept started for new threads: how many the workers aim at (more while new threads find none ready, within AGENT_WARM_SPARES_MEMORY_MB), how many are ready, and new threads that found none and waited for a start.',
      unit: 'short',
      axis: 'agents',
      queries: [
        [`sum (tributary_agent_spares_target${scope()})`, 'aimed at'],
        [`sum (tributary_agent_spares_ready${scope()})`, 'ready'],
        [increaseBy('', 'tributary_agent_spare_misses_total'), 'threads that found none'],
      ],
    },
    {
      title: 'Workspace disk',
      description:
        "What the threads' workspaces and agent homes took after their last turns, and what is left free on their volume (TributaryWorkspaceVolumeFilling fires at 10% free).",
      unit: 'bytes',
      axis: 'bytes',
      queries: [
        [fleet('tributary_workspace_bytes'), 'workspaces'],
        [`min (tributary_workspace_volume_free_bytes${scope()})`, 'volume free'],
      ],
    },
    {
      title: 'Workspace budget and expiry',
      description:
        'Turns that ended over AGENT_WORKSPACE_BUDGET_MB (their threads wait until their files are cleaned), rooms deleted because their thread expired, and files of a thread that could not be moved into its room (parked beside it; the log names them).',
      unit: 'short',
      axis: 'events',
      queries: [
        [increaseBy('', 'tributary_workspace_over_budget_turns_total'), 'turns over budget'],
        [increaseBy('', 'tributary_workspaces_expired_total'), 'rooms expired'],
        [increaseBy('', 'tributary_workspace_files_stuck_total'), 'files left parked'],
      ],
    },
  ],
];

const ERRORS: Row = [
  'Errors and recoveries',
  [
    {
      title: 'Failures',
      description: 'Dead-lettered batches, lease expiries, fence rejections and failed scrape-time reads.',
      unit: 'short',
      axis: 'events',
      queries: [
        [increaseBy('', 'tributary_dead_lettered_batches_total'), 'dead-lettered batches'],
        [increaseBy('', 'tributary_lease_expiries_total'), 'lease expiries'],
        [increaseBy('', 'tributary_fence_rejections_total'), 'fence rejections'],
        [increaseBy('', 'tributary_scrape_read_failures_total'), 'failed gauge reads'],
      ],
    },
    {
      title: 'Recoveries',
      description: 'Threads revived by the sweeper, agent restarts, doorbells passed on.',
      unit: 'short',
      axis: 'events',
      queries: [
        [increaseBy('reason', 'tributary_sweeper_revivals_total'), 'revived: {{reason}}'],
        [increaseBy('', 'tributary_doorbells_passed_on_total'), 'doorbells passed on'],
      ],
    },
    {
      title: 'Platform API calls not 2xx',
      description: 'Calls to the platforms that did not succeed, by method and status.',
      unit: 'reqps',
      axis: 'calls per second',
      queries: [
        [
          rateBy('platform, method, status', 'tributary_platform_api_calls_total', PLATFORM, 'status!~"2.."'),
          '{{platform}} {{method}} {{status}}',
        ],
      ],
    },
    {
      title: 'Attachments not fetched',
      description: 'Attachment downloads that failed or were refused, by outcome.',
      unit: 'ops',
      axis: 'per second',
      queries: [
        [
          rateBy('platform, outcome', 'tributary_attachment_fetches_total', PLATFORM, 'outcome!="fetched"'),
          '{{platform}} {{outcome}}',
        ],
      ],
    },
  ],
];

const PROCESSES: Row = [
  'Processes',
  [
    {
      title: 'Process CPU',
      description: 'CPU time per second of each ingress and worker process (1 = one core).',
      unit: 'percentunit',
      axis: 'cores',
      queries: [[rateBy('job, instance', 'tributary_process_cpu_seconds_total'), '{{job}} {{instance}}']],
    },
    {
      title: 'Process memory',
      description: "Resident memory of each process (the worker's agents run in processes of their own).",
      unit: 'bytes',
      axis: 'resident memory',
      queries: [
        [
          `sum by (job, instance) (tributary_process_resident_memory_bytes${scope()})`,
          'rss {{job}} {{instance}}',
        ],
        [
          `sum by (job, instance) (tributary_nodejs_heap_size_used_bytes${scope()})`,
          'heap {{job}} {{instance}}',
        ],
      ],
    },
    {
      title: 'Event-loop lag',
      description: 'p99 event-loop delay of each process: above ~100 ms, webhooks and lease renewals wait.',
      unit: 's',
      axis: 'lag',
      queries: [
        [
          `max by (job, instance) (tributary_nodejs_eventloop_lag_p99_seconds${scope()})`,
          'p99 {{job}} {{instance}}',
        ],
      ],
    },
  ],
];

const ROUTES: Row = [
  'Routes and pools: where threads run and what they spend',
  [
    {
      title: 'Threads per worker pool',
      description:
        "Threads waiting for a worker of their route's pool and threads running, per pool (WORKER_POOL): each pool's autoscaling signal.",
      unit: 'short',
      axis: 'threads',
      span: 12,
      queries: [
        [fleet('tributary_pool_threads_runnable', 'pool'), 'waiting {{pool}}'],
        [fleet('tributary_pool_threads_running', 'pool'), 'running {{pool}}'],
      ],
    },
    {
      title: 'Workers per pool',
      description:
        'Workers of each pool taking turns, and messages accepted for a pool with none (kept; their thread is told; TributaryPoolWithoutWorkers fires once threads wait 2 minutes).',
      unit: 'short',
      axis: 'workers, messages',
      span: 12,
      queries: [
        [fleet('tributary_pool_workers', 'pool'), 'workers {{pool}}'],
        [increaseBy('pool', 'tributary_pool_unserved_messages_total'), 'unserved messages {{pool}}'],
      ],
    },
    {
      title: 'Tokens per route',
      description:
        "Tokens each route's turns spent, as their agents reported them (the total its daily budget counts). `default` is the environment's route; `tributary admin usage` gives the same per day.",
      unit: 'short',
      axis: 'tokens',
      span: 8,
      queries: [[increaseBy('route', 'tributary_route_tokens_total'), '{{route}}']],
    },
    {
      title: 'Cost per route',
      description: "What each route's turns cost, where the agent reports its session's cost.",
      unit: 'short',
      axis: 'cost',
      span: 8,
      queries: [[increaseBy('route, currency', 'tributary_agent_cost_total'), '{{route}} {{currency}}']],
    },
    {
      title: 'Budget waits and unreported usage',
      description:
        'Turns that waited because their route spent its daily token budget (TributaryRouteBudgetSpent fires; raise it with `tributary admin budget ROUTE TOKENS`), and turns whose agent reported no usage (they count nothing against a budget).',
      unit: 'short',
      axis: 'turns',
      span: 8,
      queries: [
        [increaseBy('route', 'tributary_route_budget_waits_total'), 'waited {{route}}'],
        [increaseBy('route', 'tributary_turns_without_usage_total'), 'unreported {{route}}'],
      ],
    },
  ],
];

export const ROWS: readonly Row[] = [MISSION, TURNS, QUEUE, INGRESS, REPLIES, ROUTES, ERRORS, PROCESSES];

export function tributaryDashboard(): DashboardBuilder {
  const dashboard = new DashboardBuilder('Tributary')
    .uid('tributary')
    .tags(['tributary'])
    .timezone('utc')
    .editable()
    .tooltip(DashboardCursorSync.Crosshair)
    .time({ from: 'now-6h', to: 'now' })
    .refresh('30s')
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(labelVariable('namespace', 'Namespace', 'tributary_build_info'))
    .withVariable(labelVariable('job', 'Job', `tributary_build_info{namespace=~"$namespace"}`))
    .withVariable(labelVariable('platform', 'Platform', `tributary_ingress_requests_total${scope()}`));
  for (const [title, panels] of ROWS) {
    dashboard.withRow(new RowBuilder(title));
    for (const panel of panels) dashboard.withPanel(timeseries(panel));
  }
  return dashboard;
}
