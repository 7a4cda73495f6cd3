import { Counter, Gauge, Histogram } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  BULLMQ_JOB_STATES,
  CATALOGUE,
  createMetrics,
  DEAD_KINDS,
  EVICTION_CAUSES,
  INGRESS_OUTCOMES,
  REFUSAL_REASONS,
  REVIVAL_REASONS,
  STOP_REASONS,
  TURN_OUTCOMES,
} from '../src/index.js';

type Kind = 'counter' | 'gauge' | 'histogram';

// The contract the dashboards, the alert rules and the KEDA trigger rely on, written out by hand so a
// rename in the catalogue fails here.
const REQUIRED: Record<string, { type: Kind; labels: string[] }> = {
  tributary_context_tokens_per_event: { type: 'histogram', labels: ['platform'] },
  tributary_batch_size: { type: 'histogram', labels: ['platform'] },
  tributary_packed_block_count: { type: 'histogram', labels: ['platform'] },
  tributary_queue_wait_seconds: { type: 'histogram', labels: ['platform'] },
  tributary_turn_duration_seconds: { type: 'histogram', labels: ['stop_reason'] },
  tributary_ingress_requests_total: { type: 'counter', labels: ['platform', 'outcome'] },
  tributary_ingress_request_duration_seconds: { type: 'histogram', labels: ['platform'] },
  tributary_duplicates_total: { type: 'counter', labels: ['platform'] },
  tributary_refusals_total: { type: 'counter', labels: ['platform', 'reason'] },
  tributary_ingress_redis_outages_total: { type: 'counter', labels: [] },
  tributary_ingress_redis_down: { type: 'gauge', labels: [] },
  tributary_lease_expiries_total: { type: 'counter', labels: [] },
  tributary_fence_rejections_total: { type: 'counter', labels: [] },
  tributary_sweeper_revivals_total: { type: 'counter', labels: ['reason'] },
  tributary_takeovers_held_back_total: { type: 'counter', labels: [] },
  tributary_doorbells_passed_on_total: { type: 'counter', labels: [] },
  tributary_dead_lettered_batches_total: { type: 'counter', labels: [] },
  tributary_platform_api_calls_total: { type: 'counter', labels: ['platform', 'method', 'status'] },
  tributary_platform_plain_fallbacks_total: { type: 'counter', labels: ['platform', 'method'] },
  tributary_platform_streaming_refusals_total: { type: 'counter', labels: ['platform'] },
  tributary_platform_pace_wait_seconds: { type: 'histogram', labels: ['platform'] },
  tributary_approval_requests_total: { type: 'counter', labels: ['platform'] },
  tributary_approval_outcomes_total: { type: 'counter', labels: ['platform', 'outcome'] },
  tributary_approval_wait_seconds: { type: 'histogram', labels: ['platform'] },
  tributary_approval_clicks_total: { type: 'counter', labels: ['platform', 'result'] },
  tributary_route_table_reloads_total: { type: 'counter', labels: ['result'] },
  tributary_agent_process_starts_total: { type: 'counter', labels: [] },
  tributary_agent_restarts_total: { type: 'counter', labels: [] },
  tributary_agent_start_failures_total: { type: 'counter', labels: [] },
  tributary_agent_start_wait_seconds: { type: 'histogram', labels: [] },
  tributary_agent_starts_waiting: { type: 'gauge', labels: [] },
  tributary_agent_starts_failing: { type: 'gauge', labels: [] },
  tributary_reply_deliveries_total: { type: 'counter', labels: ['outcome'] },
  tributary_replies_cut_total: { type: 'counter', labels: ['platform'] },
  tributary_turns_total: { type: 'counter', labels: ['outcome'] },
  tributary_steered_events_total: { type: 'counter', labels: ['platform'] },
  tributary_steer_refusals_total: { type: 'counter', labels: ['reason'] },
  tributary_backlog_messages: { type: 'gauge', labels: [] },
  tributary_threads_runnable: { type: 'gauge', labels: [] },
  tributary_threads_running: { type: 'gauge', labels: [] },
  tributary_acp_sessions_live: { type: 'gauge', labels: [] },
  tributary_bullmq_jobs: { type: 'gauge', labels: ['state'] },
  tributary_doorbells_lined: { type: 'gauge', labels: [] },
  tributary_dead_items: { type: 'gauge', labels: ['kind'] },
  tributary_dead_evictions: { type: 'gauge', labels: ['kind', 'cause'] },
  tributary_doorbell_consumer_up: { type: 'gauge', labels: [] },
  tributary_workspace_bytes: { type: 'gauge', labels: [] },
  tributary_workspace_volume_free_bytes: { type: 'gauge', labels: [] },
  tributary_workspace_volume_size_bytes: { type: 'gauge', labels: [] },
  tributary_workspace_over_budget_turns_total: { type: 'counter', labels: [] },
  tributary_workspaces_expired_total: { type: 'counter', labels: [] },
  tributary_workspace_files_stuck_total: { type: 'counter', labels: [] },
  tributary_build_info: { type: 'gauge', labels: ['version'] },
  tributary_route_tokens_total: { type: 'counter', labels: ['route'] },
  tributary_pool_threads_runnable: { type: 'gauge', labels: ['pool'] },
  tributary_pool_threads_running: { type: 'gauge', labels: ['pool'] },
  tributary_pool_workers: { type: 'gauge', labels: ['pool'] },
  tributary_pool_unserved_messages_total: { type: 'counter', labels: ['pool'] },
  tributary_agent_tokens_total: { type: 'counter', labels: ['route', 'kind'] },
  tributary_agent_cost_total: { type: 'counter', labels: ['route', 'currency'] },
  tributary_turns_without_usage_total: { type: 'counter', labels: ['route'] },
  tributary_route_budget_waits_total: { type: 'counter', labels: ['route'] },
  tributary_route_budget_unchecked_total: { type: 'counter', labels: ['route'] },
  tributary_pool_watch_failures_total: { type: 'counter', labels: ['what'] },
  tributary_route_turn_waits_total: { type: 'counter', labels: ['route'] },
  tributary_route_turn_limit_failures_total: { type: 'counter', labels: ['what'] },
  tributary_route_line_stalls_total: { type: 'counter', labels: [] },
};

const CLASSES = { counter: Counter, gauge: Gauge, histogram: Histogram };

describe('the required metrics', () => {
  const metrics = createMetrics();

  it.each(Object.entries(REQUIRED))('%s has its type and exactly its labels', async (name, expected) => {
    // prom-client accepts a subset of a metric's labels, so the declared set is checked as declared.
    const spec = Object.values(CATALOGUE).find((candidate) => candidate.name === name);
    expect(spec?.labelNames).toEqual(expected.labels);
    const metric = metrics.registry.getSingleMetric(name);
    expect(metric).toBeInstanceOf(CLASSES[expected.type]);

    // Record one value carrying every expected label: prom-client throws on a label it was not given,
    // and the exposition shows the label set the series really has.
    const labels = Object.fromEntries(expected.labels.map((label) => [label, 'x']));
    if (metric instanceof Histogram) metric.observe(labels, 1);
    else if (metric instanceof Counter || metric instanceof Gauge) metric.inc(labels, 1);
    const { type, values } = await metric!.get();
    expect(type).toBe(expected.type);
    const labelled = values.filter((value) => Object.values(value.labels).includes('x'));
    for (const value of labelled.length > 0 ? labelled : values) {
      // A histogram's bucket samples add `le`, the bucket bound.
      const names = Object.keys(value.labels).filter(
        (label) => !(metric instanceof Histogram && label === 'le'),
      );
      expect(names.sort()).toEqual([...expected.labels].sort());
    }
  });

  it('has the label values the issue names', () => {
    expect(STOP_REASONS).toEqual([
      'end_turn',
      'cancelled',
      'max_tokens',
      'refusal',
      'timeout',
      'error',
      'not_started',
      'lease_lost',
      'shutdown',
    ]);
    expect(INGRESS_OUTCOMES).toEqual([
      'accepted',
      'duplicate',
      'edited',
      'deleted',
      'ignored',
      'control',
      'approval',
      'handshake',
      'unauthorized',
      'invalid',
      'refused',
      'unavailable',
      'error',
    ]);
    expect(REFUSAL_REASONS).toEqual(['backlog_full', 'rate_limited', 'gate', 'edit']);
    expect(REVIVAL_REASONS).toEqual(['lease', 'doorbell', 'owner_gone']);
    expect(TURN_OUTCOMES).toEqual(['committed', 'failed', 'deferred', 'dead_lettered', 'abandoned']);
    expect(BULLMQ_JOB_STATES).toEqual(['waiting', 'active', 'delayed', 'completed', 'failed']);
    expect(DEAD_KINDS).toEqual(['letters', 'replies']);
    expect(EVICTION_CAUSES).toEqual(['ttl', 'cap']);
  });

  it('uses the bucket layout the issue fixes for batch size', async () => {
    metrics.batchSize.observe({ platform: 'slack' }, 1);
    const text = await metrics.registry.getSingleMetricAsString('tributary_batch_size');
    const bounds = [...text.matchAll(/tributary_batch_size_bucket\{le="([^"]+)",platform="slack"\}/g)];
    expect(bounds.map(([, le]) => le)).toEqual([
      ...['1', '2', '3', '4', '5', '6', '8', '10', '15', '20', '30', '50'],
      '+Inf',
    ]);
  });
});
