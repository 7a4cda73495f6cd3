// Renders a worker pool's component (docs/adr/0060) from the base worker (base/worker.yaml): its own
// Deployment (WORKER_POOL set), ScaledObject (on the pool's own gauges), PodDisruptionBudget, metrics
// Service and NetworkPolicy, selecting only the pool's pods.
//
//   npx tsx infra/k8s/generate-pool.ts NAME            writes infra/k8s/components/pool-NAME/
//   npx tsx infra/k8s/generate-pool.ts NAME --check    exits 1 when that folder is out of date
//
// Kustomize cannot stamp out copies of a resource per name, so each pool's component is rendered here
// and committed; render it again after editing base/worker.yaml (test/infra checks the example pool).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isPoolName } from '@tributary/config';
import { parseAllDocuments, stringify } from 'yaml';

const K8S = fileURLToPath(new URL('.', import.meta.url));
/** The label that tells a pool's pods apart; the default pool's pods carry none. */
export const POOL_LABEL = 'tributary.dev/pool';
/** Pool pods are `worker-pool`, so that no selector of the default workers reaches them. */
const POOL_COMPONENT = 'worker-pool';

// biome-ignore lint/suspicious/noExplicitAny: manifests are plain YAML trees, checked by kubernetes-models in test/infra.
type Manifest = any;

/** A selector's or a pod template's labels, moved to the pool's pods. */
function poolLabels(labels: Record<string, string>, pool: string): Record<string, string> {
  return { ...labels, 'app.kubernetes.io/component': POOL_COMPONENT, [POOL_LABEL]: pool };
}

function renamed(object: Manifest, name: string): Manifest {
  return { ...object, metadata: { ...object.metadata, name } };
}

/** The pool's copies of the base worker's objects. */
export function renderPool(pool: string, workerYaml: string, networkPolicyYaml: string): Manifest[] {
  if (!isPoolName(pool) || pool === 'default') {
    throw new Error(
      `a pool name is 1-40 of a-z, 0-9 and -, starting with a letter, and not "default"; got "${pool}"`,
    );
  }
  const objects: Manifest[] = [...parseAllDocuments(workerYaml), ...parseAllDocuments(networkPolicyYaml)]
    .map((doc) => doc.toJS())
    .filter(Boolean);
  const find = (kind: string, name: string) => {
    const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (!found) throw new Error(`the base has no ${kind} ${name}`);
    return structuredClone(found);
  };
  const name = `tributary-worker-${pool}`;

  const deployment = renamed(find('Deployment', 'tributary-worker'), name);
  const spec = deployment.spec;
  spec.selector.matchLabels = poolLabels(spec.selector.matchLabels, pool);
  spec.template.metadata.labels = poolLabels(spec.template.metadata.labels, pool);
  for (const constraint of spec.template.spec.topologySpreadConstraints ?? []) {
    constraint.labelSelector.matchLabels = poolLabels(constraint.labelSelector.matchLabels, pool);
  }
  const worker = spec.template.spec.containers.find((c: Manifest) => c.name === 'worker');
  if (!worker) throw new Error('the base Deployment has no container named worker');
  worker.env = [
    ...(worker.env ?? []).filter((e: Manifest) => e.name !== 'WORKER_POOL'),
    { name: 'WORKER_POOL', value: pool },
  ];

  const scaled = renamed(find('ScaledObject', 'tributary-worker'), name);
  scaled.spec.scaleTargetRef.name = name;
  for (const trigger of scaled.spec.triggers) {
    trigger.metadata.query = trigger.metadata.query.replaceAll('pool="default"', `pool="${pool}"`);
    if (!trigger.metadata.query.includes(`pool="${pool}"`)) {
      throw new Error(
        "the base ScaledObject does not read the default pool's gauges: nothing to point at the pool",
      );
    }
  }
  // One stays up while the pool's channels are quiet, so that a message finds a worker at once rather
  // than being told its pool has none while the first one starts. Without its gauges (a pool before
  // its first worker reports, Prometheus failing) it holds that one, not the default fleet's fallback:
  // a pool's workers may be costly (GPU nodes).
  scaled.spec.minReplicaCount = 1;
  scaled.spec.fallback = { ...scaled.spec.fallback, replicas: 1 };
  for (const trigger of scaled.spec.triggers) {
    const demand = Number(trigger.metadata.threshold) * scaled.spec.fallback.replicas;
    trigger.metadata.query = trigger.metadata.query.replace(/vector\(\d+\)/, `vector(${demand})`);
  }

  const budget = renamed(find('PodDisruptionBudget', 'tributary-worker'), name);
  budget.spec.selector.matchLabels = poolLabels(budget.spec.selector.matchLabels, pool);

  // The Service keeps the worker's labels, so the workers' ServiceMonitor scrapes the pool too.
  const metrics = renamed(find('Service', 'tributary-worker-metrics'), `${name}-metrics`);
  metrics.spec.selector = poolLabels(metrics.spec.selector, pool);

  const policy = renamed(find('NetworkPolicy', 'tributary-worker'), name);
  policy.spec.podSelector.matchLabels = poolLabels(policy.spec.podSelector.matchLabels, pool);

  return [deployment, metrics, scaled, budget, policy];
}

const kustomization = (
  pool: string,
) => `# GENERATED by infra/k8s/generate-pool.ts: do not edit; run it again after editing base/worker.yaml.
# Worker pool "${pool}" (docs/adr/0060): workers with WORKER_POOL=${pool}, which serve the threads of
# the routes whose profile says \`pool: ${pool}\`, and only those. In your overlay:
#   components:
#     - ../../components/pool-${pool}
# and patch the Deployment tributary-worker-${pool} as you patch tributary-worker (its agent, its
# resources), and the ScaledObject's query with your namespace as scaling.yaml does: they start as
# copies of the base's.
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
  - worker.yaml
`;

function files(pool: string): Record<string, string> {
  const read = (file: string) => readFileSync(join(K8S, 'base', file), 'utf8');
  const objects = renderPool(pool, read('worker.yaml'), read('network-policy.yaml'));
  const header = `# GENERATED by infra/k8s/generate-pool.ts from base/worker.yaml for pool "${pool}": do not edit.\n`;
  return {
    'kustomization.yaml': kustomization(pool),
    'worker.yaml': header + objects.map((object) => stringify(object, { lineWidth: 0 })).join('---\n'),
  };
}

export function poolDir(pool: string): string {
  return join(K8S, 'components', `pool-${pool}`);
}

/** Whether the committed component of `pool` is what the base renders now. */
export function poolUpToDate(pool: string): boolean {
  return Object.entries(files(pool)).every(([file, text]) => {
    const path = join(poolDir(pool), file);
    return existsSync(path) && readFileSync(path, 'utf8') === text;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [pool, flag] = process.argv.slice(2);
  if (pool === undefined) {
    process.stderr.write('usage: npx tsx infra/k8s/generate-pool.ts NAME [--check]\n');
    process.exit(2);
  }
  if (flag === '--check') {
    if (!poolUpToDate(pool)) {
      process.stderr.write(
        `components/pool-${pool} is out of date: run npx tsx infra/k8s/generate-pool.ts ${pool}\n`,
      );
      process.exit(1);
    }
  } else {
    mkdirSync(poolDir(pool), { recursive: true });
    for (const [file, text] of Object.entries(files(pool))) writeFileSync(join(poolDir(pool), file), text);
    process.stdout.write(`wrote infra/k8s/components/pool-${pool}/\n`);
  }
}
