import { counter, gauge, histogram } from './metric-spec.js';

// Bucket layouts. Each covers the range its metric lives in with enough resolution where the dashboards
// and alerts read quantiles.

/** A `<sender_context>` envelope is a short JSON object: tens to a few hundred tokens. */
const ENVELOPE_TOKEN_BUCKETS = [20, 30, 40, 50, 60, 70, 80, 90, 100, 120, 150, 200, 250, 300, 400];
/** Events per prompt: fine steps up to the default cap of 10, coarser up to multi-bot caps of 50. */
const BATCH_SIZE_BUCKETS = [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50];
/** At least one block per event (the envelope), more with prompts and attachments. */
const BLOCK_COUNT_BUCKETS = [1, 2, 3, 4, 6, 8, 10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300];
/** Milliseconds when the thread is idle (I1), up to many minutes behind a long turn. */
const QUEUE_WAIT_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800,
];
/** Agent turns: from a quick answer to the turn timeout. */
const TURN_DURATION_BUCKETS = [0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 900, 1200, 1800];
/** An agent start's wait for its turn: none on a quiet worker, seconds behind a herd of new threads. */
const START_WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];
/** A write's wait for its slot: none in a quiet channel, a second per write queued ahead of it. */
const PACE_WAIT_BUCKETS = [0, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120];
/** A person's answer: seconds when they are there, up to the time-out (5 min by default). */
const APPROVAL_WAIT_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800];
/** Webhook acknowledgement: boundaries at 1 s (the slow-ack alert) and 3 s (Slack's deadline). */
const INGRESS_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10];

// Gauges read from Redis at scrape time describe the whole fleet, so every process that reports them
// reports the same value: aggregate them with max(), not sum().
const FLEET_WIDE = 'Fleet-wide, read at scrape time; aggregate with max().';

/** Every metric Tributary exports, besides prom-client's default process metrics. */
export const CATALOGUE = {
  contextTokensPerEvent: histogram(
    'tributary_context_tokens_per_event',
    "Tokens of one event's <sender_context> envelope, observed per dispatched or steered event.",
    ['platform'],
    ENVELOPE_TOKEN_BUCKETS,
  ),
  batchSize: histogram(
    'tributary_batch_size',
    'Arrival events one turn carried: those packed into its prompt and those steered into it.',
    ['platform'],
    BATCH_SIZE_BUCKETS,
  ),
  packedBlockCount: histogram(
    'tributary_packed_block_count',
    'ACP ContentBlocks in one dispatched prompt.',
    ['platform'],
    BLOCK_COUNT_BUCKETS,
  ),
  queueWaitSeconds: histogram(
    'tributary_queue_wait_seconds',
    'Time from acceptance at ingress to dispatch to the agent, per event.',
    ['platform'],
    QUEUE_WAIT_BUCKETS,
  ),
  turnDurationSeconds: histogram(
    'tributary_turn_duration_seconds',
    'Duration of one agent turn, by how it ended.',
    ['stop_reason'],
    TURN_DURATION_BUCKETS,
  ),
  ingressRequestsTotal: counter('tributary_ingress_requests_total', 'Webhook requests by outcome.', [
    'platform',
    'outcome',
  ]),
  ingressRequestDurationSeconds: histogram(
    'tributary_ingress_request_duration_seconds',
    'Time ingress took to answer a webhook request.',
    ['platform'],
    INGRESS_DURATION_BUCKETS,
  ),
  duplicatesTotal: counter(
    'tributary_duplicates_total',
    'Webhook deliveries absorbed as duplicates of an accepted message.',
    ['platform'],
  ),
  refusalsTotal: counter(
    'tributary_refusals_total',
    'Messages refused before acknowledgement (the platform retries them).',
    ['platform', 'reason'],
  ),
  ingressRedisOutagesTotal: counter(
    'tributary_ingress_redis_outages_total',
    'Redis outages ingress saw begin; each is logged once as it starts and once as it ends.',
  ),
  ingressRedisDown: gauge(
    'tributary_ingress_redis_down',
    '1 while ingress refuses requests because Redis does not answer, else 0.',
  ),
  leaseExpiriesTotal: counter(
    'tributary_lease_expiries_total',
    'Thread leases that expired while their owner held them.',
  ),
  fenceRejectionsTotal: counter(
    'tributary_fence_rejections_total',
    'Renewals or commits refused because another claim superseded the fencing token.',
  ),
  sweeperRevivalsTotal: counter(
    'tributary_sweeper_revivals_total',
    'Threads the sweeper handed back to the doorbell queue.',
    ['reason'],
  ),
  takeoversHeldBackTotal: counter(
    'tributary_takeovers_held_back_total',
    "Threads a sweep did not take over although their lease expired, because their dead worker's warden reports agent processes it could not kill; counted at every sweep until someone ends them.",
  ),
  doorbellsPassedOnTotal: counter(
    'tributary_doorbells_passed_on_total',
    "Doorbells handed to a thread's last worker that it passed on to the shared queue, busy for the whole affinity wait: the thread runs elsewhere, on a new agent session.",
  ),
  replyDeliveriesTotal: counter(
    'tributary_reply_deliveries_total',
    'Attempts to deliver a committed reply or notice: delivered, retried later, or dead (given up after the retry horizon).',
    ['outcome'],
  ),
  repliesCutTotal: counter(
    'tributary_replies_cut_total',
    'Replies longer than REPLY_MAX_PARTS platform messages, cut there with a notice; the batch history keeps them whole.',
    ['platform'],
  ),
  deadLetteredBatchesTotal: counter(
    'tributary_dead_lettered_batches_total',
    'Batches moved to the dead letters after failing for good.',
  ),
  attachmentFetchesTotal: counter(
    'tributary_attachment_fetches_total',
    "Attachments a worker tried to pass to the agent for a turn: fetched, or not (too_large, too_many, turn_full: past the prompt's share for files, busy: the worker's file budget held by other turns, timed_out: past the turn's download time, refused, failed, unsupported: downloaded but neither text nor media); one not passed reaches the agent as a link with a note.",
    ['platform', 'outcome'],
  ),
  platformApiCallsTotal: counter(
    'tributary_platform_api_calls_total',
    'Calls to platform APIs; status is the HTTP status code, 0 when no answer came.',
    ['platform', 'method', 'status'],
  ),
  platformStreamingRefusalsTotal: counter(
    'tributary_platform_streaming_refusals_total',
    "Clients whose platform refused its own reply streaming (Slack's chat.startStream in a workspace without it); their replies stream by edits from then on.",
    ['platform'],
  ),
  platformPlainFallbacksTotal: counter(
    'tributary_platform_plain_fallbacks_total',
    'Messages the platform refused as formatted (Telegram: an entity it cannot parse) that were posted again as plain text.',
    ['platform', 'method'],
  ),
  platformPaceWaitSeconds: histogram(
    'tributary_platform_pace_wait_seconds',
    "How long a post or edit waited for its slot in the fleet's shared budget of its channel and bot (the platform's published limits), per write.",
    ['platform'],
    PACE_WAIT_BUCKETS,
  ),
  approvalRequestsTotal: counter(
    'tributary_approval_requests_total',
    "Permission requests put to the people of a thread (AGENT_PERMISSION_POLICY or a rule of 'ask').",
    ['platform'],
  ),
  approvalOutcomesTotal: counter(
    'tributary_approval_outcomes_total',
    'How permission requests put to a thread ended: answered, timed_out (the fallback answered), cancelled (with the turn) or unavailable (could not be asked; the fallback answered).',
    ['platform', 'outcome'],
  ),
  approvalWaitSeconds: histogram(
    'tributary_approval_wait_seconds',
    'How long a permission request put to a thread waited until it was settled.',
    ['platform'],
    APPROVAL_WAIT_BUCKETS,
  ),
  approvalClicksTotal: counter(
    'tributary_approval_clicks_total',
    "Clicks on the buttons of permission requests, by what ingress made of them: answered, refused (not the starter or an approver), unchecked (the clicker's groups could not be looked up), settled (before), late (after the turn), gone.",
    ['platform', 'result'],
  ),
  routeTableReloadsTotal: counter(
    'tributary_route_table_reloads_total',
    'Changes of the route file (ROUTES_FILE) read by ingress: applied (in force for new threads) or refused (the table in force stays; the log names the line).',
    ['result'],
  ),
  poolUnservedMessagesTotal: counter(
    'tributary_pool_unserved_messages_total',
    'Messages accepted for a worker pool that had no worker taking turns: kept, their thread told (once an hour), waiting for one to start.',
    ['pool'],
  ),
  routeTokensTotal: counter(
    'tributary_route_tokens_total',
    "Tokens the agents of a route's threads spent (each turn's totalTokens, as its agent reported it): what the route's daily budget counts. `route` is a route table name, `default` or `unread`.",
    ['route'],
  ),
  agentTokensTotal: counter(
    'tributary_agent_tokens_total',
    'The parts of the tokens a route spent, as its agents reported them: input, output, thought, cached_read, cached_write (an agent may report only some).',
    ['route', 'kind'],
  ),
  agentCostTotal: counter(
    'tributary_agent_cost_total',
    "What a route's turns cost, where the agent reports its session's cost; `currency` as the agent names it (ISO 4217), anything else `other`.",
    ['route', 'currency'],
  ),
  turnsWithoutUsageTotal: counter(
    'tributary_turns_without_usage_total',
    "Turns whose agent reported no token usage with the turn's end: they count nothing against the route's budget.",
    ['route'],
  ),
  routeBudgetWaitsTotal: counter(
    'tributary_route_budget_waits_total',
    "Turns that did not start because their route spent its daily token budget; the thread's messages wait, kept, and the thread is told once per batch.",
    ['route'],
  ),
  routeBudgetUncheckedTotal: counter(
    'tributary_route_budget_unchecked_total',
    "Turns that ran without their route's token budget checked: it could not be read from Redis (the log says why).",
    ['route'],
  ),
  routeTurnWaitsTotal: counter(
    'tributary_route_turn_waits_total',
    "Turns that did not start because their route's turns across the fleet were all taken (maxConcurrentTurns); the batch waits in the route's line and starts as a slot is freed.",
    ['route'],
  ),
  routeLineStallsTotal: counter(
    'tributary_route_line_stalls_total',
    "Doorbells taken whose route's line could not be moved up (docs/adr/0063): that route's next doorbells enter the queue when the sweeper finds their threads waiting; the log says why.",
  ),
  routeTurnLimitFailuresTotal: counter(
    'tributary_route_turn_limit_failures_total',
    "Route turn slots that could not be taken (`what`=take: the turn ran unchecked), renewed (`what`=renew: it lapses if this goes on) or freed (`what`=free: it lapses on its own, the line's next thread starts at its put-back delay); the log says why.",
    ['what'],
  ),
  poolWatchFailuresTotal: counter(
    'tributary_pool_watch_failures_total',
    "Accepted messages whose pool's workers could not be checked (`what`=check), or whose thread could not be told its pool has none (`what`=notice); the log says why.",
    ['what'],
  ),
  routeUsageUnrecordedTotal: counter(
    'tributary_route_usage_unrecorded_total',
    "Turns whose usage could not be added to the route's day in Redis (the log says why): the budget undercounts them; the metrics above still count them.",
  ),
  agentStartFailuresTotal: counter(
    'tributary_agent_start_failures_total',
    'Agent processes that could not be started or did not complete initialize.',
  ),
  agentProcessStartsTotal: counter(
    'tributary_agent_process_starts_total',
    'Agent processes started (spawned and initialized). Per turn, near 0 when sessions are reused; each start costs a real agent seconds and a re-read of the conversation.',
  ),
  agentRestartsTotal: counter(
    'tributary_agent_restarts_total',
    'Agent processes that ended without the worker stopping them (crash, exit, kill after a cancel timeout).',
  ),
  agentTurnRepairsTotal: counter(
    'tributary_agent_turn_repairs_total',
    'Turns run again in a fresh session because the agent ended the prompt at once with nothing right after a cancel (its answers would otherwise lag a turn).',
  ),
  workerRevocationsTotal: counter(
    'tributary_worker_revocations_total',
    "Times this worker's agent warden killed its agents and withdrew its presence because the worker stopped answering or Redis could not confirm it; its threads went to other workers.",
  ),
  turnsTotal: counter('tributary_turns_total', 'Dispatched batches by what became of them.', ['outcome']),
  drainUnsettledTurnsTotal: counter(
    'tributary_drain_unsettled_turns_total',
    "Turns whose handler had not ended when an operator's drain stopped waiting for it after aborting it; the worker reported drained with their threads still listed as running (the threads themselves were handed back).",
  ),
  steeredEventsTotal: counter(
    'tributary_steered_events_total',
    'Arrival events sent into a running turn (steering), each committed with that turn.',
    ['platform'],
  ),
  steerRefusalsTotal: counter(
    'tributary_steer_refusals_total',
    'Steers that did not join the running turn, by reason; their messages wait for the next turn.',
    ['reason'],
  ),
  scrapeReadFailuresTotal: counter(
    'tributary_scrape_read_failures_total',
    'Scrape-time gauge reads that failed; their gauges showed NaN or no series for that scrape.',
  ),
  backlogMessages: gauge(
    'tributary_backlog_messages',
    `Accepted messages not yet committed, across all threads. ${FLEET_WIDE}`,
  ),
  threadsRunnable: gauge(
    'tributary_threads_runnable',
    `Threads with work waiting for a worker: the autoscaling signal. ${FLEET_WIDE}`,
  ),
  threadsRunning: gauge('tributary_threads_running', `Threads with a turn in progress. ${FLEET_WIDE}`),
  poolThreadsRunnable: gauge(
    'tributary_pool_threads_runnable',
    `Threads waiting for a worker of their route's pool (WORKER_POOL): each pool's autoscaling signal. ${FLEET_WIDE}`,
    ['pool'],
  ),
  poolThreadsRunning: gauge(
    'tributary_pool_threads_running',
    `Threads of each worker pool with a turn in progress. ${FLEET_WIDE}`,
    ['pool'],
  ),
  poolWorkers: gauge(
    'tributary_pool_workers',
    `Workers of each pool taking turns now; 0 for a pool whose threads have no worker (TributaryPoolWithoutWorkers). ${FLEET_WIDE}`,
    ['pool'],
  ),
  acpSessionsLive: gauge('tributary_acp_sessions_live', 'ACP sessions open in this process.'),
  agentProcesses: gauge(
    'tributary_agent_processes',
    'Agent processes of this worker: holding a session, kept as warm spares, starting or stopping.',
  ),
  agentStartWaitSeconds: histogram(
    'tributary_agent_start_wait_seconds',
    "How long an agent start (a thread's or a warm spare's) waited for its turn: a worker starts at most AGENT_START_CONCURRENCY at once.",
    [],
    START_WAIT_BUCKETS,
  ),
  agentStartsWaiting: gauge(
    'tributary_agent_starts_waiting',
    'Agent starts waiting for their turn now (AGENT_START_CONCURRENCY).',
  ),
  agentStartsFailing: gauge(
    'tributary_agent_starts_failing',
    '1 while this worker takes no new threads because its agent failed to start several times in a row (it tries a start on its own until one works), else 0.',
  ),
  agentSparesReady: gauge(
    'tributary_agent_spares_ready',
    'Warm spare agent processes ready to take a new thread without waiting for a start.',
  ),
  agentSparesTarget: gauge(
    'tributary_agent_spares_target',
    'Warm spares this worker aims to keep: AGENT_WARM_SPARES at least, one more for each new thread that found none ready, as far as AGENT_WARM_SPARES_MEMORY_MB pays for; one fewer after each minute they all went unused.',
  ),
  agentSpareBytes: gauge(
    'tributary_agent_spare_bytes',
    'What one warm spare costs: the PSS in bytes of an idle agent process and all it started, as last measured (0 until one was).',
  ),
  agentSpareMissesTotal: counter(
    'tributary_agent_spare_misses_total',
    'New threads (or threads whose session had been dropped) that found no warm spare ready and waited for an agent to start.',
  ),
  workspaceBytes: gauge(
    'tributary_workspace_bytes',
    "Bytes the threads' workspaces and agent homes under AGENT_WORKSPACES took at the end of their last turns, summed by this worker's latest sweep of the root. The root is shared, so every worker reports the same: aggregate with max().",
  ),
  workspaceVolumeFreeBytes: gauge(
    'tributary_workspace_volume_free_bytes',
    'Bytes free (to the worker, not root) on the volume holding AGENT_WORKSPACES, read at scrape time.',
  ),
  workspaceVolumeSizeBytes: gauge(
    'tributary_workspace_volume_size_bytes',
    'Size in bytes of the volume holding AGENT_WORKSPACES, read at scrape time.',
  ),
  workspaceOverBudgetTurnsTotal: counter(
    'tributary_workspace_over_budget_turns_total',
    "Turns that ended with their thread's workspace and agent home over AGENT_WORKSPACE_BUDGET_MB; the thread was told, and its next turns wait until the files are cleaned.",
  ),
  workspaceFilesStuckTotal: counter(
    'tributary_workspace_files_stuck_total',
    "Files of a thread that could not be moved into its room (a spare's taken over, an interrupted move, a room given back); they stay parked beside it and the worker's log names them.",
  ),
  workspacesExpiredTotal: counter(
    'tributary_workspaces_expired_total',
    "Threads' workspaces and agent homes deleted because their thread expired (THREAD_IDLE_TTL_MS).",
  ),
  deadItems: gauge(
    'tributary_dead_items',
    `Dead letters (kind letters) and dead replies (kind replies) kept for an operator to re-drive. ${FLEET_WIDE}`,
    ['kind'],
  ),
  deadEvictions: gauge(
    'tributary_dead_evictions',
    `Dead letters and dead replies dropped unhandled, by kind and cause: ttl (older than DEAD_TTL_MS) or cap (past DEAD_MAX_PER_THREAD or a bucket's share of DEAD_MAX). A running total kept in Redis with the evictions: read it with increase(). ${FLEET_WIDE}`,
    ['kind', 'cause'],
  ),
  bullmqJobs: gauge('tributary_bullmq_jobs', `Doorbell jobs by BullMQ state. ${FLEET_WIDE}`, ['state']),
  doorbellsLined: gauge(
    'tributary_doorbells_lined',
    `Doorbells waiting in their route's line in front of the doorbell queue (docs/adr/0063). ${FLEET_WIDE}`,
  ),
  doorbellConsumerUp: gauge(
    'tributary_doorbell_consumer_up',
    "1 when this worker's doorbell canary was consumed recently, else 0.",
  ),
  buildInfo: gauge('tributary_build_info', 'Always 1; the version label names the running build.', [
    'version',
  ]),
} as const;

export type MetricKey = keyof typeof CATALOGUE;

/** The names of every metric in the catalogue, for dashboards, rules and tests to check against. */
export const METRIC_NAMES: readonly string[] = Object.values(CATALOGUE).map((spec) => spec.name);
