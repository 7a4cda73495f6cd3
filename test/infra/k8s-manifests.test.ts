// Renders each Kustomize overlay with a real `kubectl kustomize`, validates every object against the
// Kubernetes, KEDA and Prometheus Operator schemas (kubernetes-models), and checks what the schemas
// cannot: that selectors select, probes hit the ports the processes listen on, every DESIGN §10
// variable reaches the process that reads it, grace periods cover the worker's hand-off, KEDA scales
// on the runnable-threads gauge, and the PrometheusRule is the current rules.yml.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as kedaV1alpha1 from '@kubernetes-models/keda/keda.sh/v1alpha1';
import * as monitoringV1 from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  DEFAULTS,
  DESIGN_ENV,
  knownEnvNames,
  PLATFORM_ENV,
  READS,
  SECRET_ENV,
} from '../../infra/k8s/env-contract.js';
import { RULES_PATH, renderPrometheusRule } from '../../infra/k8s/generate-prometheus-rule.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const OVERLAYS = ['dev', 'production'] as const;
type Overlay = (typeof OVERLAYS)[number];

// Loosely typed views of rendered objects: the schema test below is what vouches for their shape.
// biome-ignore lint/suspicious/noExplicitAny: rendered YAML, validated by kubernetes-models
type K8sObject = any;
// biome-ignore lint/suspicious/noExplicitAny: rendered YAML, validated by kubernetes-models
type Container = any;

// Model classes by apiVersion and kind, from every module whose kinds the manifests may use.
type ModelClass = { apiVersion?: string; kind?: string } & (new (data: object) => { validate(): void });
const MODELS = new Map<string, ModelClass>();
for (const module of [coreV1, appsV1, autoscalingV2, policyV1, networkingV1, kedaV1alpha1, monitoringV1]) {
  for (const value of Object.values(module) as unknown[]) {
    if (typeof value !== 'function') continue;
    const model = value as ModelClass;
    if (model.apiVersion && model.kind) MODELS.set(`${model.apiVersion}/${model.kind}`, model);
  }
}

const kubectl = process.env.KUBECTL || 'kubectl';

async function render(overlay: Overlay): Promise<K8sObject[]> {
  const dir = join(root, 'infra/k8s/overlays', overlay);
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(kubectl, ['kustomize', dir], { maxBuffer: 16 * 1024 * 1024 }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        `'${kubectl}' was not found: rendering the Kustomize overlays needs kubectl. ` +
          "Install Debian's package kubernetes-client (apt-get install kubernetes-client), as .ci/run does.",
      );
    }
    throw new Error(`${kubectl} kustomize ${dir} failed: ${(error as { stderr?: string }).stderr ?? error}`);
  }
  return parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

// A render failure (kubectl missing included) is kept and thrown by every test that reads the
// overlay, so each of them fails with the reason rather than being reported as skipped.
const rendered = new Map<Overlay, K8sObject[] | Error>();
beforeAll(async () => {
  for (const overlay of OVERLAYS) {
    rendered.set(overlay, await render(overlay).catch((error: Error) => error));
  }
});
function renderedObjects(overlay: Overlay): K8sObject[] {
  const result = rendered.get(overlay);
  if (result instanceof Error) throw result;
  if (!result) throw new Error(`overlay ${overlay} was not rendered`);
  return result;
}

const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: K8sObject[], kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered overlay`);
  return found;
};
const selects = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
const podTemplates = (objects: K8sObject[]) =>
  [...ofKind(objects, 'Deployment'), ...ofKind(objects, 'StatefulSet')].map((o) => ({
    owner: o,
    labels: o.spec.template.metadata.labels as Record<string, string>,
    spec: o.spec.template.spec,
  }));
const tributaryDeployments = (objects: K8sObject[]) =>
  ofKind(objects, 'Deployment').filter(
    (d) => d.spec.template.spec.containers[0].image.split(':')[0].split('/').at(-1) === 'tributary',
  );
const containerOf = (objects: K8sObject[], deployment: string): Container =>
  named(objects, 'Deployment', deployment).spec.template.spec.containers[0];

/** The Secret the deployments read: rendered in dev; in production created from the same template. */
const secretTemplate = parse(readFileSync(join(root, 'infra/k8s/secret/secret.yaml'), 'utf8')) as K8sObject;

/** Every variable a container sees, with its literal value where the manifests set one. */
function environment(objects: K8sObject[], container: Container): Map<string, string | undefined> {
  const env = new Map<string, string | undefined>();
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) {
      const map = named(objects, 'ConfigMap', source.configMapRef.name);
      for (const [key, value] of Object.entries(map.data ?? {})) env.set(key, value as string);
    }
    if (source.secretRef) {
      expect(source.secretRef.name).toBe(secretTemplate.metadata.name);
      for (const key of Object.keys(secretTemplate.stringData)) env.set(key, undefined);
    }
  }
  for (const entry of container.env ?? []) {
    if (entry.valueFrom?.secretKeyRef) {
      expect(entry.valueFrom.secretKeyRef.name).toBe(secretTemplate.metadata.name);
      expect(Object.keys(secretTemplate.stringData)).toContain(entry.valueFrom.secretKeyRef.key);
    }
    env.set(entry.name, entry.value);
  }
  return env;
}

/** The container port a probe or Service refers to, by name or number. */
function portNumber(container: Container, port: string | number): number {
  if (typeof port === 'number') return port;
  const found = container.ports?.find((p: { name?: string }) => p.name === port);
  if (!found) throw new Error(`container ${container.name} has no port named ${port}`);
  return found.containerPort;
}

describe.each(OVERLAYS)('infra/k8s/overlays/%s', (overlay) => {
  const objects = () => renderedObjects(overlay);

  it('renders objects that all validate against their schemas', () => {
    expect(objects().length).toBeGreaterThan(10);
    const failures: string[] = [];
    for (const object of objects()) {
      const id = `${object.apiVersion}/${object.kind} ${object.metadata?.name}`;
      const Model = MODELS.get(`${object.apiVersion}/${object.kind}`);
      if (!Model) {
        failures.push(`${id}: no schema known for this kind`);
        continue;
      }
      try {
        new Model(object).validate();
      } catch (error) {
        failures.push(`${id}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('has the ingress Deployment, Service, HPA on CPU and PDB, and the worker Deployment, ScaledObject and PDB', () => {
    const all = objects();
    const ingress = named(all, 'Deployment', 'tributary-ingress');
    const worker = named(all, 'Deployment', 'tributary-worker');
    expect(ingress.spec.template.spec.containers[0].args).toEqual(['ingress']);
    expect(worker.spec.template.spec.containers[0].args).toEqual(['worker']);
    // The autoscalers own the replica counts: a `replicas` field would reset them on every apply.
    expect(ingress.spec.replicas).toBeUndefined();
    expect(worker.spec.replicas).toBeUndefined();

    const hpa = named(all, 'HorizontalPodAutoscaler', 'tributary-ingress');
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'tributary-ingress' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(1);
    expect(hpa.spec.metrics).toContainEqual(
      expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }),
    );
    // Utilization is relative to the request, so the request must be there.
    expect(ingress.spec.template.spec.containers[0].resources.requests.cpu).toBeDefined();

    const scaled = named(all, 'ScaledObject', 'tributary-worker');
    expect(scaled.spec.scaleTargetRef.name).toBe('tributary-worker');
    for (const deployment of [ingress, worker]) {
      const pdbs = ofKind(all, 'PodDisruptionBudget').filter((pdb) =>
        selects(pdb.spec.selector.matchLabels, deployment.spec.template.metadata.labels),
      );
      expect(pdbs, `PDB for ${deployment.metadata.name}`).toHaveLength(1);
    }
  });

  it('wires every DESIGN §10 variable to the process that reads it, and only known variables', () => {
    const all = objects();
    const ingress = environment(all, containerOf(all, 'tributary-ingress'));
    const worker = environment(all, containerOf(all, 'tributary-worker'));
    // DESIGN §10 names each process must be given, as far as its own loader reads them.
    const needs = {
      ingress: DESIGN_ENV.filter((name) => READS.ingress.has(name)),
      worker: [...DESIGN_ENV.filter((name) => READS.worker.has(name)), 'SHUTDOWN_GRACE_MS'],
    };
    expect(needs.ingress.filter((name) => !ingress.has(name))).toEqual([]);
    expect(needs.worker.filter((name) => !worker.has(name))).toEqual([]);
    expect(DESIGN_ENV.filter((name) => !ingress.has(name) && !worker.has(name))).toEqual([]);
    // Both share the platform variables; the bot identities above all, or every mention goes unseen.
    expect(PLATFORM_ENV.filter((name) => !ingress.has(name))).toEqual([]);
    expect(PLATFORM_ENV.filter((name) => !worker.has(name))).toEqual([]);

    const known = knownEnvNames();
    for (const deployment of tributaryDeployments(all)) {
      const env = environment(all, deployment.spec.template.spec.containers[0]);
      const unknown = [...env.keys()].filter((name) => !known.has(name));
      expect(unknown, deployment.metadata.name).toEqual([]);
    }
  });

  it('keeps credentials in the Secret only, and renders that Secret only where it holds no live values', () => {
    const all = objects();
    expect(Object.keys(secretTemplate.stringData).sort()).toEqual([...SECRET_ENV].sort());
    expect(Object.values(secretTemplate.stringData).every((value) => value === '')).toBe(true);
    for (const map of ofKind(all, 'ConfigMap')) {
      expect(
        Object.keys(map.data ?? {}).filter((key) => (SECRET_ENV as readonly string[]).includes(key)),
      ).toEqual([]);
    }
    for (const deployment of tributaryDeployments(all)) {
      for (const entry of deployment.spec.template.spec.containers[0].env ?? []) {
        if ((SECRET_ENV as readonly string[]).includes(entry.name)) expect(entry.value).toBeUndefined();
      }
    }
    const secrets = ofKind(all, 'Secret');
    if (overlay === 'dev') {
      expect(secrets.map((s) => s.metadata.name)).toEqual([secretTemplate.metadata.name]);
      expect(secrets[0].stringData).toEqual(secretTemplate.stringData);
    } else {
      // Applying production must never overwrite live credentials with the empty template.
      expect(secrets).toEqual([]);
    }
  });

  it('probes /livez and /readyz on the port each process listens on', () => {
    const all = objects();
    const listens = { 'tributary-ingress': 'PORT', 'tributary-worker': 'METRICS_PORT' } as const;
    for (const [name, variable] of Object.entries(listens)) {
      const deployment = named(all, 'Deployment', name);
      const container = deployment.spec.template.spec.containers[0];
      const port = Number(environment(all, container).get(variable));
      expect(port, `${name} ${variable}`).toBe(DEFAULTS[variable]);
      expect(container.livenessProbe.httpGet.path).toBe('/livez');
      expect(container.readinessProbe.httpGet.path).toBe('/readyz');
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
        if (!container[probe]) continue;
        expect(
          portNumber(container, container[probe].httpGet.port),
          `${deployment.metadata.name} ${probe}`,
        ).toBe(port);
      }
    }
  });

  it('gives workers a termination grace period that covers SHUTDOWN_GRACE_MS and the cancel after it', () => {
    const all = objects();
    const worker = named(all, 'Deployment', 'tributary-worker');
    const env = environment(all, worker.spec.template.spec.containers[0]);
    const grace = Number(env.get('SHUTDOWN_GRACE_MS'));
    const cancel = Number(env.get('CANCEL_TIMEOUT_MS') ?? DEFAULTS.CANCEL_TIMEOUT_MS);
    expect(grace).toBeGreaterThan(0);
    expect(worker.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(
      grace + cancel,
    );
  });

  it('scales workers with KEDA on the runnable-threads gauge of this namespace, one per WORKER_CONCURRENCY', () => {
    const all = objects();
    const scaled = named(all, 'ScaledObject', 'tributary-worker');
    expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(scaled.spec.maxReplicaCount).toBeGreaterThanOrEqual(scaled.spec.minReplicaCount);
    expect(scaled.spec.triggers).toHaveLength(1);
    const [trigger] = scaled.spec.triggers;
    expect(trigger.type).toBe('prometheus');
    expect(trigger.metricType).toBe('AverageValue');
    const query: string = trigger.metadata.query;
    expect(query).toContain('max(tributary_threads_runnable');
    expect(query).toContain('max(tributary_threads_running');
    // Every gauge in the query is scoped to this deployment's namespace.
    const selectors = [...query.matchAll(/tributary_threads_\w+(\{[^}]*\})?/g)].map((m) => m[1]);
    expect(selectors).toEqual(selectors.map(() => `{namespace="${scaled.metadata.namespace}"}`));
    const env = environment(all, containerOf(all, 'tributary-worker'));
    expect(trigger.metadata.threshold).toBe(
      env.get('WORKER_CONCURRENCY') ?? String(DEFAULTS.WORKER_CONCURRENCY),
    );
  });

  it('selects what it means to: Services, PDBs, NetworkPolicies, ServiceMonitors and their ports', () => {
    const all = objects();
    const pods = podTemplates(all);
    for (const service of ofKind(all, 'Service')) {
      const backing = pods.filter((p) => selects(service.spec.selector, p.labels));
      expect(backing, `Service ${service.metadata.name}`).toHaveLength(1);
      for (const port of service.spec.ports) {
        portNumber(backing[0]!.spec.containers[0], port.targetPort);
      }
    }
    for (const monitor of ofKind(all, 'ServiceMonitor')) {
      const services = ofKind(all, 'Service').filter((s) =>
        selects(monitor.spec.selector.matchLabels, s.metadata.labels),
      );
      expect(services, `ServiceMonitor ${monitor.metadata.name}`).toHaveLength(1);
      const names = services[0].spec.ports.map((p: { name: string }) => p.name);
      for (const endpoint of monitor.spec.endpoints) {
        expect(names).toContain(endpoint.port);
        expect(endpoint.path).toBe('/metrics');
      }
    }
    const monitored = ofKind(all, 'ServiceMonitor').map((m) => m.metadata.name);
    expect(monitored).toEqual(expect.arrayContaining(['tributary-ingress', 'tributary-worker']));
    for (const policy of ofKind(all, 'NetworkPolicy')) {
      const matched = pods.filter((p) => selects(policy.spec.podSelector.matchLabels, p.labels));
      expect(matched.length, `NetworkPolicy ${policy.metadata.name}`).toBeGreaterThan(0);
    }
  });

  it('lets each Tributary pod talk only to what it needs', () => {
    const all = objects();
    const policyFor = (deployment: K8sObject) => {
      const policies = ofKind(all, 'NetworkPolicy').filter((p) =>
        selects(p.spec.podSelector.matchLabels, deployment.spec.template.metadata.labels),
      );
      expect(policies, deployment.metadata.name).toHaveLength(1);
      expect(policies[0].spec.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
      return policies[0];
    };
    const allowedIn = (policy: K8sObject) =>
      (policy.spec.ingress ?? []).flatMap((rule: { ports: { port: number }[] }) =>
        rule.ports.map((p) => p.port),
      );
    const egress = (policy: K8sObject) =>
      policy.spec.egress.flatMap((rule: { ports: { port: number; protocol: string }[] }) =>
        rule.ports.map((p) => `${p.port}/${p.protocol}`),
      );
    for (const deployment of tributaryDeployments(all)) {
      const policy = policyFor(deployment);
      const container = deployment.spec.template.spec.containers[0];
      // In: only the ports the container serves (HTTP for ingress, metrics for workers, none for the
      // forwarder).
      const served = (container.ports ?? []).map((p: { containerPort: number }) => p.containerPort);
      expect(allowedIn(policy).sort()).toEqual(served);
      // Out: DNS and HTTPS always; Redis for the processes that use it.
      expect(egress(policy)).toEqual(expect.arrayContaining(['53/UDP', '53/TCP', '443/TCP']));
      if (container.args[0] !== 'discord-forwarder') expect(egress(policy)).toContain('6379/TCP');
    }
    // Workers are called by nobody but Prometheus.
    const worker = policyFor(named(all, 'Deployment', 'tributary-worker'));
    for (const rule of worker.spec.ingress) expect(rule.from?.length).toBeGreaterThan(0);
    // Ingress's admin listener likewise; only its webhook port is open to all.
    const ingress = policyFor(named(all, 'Deployment', 'tributary-ingress'));
    for (const rule of ingress.spec.ingress) {
      const ports = rule.ports.map((p: { port: number }) => p.port);
      if (ports.includes(DEFAULTS.ADMIN_PORT)) expect(rule.from?.length).toBeGreaterThan(0);
      else expect(ports).toEqual([DEFAULTS.PORT]);
    }
  });

  it('runs every pod non-root with a read-only root filesystem, no capabilities and writable volumes where needed', () => {
    const all = objects();
    for (const { owner, spec } of podTemplates(all)) {
      const name = owner.metadata.name;
      expect(spec.securityContext.runAsNonRoot, name).toBe(true);
      expect(spec.securityContext.runAsUser, name).toBeGreaterThan(0);
      expect(spec.automountServiceAccountToken, name).toBe(false);
      for (const container of spec.containers) {
        expect(container.securityContext, name).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
        });
        expect(container.securityContext.capabilities.drop, name).toContain('ALL');
      }
    }
    for (const deployment of tributaryDeployments(all)) {
      const spec = deployment.spec.template.spec;
      const container = spec.containers[0];
      const env = environment(all, container);
      const writable = ['/tmp'];
      if (container.args[0] === 'worker') writable.push(env.get('AGENT_CWD')!, env.get('HOME')!);
      for (const path of writable) {
        const mount = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === path);
        expect(mount, `${deployment.metadata.name} mounts ${path}`).toBeDefined();
        const volume = spec.volumes.find((v: { name: string }) => v.name === mount.name);
        expect(volume.emptyDir, `${deployment.metadata.name} ${path}`).toBeDefined();
      }
    }
  });

  it('carries the rules of infra/prometheus/rules.yml in a PrometheusRule', () => {
    const rules = parse(readFileSync(RULES_PATH, 'utf8')) as { groups: unknown[] };
    const rule = named(objects(), 'PrometheusRule', 'tributary');
    expect(rule.spec.groups).toEqual(rules.groups);
  });

  it('runs the Discord forwarder, a single replica, only where the overlay includes it', () => {
    const forwarders = ofKind(objects(), 'Deployment').filter(
      (d) => d.metadata.name === 'tributary-discord-forwarder',
    );
    if (overlay === 'dev') {
      expect(forwarders).toEqual([]);
      return;
    }
    expect(forwarders).toHaveLength(1);
    const [forwarder] = forwarders;
    expect(forwarder.spec.replicas).toBe(1);
    // Never two Gateway sessions at once, even during a rollout.
    expect(forwarder.spec.strategy.type).toBe('Recreate');
    const env = environment(objects(), forwarder.spec.template.spec.containers[0]);
    expect([...env.keys()]).toEqual(
      expect.arrayContaining(['DISCORD_BOT_TOKEN', 'DISCORD_FORWARDER_SECRET', 'FORWARD_URL']),
    );
    const ingress = named(objects(), 'Service', 'tributary-ingress');
    expect(env.get('FORWARD_URL')).toBe(`http://${ingress.metadata.name}:${ingress.spec.ports[0].port}`);
  });
});

describe('infra/k8s/base/prometheus-rule.yaml', () => {
  it('is the current output of generate-prometheus-rule.ts (run it after editing rules.yml)', () => {
    const committed = readFileSync(join(root, 'infra/k8s/base/prometheus-rule.yaml'), 'utf8');
    expect(committed).toBe(renderPrometheusRule(readFileSync(RULES_PATH, 'utf8')));
    expect(committed.split('\n')[0]).toMatch(/^# GENERATED by infra\/k8s\/generate-prometheus-rule\.ts/);
  });
});
