import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RouteFile } from '../src/routes/route-file.js';
import { DEFAULT_ROUTE, RouteTable, RouteTableError, readThreadRoute } from '../src/routes/route-table.js';

const TABLE = `# Two teams, one fleet.
profiles:
  careful:
    permissionPolicy: ask
    permissionRules:
      read: allow-once
    approvers: [slack:U0LEAD, slack:group:S0OPS]
  open:
    permissionPolicy: allow-once
    allowedUsers: ["42", "43"]

routes:
  - name: frontend
    platform: slack
    workspace: T0ACME
    channel: C0FRONT*
    profile: careful
  - name: support
    platform: telegram
    channel: "-100?"
    profile: open
  - name: acme-rest
    platform: slack
    workspace: T0ACME
    profile: open
    dailyTokenBudget: 2000000
`;

describe('a route table', () => {
  const table = RouteTable.parse(TABLE, 'routes.yaml');

  it('maps platform, workspace and channel (ids or patterns) to a profile; the first match wins', () => {
    expect(table.names).toEqual(['frontend', 'support', 'acme-rest']);
    expect(table.resolve({ platform: 'slack', workspaceId: 'T0ACME', channelId: 'C0FRONTEND' })).toEqual({
      route: 'frontend',
      profile: {
        permissionPolicy: 'ask',
        permissionRules: { read: 'allow-once' },
        approvers: ['slack:U0LEAD', 'slack:group:S0OPS'],
      },
    });
    expect(table.resolve({ platform: 'slack', workspaceId: 'T0ACME', channelId: 'C0OTHER' }).route).toBe(
      'acme-rest',
    );
    expect(table.resolve({ platform: 'telegram', channelId: '-1007' }).route).toBe('support');
    expect(table.resolve({ platform: 'telegram', channelId: '-10077' })).toBe(DEFAULT_ROUTE);
    // A route that names a workspace matches no message without one, nor one of another workspace.
    expect(table.resolve({ platform: 'slack', channelId: 'C0FRONTEND' })).toBe(DEFAULT_ROUTE);
    expect(table.resolve({ platform: 'slack', workspaceId: 'T0OTHER', channelId: 'C0FRONT' })).toBe(
      DEFAULT_ROUTE,
    );
    // Pattern characters other than * and ? are literal.
    const dotted = RouteTable.parse(
      'profiles: {p: {}}\nroutes: [{name: d, platform: gateway, channel: "a.b", profile: p}]',
      'x',
    );
    expect(dotted.resolve({ platform: 'gateway', channelId: 'aXb' })).toBe(DEFAULT_ROUTE);
    expect(dotted.resolve({ platform: 'gateway', channelId: 'a.b' }).route).toBe('d');
  });

  it('gives the daily token budget and the turn limit of each route that sets one', () => {
    expect(table.budgets()).toEqual(new Map([['acme-rest', 2_000_000]]));
    expect(table.turnLimits()).toEqual(new Map());
    const limited = RouteTable.parse(
      'profiles: {p: {}}\nroutes:\n  - {name: a, platform: slack, profile: p, maxConcurrentTurns: 3}\n',
      'routes.yaml',
    );
    expect(limited.turnLimits()).toEqual(new Map([['a', 3]]));
    expect(() =>
      RouteTable.parse(
        'profiles: {p: {}}\nroutes:\n  - {name: a, platform: slack, profile: p, maxConcurrentTurns: 0}\n',
        'routes.yaml',
      ),
    ).toThrow(/routes.yaml:3:.*maxConcurrentTurns must be a whole number of at least 1/);
  });

  it('gives the dispatch weight of each route that sets one, from 1 to 100', () => {
    expect(table.dispatchWeights()).toEqual(new Map());
    const weighted = RouteTable.parse(
      'profiles: {p: {}}\nroutes:\n  - {name: a, platform: slack, profile: p, dispatchWeight: 4}\n  - {name: b, platform: slack, profile: p}\n',
      'routes.yaml',
    );
    expect(weighted.dispatchWeights()).toEqual(new Map([['a', 4]]));
    for (const weight of ['0', '101', '1.5', '"2"']) {
      expect(() =>
        RouteTable.parse(
          `profiles: {p: {}}\nroutes:\n  - {name: a, platform: slack, profile: p, dispatchWeight: ${weight}}\n`,
          'routes.yaml',
        ),
      ).toThrow(/routes.yaml:3:.*dispatchWeight must be a whole number from 1 to 100/);
    }
  });

  it("gives a conversation's messages a minute where its route sets them", () => {
    const limited = RouteTable.parse(
      'profiles: {p: {}}\nroutes:\n  - {name: a, platform: slack, channel: "C1*", profile: p, messagesPerMinute: 30}\n',
      'routes.yaml',
    );
    expect(limited.messagesPerMinute({ platform: 'slack', channelId: 'C12' })).toBe(30);
    expect(limited.messagesPerMinute({ platform: 'slack', channelId: 'C2' })).toBeUndefined();
    expect(() =>
      RouteTable.parse(
        'profiles: {p: {}}\nroutes:\n  - {name: a, platform: slack, profile: p, messagesPerMinute: -1}\n',
        'routes.yaml',
      ),
    ).toThrow(/routes.yaml:3:.*messagesPerMinute must be a whole number of at least 1/);
  });

  it("carries a profile's processing mode and batch caps to its threads' record", () => {
    const batched = RouteTable.parse(
      [
        'profiles:',
        '  one-by-one: {processingMode: per-message}',
        '  small: {processingMode: per-lane, maxBatchMessages: 3, maxBatchTokens: 4000}',
        'routes:',
        '  - {name: support, platform: slack, channel: C1, profile: one-by-one}',
        '  - {name: chatty, platform: slack, profile: small}',
        '',
      ].join('\n'),
      'routes.yaml',
    );
    expect(batched.resolve({ platform: 'slack', channelId: 'C1' }).profile).toEqual({
      processingMode: 'per-message',
    });
    const chatty = batched.resolve({ platform: 'slack', channelId: 'C2' });
    expect(chatty.profile).toEqual({ processingMode: 'per-lane', maxBatchMessages: 3, maxBatchTokens: 4000 });
    expect(readThreadRoute(JSON.stringify(chatty))).toEqual(chatty);
    expect(() => RouteTable.parse('profiles:\n  p: {processingMode: per-day}\n', 'routes.yaml')).toThrow(
      /routes.yaml:2:.*processingMode must be one of per-thread, per-lane, per-message; got "per-day"/,
    );
    expect(() => RouteTable.parse('profiles:\n  p: {maxBatchMessages: 0}\n', 'routes.yaml')).toThrow(
      /routes.yaml:2:.*maxBatchMessages must be a whole number of at least 1/,
    );
  });

  it("carries a profile's session mode and MCP servers to its threads' record", () => {
    const moded = RouteTable.parse(
      [
        'profiles:',
        '  planning:',
        '    sessionMode: plan',
        '    steering: true',
        '    mcpServers:',
        '      - {name: tickets, command: /usr/bin/mcp-tickets, args: [--ro]}',
        '      - {type: http, name: docs, url: "https://mcp.example/docs"}',
        'routes:',
        '  - {name: plans, platform: slack, profile: planning}',
        '',
      ].join('\n'),
      'routes.yaml',
    );
    const route = moded.resolve({ platform: 'slack', channelId: 'C1' });
    expect(route.profile).toEqual({
      sessionMode: 'plan',
      steering: true,
      mcpServers: [
        { name: 'tickets', command: '/usr/bin/mcp-tickets', args: ['--ro'], env: [] },
        { type: 'http', name: 'docs', url: 'https://mcp.example/docs', headers: [] },
      ],
    });
    expect(readThreadRoute(JSON.stringify(route))).toEqual(route);
    expect(() => RouteTable.parse('profiles:\n  p: {sessionMode: ""}\n', 'routes.yaml')).toThrow(
      /routes.yaml:2:.*sessionMode must be a non-empty string/,
    );
    expect(() =>
      RouteTable.parse(
        'profiles:\n  p:\n    mcpServers:\n      - {name: x, url: "http://h/"}\n',
        'routes.yaml',
      ),
    ).toThrow(/routes.yaml:4:.*mcpServers: server 0: unknown field "url" for a stdio server/);
    expect(() => RouteTable.parse('profiles:\n  p: {steering: "yes"}\n', 'routes.yaml')).toThrow(
      /routes.yaml:2:.*steering must be true or false/,
    );
  });

  it('is empty for an empty file: every thread takes the default route', () => {
    expect(RouteTable.parse('', 'empty.yaml').resolve({ platform: 'slack', channelId: 'C1' })).toBe(
      DEFAULT_ROUTE,
    );
  });

  it.each([
    ['routes: [', 1, 'routes.yaml:1:'],
    ['profiles: {}\nroutes:\n  - name: a\n    platform: slack\n    profile: nope\n', 5, 'no profile "nope"'],
    [
      'profiles: {p: {}}\nroutes:\n  - name: a\n    platform: irc\n    profile: p\n',
      4,
      'platform must be one of',
    ],
    ['profiles: {p: {}}\nroutes:\n  - platform: slack\n    profile: p\n', 3, '"name" is missing'],
    [
      'profiles: {p: {}}\nroutes:\n  - name: Bad_Name\n    platform: slack\n    profile: p\n',
      3,
      'name must be',
    ],
    [
      'profiles: {p: {}}\nroutes:\n  - name: default\n    platform: slack\n    profile: p\n',
      3,
      'not "default"',
    ],
    [
      'profiles: {p: {}}\nroutes:\n  - {name: a, platform: slack, profile: p}\n  - {name: a, platform: slack, profile: p}\n',
      4,
      'route "a" is given twice',
    ],
    ['profiles:\n  p:\n    permissionPolicy: maybe\n', 3, 'permissionPolicy must be one of'],
    ['profiles:\n  p:\n    permissionRules:\n      shell: ask\n', 4, 'tool kind must be one of'],
    ['profiles:\n  p:\n    agent: claude\n', 3, 'unknown key "agent"'],
    ['profiles:\n  p:\n    approvers: slack:U1\n', 3, 'approvers must be a list'],
    [
      'profiles:\n  p:\n    approvers:\n      - slack:U1\n      - discord:group:ops\n',
      5,
      'names no group the platform keeps',
    ],
    ['routes: {}\n', 1, 'routes must be a list'],
    [
      'profiles: {p: {}}\nroutes:\n  - name: a\n    platform: slack\n    profile: p\n    dailyTokenBudget: 1.5\n',
      6,
      'dailyTokenBudget must be a whole number of at least 1; got 1.5',
    ],
    [
      'profiles: {p: {}}\nroutes:\n  - name: a\n    platform: slack\n    profile: p\n    dailyTokenBudget: lots\n',
      6,
      'got "lots"',
    ],
    ['hello: world\n', 1, 'unknown key "hello"'],
  ])('refuses %j at line %i, saying why', (text, line, why) => {
    const error = (() => {
      try {
        RouteTable.parse(text, 'routes.yaml');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(RouteTableError);
    expect((error as RouteTableError).line).toBe(line);
    expect((error as Error).message).toMatch(new RegExp(`^routes\\.yaml:${line}:\\d+: `));
    expect((error as Error).message).toContain(why);
  });

  it('reads a thread’s recorded route back, and refuses a record that is not one', () => {
    const route = table.resolve({ platform: 'telegram', channelId: '-1001' });
    expect(readThreadRoute(JSON.stringify(route))).toEqual(route);
    expect(() => readThreadRoute('{"route": "x", "profile": {"permissionPolicy": "sometimes"}}')).toThrow(
      'permissionPolicy must be one of',
    );
    expect(() => readThreadRoute('{"profile": {}}')).toThrow('"route" is missing');
  });
});

describe('a route file', () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  async function routesAt(text: string) {
    const dir = await mkdtemp(join(tmpdir(), 'tributary-routes-'));
    dirs.push(dir);
    const path = join(dir, 'routes.yaml');
    await writeFile(path, text);
    return path;
  }

  it('takes a change once two reads agree; a bad change is reported once and the table in force stays', async () => {
    const path = await routesAt(TABLE);
    const reloads: string[][] = [];
    const invalid: string[] = [];
    const file = await RouteFile.open({
      path,
      reloadMs: 60_000,
      onReload: (table) => reloads.push([...table.names]),
      onInvalid: (error) => invalid.push(error.message),
    });
    try {
      expect(file.current.names).toEqual(['frontend', 'support', 'acme-rest']);
      // Caught mid-write: empty, which alone would be a table without routes. Not used.
      await writeFile(path, '');
      await file.reloadNow();
      await writeFile(path, `${TABLE}  - {name: infra, platform: discord, profile: careful}\n`);
      await file.reloadNow();
      expect(reloads).toEqual([]);
      expect(file.current.names).toEqual(['frontend', 'support', 'acme-rest']);
      await file.reloadNow();
      expect(reloads).toEqual([['frontend', 'support', 'acme-rest', 'infra']]);
      expect(file.current.resolve({ platform: 'discord', channelId: '1' }).route).toBe('infra');

      await writeFile(path, `${TABLE}  - {name: infra, platform: discord}\n`);
      await file.reloadNow();
      await file.reloadNow();
      expect(invalid).toEqual([expect.stringMatching(/routes\.yaml:27:\d+: "profile" is missing/)]);
      expect(file.current.names).toContain('infra');
    } finally {
      file.close();
    }
  });

  it('fails the start on a file it cannot use, naming the line', async () => {
    const path = await routesAt('profiles: {p: {}}\nroutes:\n  - {name: a, platform: slack, profile: q}\n');
    await expect(RouteFile.open({ path, reloadMs: 1000 })).rejects.toThrow(
      /routes\.yaml:3:\d+: no profile "q"/,
    );
    await expect(RouteFile.open({ path: `${path}.missing`, reloadMs: 1000 })).rejects.toThrow(/ENOENT/);
  });
});
