// Renders the Kustomize overlays with a real `kubectl kustomize` and gives the infra tests typed-enough
// views of what came out.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as kedaV1alpha1 from '@kubernetes-models/keda/keda.sh/v1alpha1';
import * as monitoringV1 from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { beforeAll, expect } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { AGENT_CREDENTIAL_ENV } from '../../infra/k8s/env-contract.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const OVERLAYS = ['dev', 'production'] as const;
export type Overlay = (typeof OVERLAYS)[number];

// Loosely typed views of rendered objects: the schema test below is what vouches for their shape.
// biome-ignore lint/suspicious/noExplicitAny: rendered YAML, validated by kubernetes-models
export type K8sObject = any;
// biome-ignore lint/suspicious/noExplicitAny: rendered YAML, validated by kubernetes-models
export type Container = any;

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

/** What `kubectl kustomize` printed for an overlay: its objects, and what it warned about on stderr. */
export interface Rendered {
  objects: K8sObject[];
  warnings: string;
}

export function render(overlay: Overlay): Promise<Rendered> {
  return renderDir(join(root, 'infra/k8s/overlays', overlay));
}

/** The real-agent components (infra/k8s/components/agent-*), each added to an overlay by its users. */
export const AGENT_COMPONENTS = ['agent-claude', 'agent-codex', 'agent-gemini'] as const;
export type AgentComponent = (typeof AGENT_COMPONENTS)[number];

/**
 * An overlay with a component added, as a user's overlay adds it: a kustomization in a temporary
 * folder naming both by relative path (Kustomize refuses absolute ones).
 */
export async function renderWithComponent(
  overlay: Overlay,
  ...components: (AgentComponent | `pool-${string}` | 'slack-teams')[]
): Promise<Rendered> {
  const dir = await mkdtemp(join(tmpdir(), 'tributary-kustomize-'));
  try {
    const path = (target: string) => relative(dir, join(root, 'infra/k8s', target));
    // The overlay's namespace too: a component's own resources take it only from the kustomization
    // that names the component, and references to the overlay's generated ConfigMaps resolve only
    // within one namespace.
    const { namespace } = parse(
      readFileSync(join(root, 'infra/k8s/overlays', overlay, 'kustomization.yaml'), 'utf8'),
    ) as { namespace: string };
    await writeFile(
      join(dir, 'kustomization.yaml'),
      `namespace: ${namespace}\nresources:\n  - ${path(`overlays/${overlay}`)}\ncomponents:\n${components
        .map((component) => `  - ${path(`components/${component}`)}\n`)
        .join('')}`,
    );
    return await renderDir(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Objects whose kind has no schema known here, or that fail their schema, with the reason. */
export function schemaFailures(objects: K8sObject[]): string[] {
  const failures: string[] = [];
  for (const object of objects) {
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
  return failures;
}

async function renderDir(dir: string): Promise<Rendered> {
  let stdout: string;
  let stderr: string;
  try {
    ({ stdout, stderr } = await promisify(execFile)(kubectl, ['kustomize', dir], {
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        `'${kubectl}' was not found: rendering the Kustomize overlays needs kubectl. ` +
          "Install Debian's package kubernetes-client (apt-get install kubernetes-client), as .ci/run does.",
      );
    }
    throw new Error(`${kubectl} kustomize ${dir} failed: ${(error as { stderr?: string }).stderr ?? error}`);
  }
  const objects = parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
  return { objects, warnings: stderr };
}

/**
 * Renders every overlay once, before the file's tests. A render failure (kubectl missing included) is
 * kept and thrown by every test that reads the overlay, so each of them fails with the reason rather
 * than being reported as skipped.
 */
export function renderOverlaysBeforeAll(): (overlay: Overlay) => Rendered {
  const rendered = new Map<Overlay, Rendered | Error>();
  beforeAll(async () => {
    for (const overlay of OVERLAYS) {
      rendered.set(overlay, await render(overlay).catch((error: Error) => error));
    }
  });
  return (overlay) => {
    const result = rendered.get(overlay);
    if (result instanceof Error) throw result;
    if (!result) throw new Error(`overlay ${overlay} was not rendered`);
    return result;
  };
}

export const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
export const named = (objects: K8sObject[], kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered overlay`);
  return found;
};
export const selects = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
export const podTemplates = (objects: K8sObject[]) =>
  [...ofKind(objects, 'Deployment'), ...ofKind(objects, 'StatefulSet')].map((o) => ({
    owner: o,
    labels: o.spec.template.metadata.labels as Record<string, string>,
    spec: o.spec.template.spec,
  }));
export const tributaryDeployments = (objects: K8sObject[]) =>
  ofKind(objects, 'Deployment').filter(
    (d) => d.spec.template.spec.containers[0].image.split(':')[0].split('/').at(-1) === 'tributary',
  );
export const containerOf = (objects: K8sObject[], deployment: string): Container =>
  named(objects, 'Deployment', deployment).spec.template.spec.containers[0];

/** The Secret a real agent's key comes from: created by the user, never rendered. */
export const AGENT_SECRET = 'tributary-agent';

/** The dev Redis component's generated Secret: its password. */
export const REDIS_SECRET = 'tributary-redis';

/** The Secret the deployments read: rendered in dev; in production created from the same template. */
export const secretTemplate = parse(
  readFileSync(join(root, 'infra/k8s/secret/secret.yaml'), 'utf8'),
) as K8sObject;

/** Every variable a container sees, with its literal value where the manifests set one. */
export function environment(objects: K8sObject[], container: Container): Map<string, string | undefined> {
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
    const ref = entry.valueFrom?.secretKeyRef;
    if (ref) {
      // The Secret template, the dev Redis's generated password (its name carries a hash), or the real
      // agent's key in a Secret of its own (infra/k8s/components/agent-*).
      let keys: readonly string[];
      if (ref.name.startsWith(`${REDIS_SECRET}-`))
        keys = Object.keys(named(objects, 'Secret', ref.name).data);
      else if (ref.name === AGENT_SECRET) keys = AGENT_CREDENTIAL_ENV;
      else {
        expect(ref.name).toBe(secretTemplate.metadata.name);
        keys = Object.keys(secretTemplate.stringData);
      }
      expect(keys).toContain(ref.key);
    }
    env.set(entry.name, entry.value);
  }
  return env;
}
