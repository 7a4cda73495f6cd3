// The real-agent components (infra/k8s/components/agent-*), each rendered into both overlays as a
// user's overlay adds it: the objects still validate, the agents container runs the agent image and the
// worker the agent's settings, the key comes from the agent's own Secret by reference (never rendered,
// never in a ConfigMap, never given to ingress or the agents container's own environment), AGENT_ENV
// hands exactly that key to the agent, and what the agent writes still lands on writable volumes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { AGENT_CREDENTIAL_ENV, knownEnvNames } from '../../infra/k8s/env-contract.js';
import {
  AGENT_COMPONENTS,
  AGENT_SECRET,
  type AgentComponent,
  containerOf,
  environment,
  type K8sObject,
  named,
  OVERLAYS,
  type Overlay,
  ofKind,
  renderWithComponent,
  root,
  schemaFailures,
} from './rendered-overlays.js';

/** What each component must configure: the command, sign-in and key that docs/agents.md gives. */
const EXPECTED: Record<AgentComponent, { command: string; authMethod?: string; key: string }> = {
  'agent-claude': { command: 'claude-agent-acp', key: 'ANTHROPIC_API_KEY' },
  'agent-codex': { command: 'codex-acp', authMethod: 'openai-api-key', key: 'OPENAI_API_KEY' },
  'agent-gemini': { command: 'gemini --acp', authMethod: 'gemini-api-key', key: 'GEMINI_API_KEY' },
};

/** The worker pod's agents container (`tributary agent-host`). */
const agentsOf = (objects: K8sObject[]) =>
  named(objects, 'Deployment', 'tributary-worker').spec.template.spec.initContainers.find(
    (c: { name: string }) => c.name === 'agents',
  );

const cases = OVERLAYS.flatMap((overlay) =>
  AGENT_COMPONENTS.map((component) => [overlay, component] as const),
);

describe.each(cases)(
  'infra/k8s/overlays/%s with components/%s',
  (overlay: Overlay, component: AgentComponent) => {
    let objects: K8sObject[];
    beforeAll(async () => {
      ({ objects } = await renderWithComponent(overlay, component));
    });
    const expected = EXPECTED[component];

    it('renders objects that all validate against their schemas', () => {
      expect(objects.length).toBeGreaterThan(10);
      expect(schemaFailures(objects)).toEqual([]);
    });

    it('runs the agents container, and only it, on the agent image; the worker has the command and sign-in', () => {
      const worker = containerOf(objects, 'tributary-worker');
      expect(agentsOf(objects).image.split(':')[0]).toBe('tributary-agent');
      expect(worker.image.split(':')[0]).not.toBe('tributary-agent');
      expect(containerOf(objects, 'tributary-ingress').image.split(':')[0]).not.toBe('tributary-agent');
      const env = environment(objects, worker);
      expect(env.get('AGENT_COMMAND')).toBe(expected.command);
      expect(env.get('AGENT_AUTH_METHOD')).toBe(expected.authMethod);
      const known = knownEnvNames();
      expect([...env.keys()].filter((name) => !known.has(name))).toEqual([]);
    });

    it('takes the key from the agent’s own Secret by reference, and hands the agent that key alone', () => {
      const worker = containerOf(objects, 'tributary-worker');
      const entry = worker.env.find((e: { name: string }) => e.name === expected.key);
      expect(entry?.value).toBeUndefined();
      expect(entry?.valueFrom?.secretKeyRef).toEqual({ name: AGENT_SECRET, key: expected.key });
      const env = environment(objects, worker);
      expect(env.get('AGENT_ENV')).toBe(expected.key);
      // Only the agent's own key, and no other agent's.
      const keys = worker.env
        .map((e: { name: string }) => e.name)
        .filter((n: string) => n.endsWith('_API_KEY'));
      expect(keys).toEqual([expected.key]);
      // Rendered nowhere: the user creates it, so an apply never blanks it.
      expect(ofKind(objects, 'Secret').map((s) => s.metadata.name)).not.toContain(AGENT_SECRET);
      for (const map of ofKind(objects, 'ConfigMap')) {
        const credentials: readonly string[] = AGENT_CREDENTIAL_ENV;
        expect(Object.keys(map.data ?? {}).filter((k) => credentials.includes(k))).toEqual([]);
      }
      const ingress = environment(objects, containerOf(objects, 'tributary-ingress'));
      for (const key of AGENT_CREDENTIAL_ENV) expect(ingress.has(key), `ingress: ${key}`).toBe(false);
      // The agent host adds nothing of its own environment to an agent's: the key arrives with each
      // start, from the worker.
      const agents = environment(objects, agentsOf(objects));
      for (const key of AGENT_CREDENTIAL_ENV) expect(agents.has(key), `agents: ${key}`).toBe(false);
    });

    it("keeps AGENT_WORKSPACES (where each agent's HOME is, its room's) and /tmp writable in the agents container", () => {
      const deployment = objects.find(
        (o) => o.kind === 'Deployment' && o.metadata.name === 'tributary-worker',
      );
      const spec = deployment.spec.template.spec;
      const agents = agentsOf(objects);
      expect(agents.securityContext.readOnlyRootFilesystem).toBe(true);
      expect(spec.securityContext.runAsUser).toBe(1000);
      const env = environment(objects, spec.containers[0]);
      for (const path of [env.get('AGENT_WORKSPACES')!, '/tmp']) {
        const mount = agents.volumeMounts.find((m: { mountPath: string }) => m.mountPath === path);
        expect(mount, path).toBeDefined();
        const volume = spec.volumes.find((v: { name: string }) => v.name === mount.name);
        expect(volume.emptyDir ?? volume.persistentVolumeClaim, path).toBeDefined();
      }
    });
  },
);

describe('the agent components and their documentation', () => {
  it('give gemini-cli a longer initialize bound than the default, and name each component in docs/agents.md', async () => {
    const { objects } = await renderWithComponent('dev', 'agent-gemini');
    const env = environment(objects, containerOf(objects, 'tributary-worker'));
    expect(Number(env.get('AGENT_INIT_TIMEOUT_MS'))).toBeGreaterThanOrEqual(30_000);
    const docs = readFileSync(join(root, 'docs/agents.md'), 'utf8');
    for (const component of AGENT_COMPONENTS) expect(docs).toContain(`components/${component}`);
  });
});
