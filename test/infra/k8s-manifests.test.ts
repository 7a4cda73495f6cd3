// Renders each Kustomize overlay with a real `kubectl kustomize`, validates every object against the
// Kubernetes, KEDA and Prometheus Operator schemas (kubernetes-models), and checks what the schemas
// cannot: that selectors select, probes hit the ports the processes listen on, every DESIGN §10
// variable reaches the process that reads it, grace periods cover the worker's hand-off, KEDA scales
// on the runnable-threads gauge, and the PrometheusRule is the current rules.yml.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RouteTable } from '@tributary/config';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  agentHostEnvNames,
  DEFAULTS,
  DESIGN_ENV,
  knownEnvNames,
  PLATFORM_ENV,
  READS,
  SECRET_ENV,
} from '../../infra/k8s/env-contract.js';
import { poolUpToDate } from '../../infra/k8s/generate-pool.js';
import { RULES_PATH, renderPrometheusRule } from '../../infra/k8s/generate-prometheus-rule.js';
import {
  type Container,
  containerOf,
  environment,
  type K8sObject,
  named,
  OVERLAYS,
  ofKind,
  podTemplates,
  REDIS_SECRET,
  renderOverlaysBeforeAll,
  renderWithComponent,
  root,
  schemaFailures,
  secretTemplate,
  selects,
  tributaryDeployments,
} from './rendered-overlays.js';

const rendered = renderOverlaysBeforeAll();

/** The container port a probe or Service refers to, by name or number. */
function portNumber(container: Container, port: string | number): number {
  if (typeof port === 'number') return port;
  const found = container.ports?.find((p: { name?: string }) => p.name === port);
  if (!found) throw new Error(`container ${container.name} has no port named ${port}`);
  return found.containerPort;
}

describe.each(OVERLAYS)('infra/k8s/overlays/%s', (overlay) => {
  const objects = () => rendered(overlay).objects;

  it('mounts the route table as a directory of a ConfigMap that keeps its name, for ingress to reload', () => {
    const all = objects();
    const ingress = named(all, 'Deployment', 'tributary-ingress');
    const container = containerOf(all, 'tributary-ingress');
    const file = environment(all, container).get('ROUTES_FILE')!;
    // A subPath mount would never see an edit; a directory mount does, within the kubelet's sync.
    const mount = container.volumeMounts.find((m: { mountPath: string }) =>
      file.startsWith(`${m.mountPath}/`),
    );
    expect(mount).toMatchObject({ name: 'routes', readOnly: true });
    expect(mount.subPath).toBeUndefined();
    const volume = ingress.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'routes');
    // Its name has no hash suffix: an edit changes the ConfigMap in place instead of restarting ingress.
    expect(volume.configMap.name).toBe('tributary-routes');
    const table = named(all, 'ConfigMap', 'tributary-routes').data[file.slice(mount.mountPath.length + 1)];
    expect(RouteTable.parse(table, 'routes.yaml').names).toEqual([]);
    // Only ingress reads the table.
    expect(environment(all, containerOf(all, 'tributary-worker')).has('ROUTES_FILE')).toBe(false);
  });

  it('renders objects that all validate against their schemas', () => {
    expect(objects().length).toBeGreaterThan(10);
    expect(schemaFailures(objects())).toEqual([]);
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
        // A credential set in the pod only by reference: from a Secret, or expanded from a variable
        // that comes from one (the dev Redis's REDIS_URL).
        if ((SECRET_ENV as readonly string[]).includes(entry.name) && entry.value !== undefined) {
          expect(entry.value).toMatch(/\$\([A-Z_]+\)/);
        }
      }
    }
    // The dev Redis's own password is the one committed value (a development cluster's, by design).
    const secrets = ofKind(all, 'Secret').filter((s) => !s.metadata.name.startsWith(`${REDIS_SECRET}-`));
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
    const listens = {
      'tributary-ingress': 'PORT',
      'tributary-worker': 'METRICS_PORT',
      'tributary-discord-forwarder': 'METRICS_PORT',
    } as const;
    for (const [name, variable] of Object.entries(listens)) {
      if (!all.some((o: K8sObject) => o.kind === 'Deployment' && o.metadata.name === name)) continue;
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

  it("scales workers with KEDA on the default pool's runnable-threads gauge of this namespace, one per WORKER_CONCURRENCY", () => {
    const all = objects();
    const scaled = named(all, 'ScaledObject', 'tributary-worker');
    expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(scaled.spec.maxReplicaCount).toBeGreaterThanOrEqual(scaled.spec.minReplicaCount);
    expect(scaled.spec.triggers).toHaveLength(1);
    const [trigger] = scaled.spec.triggers;
    expect(trigger.type).toBe('prometheus');
    expect(trigger.metricType).toBe('AverageValue');
    const query: string = trigger.metadata.query;
    expect(query).toContain('max(tributary_pool_threads_runnable');
    expect(query).toContain('max(tributary_pool_threads_running');
    // Every gauge in the query is scoped to this deployment's namespace and to the default pool: a
    // pool's threads are its own workers' to scale for (components/pool-*).
    const selectors = [...query.matchAll(/tributary_\w*threads_\w+(\{[^}]*\})?/g)].map((m) => m[1]);
    expect(selectors).toHaveLength(2);
    expect(selectors).toEqual(
      selectors.map(() => `{namespace="${scaled.metadata.namespace}", pool="default"}`),
    );
    const env = environment(all, containerOf(all, 'tributary-worker'));
    expect(trigger.metadata.threshold).toBe(
      env.get('WORKER_CONCURRENCY') ?? String(DEFAULTS.WORKER_CONCURRENCY),
    );
  });

  it('fails safe: absent or NaN gauges ask for the fallback fleet, never 0, and so does a failing Prometheus', () => {
    const scaled = named(objects(), 'ScaledObject', 'tributary-worker');
    const [trigger] = scaled.spec.triggers;
    const { fallback, minReplicaCount, maxReplicaCount } = scaled.spec;
    expect(fallback.failureThreshold).toBeGreaterThanOrEqual(1);
    expect(fallback.replicas).toBeGreaterThanOrEqual(minReplicaCount);
    expect(fallback.replicas).toBeLessThanOrEqual(maxReplicaCount);
    // The demand the query answers without data is the one that makes KEDA keep fallback.replicas.
    const answer = /^\((.+) >= 0\) or on \(\) vector\((\d+)\)$/.exec(trigger.metadata.query);
    expect(answer, trigger.metadata.query).not.toBeNull();
    expect(Number(answer![2])).toBe(fallback.replicas * Number(trigger.metadata.threshold));
    expect(answer![1]).not.toContain('vector(0)');
    // An empty answer (a query edited to lose its fallback) is an error, so KEDA's fallback, not 0.
    expect(trigger.metadata.ignoreNullValues).toBe('false');
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
      for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
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
      // The workspace root is the shared claim, checked with the agents container below.
      if (container.args[0] === 'worker') writable.push(env.get('HOME')!);
      for (const path of writable) {
        const mount = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === path);
        expect(mount, `${deployment.metadata.name} mounts ${path}`).toBeDefined();
        const volume = spec.volumes.find((v: { name: string }) => v.name === mount.name);
        expect(volume.emptyDir, `${deployment.metadata.name} ${path}`).toBeDefined();
      }
    }
  });

  it('runs the agents in a container of their own beside the worker: no secrets, no shared processes, the socket and workspaces shared', () => {
    const all = objects();
    const deployment = named(all, 'Deployment', 'tributary-worker');
    const spec = deployment.spec.template.spec;
    const worker = spec.containers[0];
    const agents = spec.initContainers?.find((c: { name: string }) => c.name === 'agents');
    expect(agents, 'the agents container').toBeDefined();
    // A native sidecar: up before the worker asks it, stopped only after the worker's hand-off.
    expect(agents.restartPolicy).toBe('Always');
    expect(agents.args).toEqual(['agent-host']);
    expect(agents.image.split(':')[0]).toBe(worker.image.split(':')[0]);
    expect(agents.startupProbe).toBeDefined();
    expect(spec.shareProcessNamespace).toBe(false);

    // None of the worker's configuration or secrets: only its own settings, each known to its loader.
    expect(agents.envFrom).toBeUndefined();
    const agentEnv = environment(all, agents);
    const allowed = agentHostEnvNames();
    expect([...agentEnv.keys()].filter((name) => !allowed.has(name))).toEqual([]);
    for (const entry of agents.env) expect(entry.valueFrom?.secretKeyRef, entry.name).toBeUndefined();
    // Restricted Pod Security refuses bubblewrap its user namespaces.
    expect(agentEnv.get('AGENT_SANDBOX')).toBe('off');

    const workerEnv = environment(all, worker);
    expect(workerEnv.get('AGENT_SANDBOX')).toBe('agent-host');
    const socket = workerEnv.get('AGENT_HOST_SOCKET')!;
    expect(agentEnv.get('AGENT_HOST_SOCKET')).toBe(socket);
    const mountAt = (container: Container, path: string) =>
      container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === path);
    const volume = (name: string) => spec.volumes.find((v: { name: string }) => v.name === name);
    // The socket's folder: one emptyDir in both.
    const socketDir = socket.slice(0, socket.lastIndexOf('/'));
    expect(mountAt(worker, socketDir)?.name).toBeDefined();
    expect(mountAt(agents, socketDir)?.name).toBe(mountAt(worker, socketDir).name);
    expect(volume(mountAt(worker, socketDir).name).emptyDir).toBeDefined();
    // The workspace root at the same path in both (a room is named by the worker's path), on the
    // claim every worker pod shares.
    const root = workerEnv.get('AGENT_WORKSPACES')!;
    expect(mountAt(worker, root)?.name).toBeDefined();
    expect(mountAt(agents, root)?.name).toBe(mountAt(worker, root).name);
    const claimName = volume(mountAt(worker, root).name).persistentVolumeClaim?.claimName;
    const claim = named(all, 'PersistentVolumeClaim', claimName);
    if (overlay === 'production') {
      expect(claim.spec.accessModes).toEqual(['ReadWriteMany']);
      expect(claim.spec.storageClassName).toEqual(expect.any(String));
    } else {
      // One node: every pod mounts a ReadWriteOnce volume there.
      expect(claim.spec.accessModes).toEqual(['ReadWriteOnce']);
    }
    // Nothing of the worker's own: every volume the agents mount is the socket's, the workspaces' or
    // one no other container mounts.
    const shared = new Set([mountAt(worker, socketDir).name, mountAt(worker, root).name]);
    for (const mount of agents.volumeMounts) {
      if (shared.has(mount.name)) continue;
      expect(volume(mount.name).emptyDir, mount.mountPath).toBeDefined();
      const others = spec.containers.filter((c: Container) =>
        c.volumeMounts?.some((m: { name: string }) => m.name === mount.name),
      );
      expect(others, mount.mountPath).toEqual([]);
    }
    expect(agents.resources.limits.memory).toBeDefined();
    expect(agents.resources.requests.cpu).toBeDefined();
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

describe('the Slack teams component (components/slack-teams)', () => {
  it.each(OVERLAYS)(
    "gives %s's ingress and every pool's workers the further teams' tokens as a folder of a Secret, and nothing else",
    async (overlay) => {
      const { objects: all } = await renderWithComponent(overlay, 'pool-example', 'slack-teams');
      expect(schemaFailures(all)).toEqual([]);
      for (const name of ['tributary-ingress', 'tributary-worker', 'tributary-worker-example']) {
        const container = containerOf(all, name);
        const dir = environment(all, container).get('SLACK_TEAM_TOKENS_DIR')!;
        const mount = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === dir);
        expect(mount, name).toMatchObject({ name: 'slack-teams', readOnly: true });
        const volume = named(all, 'Deployment', name).spec.template.spec.volumes.find(
          (v: { name: string }) => v.name === 'slack-teams',
        );
        expect(volume.secret).toMatchObject({ secretName: 'tributary-slack-teams', defaultMode: 0o440 });
      }
      // No other container (the agents' own, the forwarder) mounts the tokens.
      const mounting = tributaryDeployments(all).flatMap((deployment) =>
        (deployment.spec.template.spec.containers as Container[])
          .filter((container) =>
            container.volumeMounts?.some((m: { name: string }) => m.name === 'slack-teams'),
          )
          .map((container) => container.name),
      );
      expect(mounting.sort()).toEqual(['ingress', 'worker', 'worker']);
    },
  );
});

describe('a worker pool component (components/pool-example)', () => {
  it('is the current output of generate-pool.ts (run it after editing base/worker.yaml)', () => {
    expect(poolUpToDate('example')).toBe(true);
  });

  it.each(OVERLAYS)(
    'adds to %s its own workers, scaled on its own gauges, selected apart from the default pool',
    async (overlay) => {
      const { objects: all } = await renderWithComponent(overlay, 'pool-example');
      expect(schemaFailures(all)).toEqual([]);
      const pool = named(all, 'Deployment', 'tributary-worker-example');
      const base = named(all, 'Deployment', 'tributary-worker');
      const poolPods = pool.spec.template.metadata.labels;
      expect(environment(all, containerOf(all, 'tributary-worker-example')).get('WORKER_POOL')).toBe(
        'example',
      );
      expect(environment(all, containerOf(all, 'tributary-worker')).get('WORKER_POOL')).toBeUndefined();
      // No selector of the default pool's objects reaches the pool's pods, and none of the pool's
      // reaches the default pool's: two disruption budgets over one pod would block its eviction.
      expect(selects(base.spec.selector.matchLabels, poolPods)).toBe(false);
      expect(selects(pool.spec.selector.matchLabels, base.spec.template.metadata.labels)).toBe(false);
      for (const [kind, selectorOf] of [
        ['PodDisruptionBudget', (o: K8sObject) => o.spec.selector.matchLabels],
        ['NetworkPolicy', (o: K8sObject) => o.spec.podSelector.matchLabels],
      ] as const) {
        expect(selects(selectorOf(named(all, kind, 'tributary-worker')), poolPods), kind).toBe(false);
        expect(selectorOf(named(all, kind, 'tributary-worker-example'))).toEqual(
          pool.spec.selector.matchLabels,
        );
      }
      // Scraped as every worker is: its Service carries the workers' labels for their ServiceMonitor.
      const service = named(all, 'Service', 'tributary-worker-example-metrics');
      expect(selects(service.spec.selector, poolPods)).toBe(true);
      const monitor = named(all, 'ServiceMonitor', 'tributary-worker');
      expect(selects(monitor.spec.selector.matchLabels, service.metadata.labels)).toBe(true);
      const scaled = named(all, 'ScaledObject', 'tributary-worker-example');
      expect(scaled.spec.scaleTargetRef.name).toBe('tributary-worker-example');
      expect(scaled.spec.triggers[0].metadata.query).toContain(
        'tributary_pool_threads_runnable{pool="example"}',
      );
      expect(scaled.spec.triggers[0].metadata.query).not.toContain('pool="default"');
      // Without its gauges it holds one worker, the query's fallback demand saying the same.
      expect(scaled.spec.fallback.replicas).toBe(1);
      expect(scaled.spec.triggers[0].metadata.query).toMatch(
        new RegExp(`or on \\(\\) vector\\(${scaled.spec.triggers[0].metadata.threshold}\\)$`),
      );
    },
  );
});
