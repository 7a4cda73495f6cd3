// What a real cluster's monitoring and Redis need from the rendered overlays: current Kustomize
// syntax, the kube-prometheus-stack component's labels, METRICS_TOKEN from the Secret to the apps and
// the scrapes, and a dev Redis with a password that keeps every acknowledged message.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { READS } from '../../infra/k8s/env-contract.js';
import {
  containerOf,
  environment,
  type K8sObject,
  named,
  OVERLAYS,
  ofKind,
  REDIS_SECRET,
  renderOverlaysBeforeAll,
  root,
  secretTemplate,
} from './rendered-overlays.js';

const rendered = renderOverlaysBeforeAll();
const k8s = join(root, 'infra/k8s');

function kustomizations(dir = k8s): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return kustomizations(path);
    return entry === 'kustomization.yaml' ? [path] : [];
  });
}

/** The job names docker-compose's Prometheus gives its scrape configs. */
const composeJobs = (
  parse(readFileSync(join(root, 'infra/prometheus/prometheus.yml'), 'utf8')) as {
    scrape_configs: { job_name: string }[];
  }
).scrape_configs
  .map((config) => config.job_name)
  .filter((job) => job.startsWith('tributary-'));

describe('Kustomize syntax', () => {
  it('uses no field current Kustomize deprecates, and renders without a warning', () => {
    const files = kustomizations();
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const file of files) {
      const fields = Object.keys(parse(readFileSync(file, 'utf8')) as object);
      expect(fields, file).not.toContain('bases');
      expect(fields, file).not.toContain('patchesStrategicMerge');
      expect(fields, file).not.toContain('patchesJson6902');
      expect(fields, file).not.toContain('commonLabels');
    }
    for (const overlay of OVERLAYS) expect(rendered(overlay).warnings, overlay).toBe('');
  });
});

describe.each(OVERLAYS)('infra/k8s/overlays/%s', (overlay) => {
  const objects = () => rendered(overlay).objects;

  it('labels the ServiceMonitors and the PrometheusRule for kube-prometheus-stack, and nothing else', () => {
    const monitoring = [...ofKind(objects(), 'ServiceMonitor'), ...ofKind(objects(), 'PrometheusRule')];
    expect(monitoring.map((o: K8sObject) => o.kind).sort()).toEqual([
      'PrometheusRule',
      'ServiceMonitor',
      'ServiceMonitor',
    ]);
    for (const object of monitoring)
      expect(object.metadata.labels.release, object.metadata.name).toBe('kube-prometheus-stack');
    const others = objects().filter((o: K8sObject) => !monitoring.includes(o));
    expect(others.filter((o: K8sObject) => o.metadata.labels?.release !== undefined)).toEqual([]);
  });

  it('scrapes with the Secret METRICS_TOKEN that ingress and workers both require', () => {
    expect(Object.keys(secretTemplate.stringData)).toContain('METRICS_TOKEN');
    expect(READS.ingress.has('METRICS_TOKEN')).toBe(true);
    expect(READS.worker.has('METRICS_TOKEN')).toBe(true);
    for (const name of ['tributary-ingress', 'tributary-worker']) {
      const env = environment(objects(), containerOf(objects(), name));
      expect(env.has('METRICS_TOKEN'), name).toBe(true);
      // From the Secret: no literal value anywhere in the manifests.
      expect(env.get('METRICS_TOKEN'), name).toBeUndefined();
    }
    for (const monitor of ofKind(objects(), 'ServiceMonitor')) {
      for (const endpoint of monitor.spec.endpoints) {
        expect(endpoint.authorization, monitor.metadata.name).toEqual({
          type: 'Bearer',
          credentials: { name: secretTemplate.metadata.name, key: 'METRICS_TOKEN' },
        });
      }
    }
  });

  it('names the scrape jobs as docker-compose and the alert rules do', () => {
    const jobs = ofKind(objects(), 'ServiceMonitor').flatMap((monitor: K8sObject) =>
      monitor.spec.endpoints.map(
        (endpoint: { relabelings: { targetLabel: string; replacement: string }[] }) =>
          endpoint.relabelings.find((r) => r.targetLabel === 'job')?.replacement,
      ),
    );
    expect(jobs.sort()).toEqual([...composeJobs].sort());
    const rules = JSON.stringify(named(objects(), 'PrometheusRule', 'tributary').spec);
    for (const job of jobs) expect(rules).toContain(job);
  });

  it('gives the apps REDIS_URL as a credential: the Secret in production, the dev Redis password in dev', () => {
    expect(Object.keys(secretTemplate.stringData)).toContain('REDIS_URL');
    for (const map of ofKind(objects(), 'ConfigMap'))
      expect(Object.keys(map.data ?? {})).not.toContain('REDIS_URL');
    const redis = ofKind(objects(), 'StatefulSet').filter(
      (s: K8sObject) => s.metadata.name === 'tributary-redis',
    );
    if (overlay === 'production') {
      expect(redis).toEqual([]);
      return;
    }
    const [server] = redis;
    const container = server.spec.template.spec.containers[0];
    const args: string[] = container.args;
    const option = (name: string) => args[args.indexOf(`--${name}`) + 1];
    expect(option('appendonly')).toBe('yes');
    expect(option('appendfsync')).toBe('always');
    expect(option('maxmemory-policy')).toBe('noeviction');
    // maxmemory under the container's limit, with room for the AOF rewrite's fork.
    const mebibytes = (value: string) => Number.parseInt(value, 10) * (/gi?$/i.test(value) ? 1024 : 1);
    expect(mebibytes(option('maxmemory')!)).toBeLessThan(mebibytes(container.resources.limits.memory) * 0.8);
    expect(option('requirepass')).toBe('$(REDIS_PASSWORD)');
    const password = container.env.find((e: { name: string }) => e.name === 'REDIS_PASSWORD').valueFrom
      .secretKeyRef;
    expect(password.name.startsWith(`${REDIS_SECRET}-`)).toBe(true);
    for (const name of ['tributary-ingress', 'tributary-worker']) {
      const env: { name: string; value?: string; valueFrom?: { secretKeyRef: unknown } }[] = containerOf(
        objects(),
        name,
      ).env;
      const at = (variable: string) => env.findIndex((e) => e.name === variable);
      expect(env[at('REDIS_PASSWORD')]!.valueFrom!.secretKeyRef, name).toEqual(password);
      // The kubelet expands $(VAR) only from variables defined before it.
      expect(at('REDIS_PASSWORD'), name).toBeLessThan(at('REDIS_URL'));
      expect(env[at('REDIS_URL')]!.value, name).toBe('redis://:$(REDIS_PASSWORD)@tributary-redis:6379');
    }
  });
});
