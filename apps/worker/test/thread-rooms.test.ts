import {
  link,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ThreadRooms } from '../src/rooms/thread-rooms.js';

let root: string;
let rooms: ThreadRooms;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tributary-rooms-'));
  rooms = new ThreadRooms(root, 'delete', pino({ level: 'silent' }));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const THREAD = 'slack:C1:1712.5';

async function recorded() {
  const found = [];
  for await (const room of rooms.recordedRooms()) found.push(room);
  return found;
}

describe('thread rooms', () => {
  it('puts a thread’s workspace and agent home under {platform}/{channel}/{thread}', async () => {
    const room = await rooms.thread(THREAD);
    expect(room).toEqual({
      workspace: join(root, 'slack', 'C1', '1712.5', 'workspace'),
      home: join(root, 'slack', 'C1', '1712.5', 'home'),
    });
    expect(await readdir(room.workspace)).toEqual([]);
    expect(rooms.roomOf(THREAD)).toEqual(room);
  });

  it('gives a spare’s room to a new thread whole, by a rename', async () => {
    const spare = await rooms.spare();
    await writeFile(join(spare.home, 'agent.json'), 'spare');
    await rooms.adopt(spare, THREAD);
    const room = rooms.roomOf(THREAD);
    expect(await readFile(join(room.home, 'agent.json'), 'utf8')).toBe('spare');
    expect(await readdir(join(root, '.spares'))).toEqual([]);
  });

  it('merges a thread’s files into the spare that takes it over; the thread’s copy of a file wins', async () => {
    const before = await rooms.thread(THREAD);
    await mkdir(join(before.home, '.claude', 'projects'), { recursive: true });
    await writeFile(join(before.home, '.claude', 'projects', 'session.jsonl'), 'turn 1');
    await writeFile(join(before.home, '.claude.json'), 'the thread’s');
    await writeFile(join(before.workspace, 'plan.txt'), 'the plan');

    const spare = await rooms.spare();
    await mkdir(join(spare.home, '.claude'), { recursive: true });
    await writeFile(join(spare.home, '.claude', 'settings.json'), 'from the start');
    await writeFile(join(spare.home, '.claude.json'), 'the spare’s');
    await rooms.adopt(spare, THREAD);

    const room = rooms.roomOf(THREAD);
    expect(await readFile(join(room.workspace, 'plan.txt'), 'utf8')).toBe('the plan');
    expect(await readFile(join(room.home, '.claude', 'projects', 'session.jsonl'), 'utf8')).toBe('turn 1');
    expect(await readFile(join(room.home, '.claude', 'settings.json'), 'utf8')).toBe('from the start');
    expect(await readFile(join(room.home, '.claude.json'), 'utf8')).toBe('the thread’s');
    expect((await readdir(join(root, 'slack', 'C1'))).sort()).toEqual(['1712.5']);
  });

  it('finds the files of an adopt cut short, parked beside the thread, on the thread’s next start', async () => {
    const room = await rooms.thread(THREAD);
    // As a crash leaves it: the thread's folder parked, the spare's not yet in its place.
    const dir = join(root, 'slack', 'C1', '1712.5');
    await writeFile(join(room.workspace, 'plan.txt'), 'the plan');
    await rename(dir, `${dir}.moving`);

    const again = await rooms.thread(THREAD);
    expect(await readFile(join(again.workspace, 'plan.txt'), 'utf8')).toBe('the plan');
    expect(await readdir(join(root, 'slack', 'C1'))).toEqual(['1712.5']);
  });

  it('counts a file it cannot move into the room, and leaves it parked', async () => {
    let stuck = 0;
    const counting = new ThreadRooms(root, 'delete', pino({ level: 'silent' }), () => stuck++);
    const room = await counting.thread(THREAD);
    const dir = join(root, 'slack', 'C1', '1712.5');
    // The parked copy holds a folder where the room now holds a file: no rename can put it there.
    await mkdir(join(`${dir}.moving`, 'workspace', 'notes'), { recursive: true });
    await writeFile(join(room.workspace, 'notes'), 'a file');

    await counting.thread(THREAD);
    expect(stuck).toBe(1);
    expect((await stat(join(`${dir}.moving`, 'workspace', 'notes'))).isDirectory()).toBe(true);
    expect(await readFile(join(room.workspace, 'notes'), 'utf8')).toBe('a file');
  });

  it('ignores a room record that names another thread than its folder’s', async () => {
    await rooms.thread(THREAD);
    await rooms.record(THREAD, 10);
    await writeFile(
      join(root, 'slack', 'C1', '1712.5', 'room.json'),
      JSON.stringify({ thread: 'slack:C1:other', bytes: 10 }),
    );
    expect(await recorded()).toEqual([]);
  });

  it('deletes a spare’s room, and a reset thread’s when so configured', async () => {
    const spare = await rooms.spare();
    await rooms.discard(spare);
    expect(await readdir(join(root, '.spares'))).toEqual([]);
    await rooms.thread(THREAD);
    await rooms.reset(THREAD);
    expect(await readdir(join(root, 'slack', 'C1'))).toEqual([]);
    const keeping = new ThreadRooms(root, 'keep', pino({ level: 'silent' }));
    await keeping.thread(THREAD);
    await keeping.reset(THREAD);
    expect(await readdir(join(root, 'slack', 'C1'))).toEqual(['1712.5']);
  });

  it('measures a room as du does: each hard-linked file once, symbolic links not followed', async () => {
    const room = await rooms.thread(THREAD);
    const empty = (await rooms.measure(THREAD, 1000)).bytes;
    await writeFile(join(room.workspace, 'data.bin'), Buffer.alloc(256 * 1024, 1));
    const one = (await stat(join(room.workspace, 'data.bin'))).blocks * 512;
    await link(join(room.workspace, 'data.bin'), join(room.home, 'same.bin'));
    const outside = join(root, 'outside.bin');
    await writeFile(outside, Buffer.alloc(1024 * 1024, 1));
    await symlink(outside, join(room.workspace, 'link.bin'));

    expect(await rooms.measure(THREAD, 1000)).toEqual({ bytes: empty + one, complete: true });
    expect((await rooms.measure(THREAD, 2)).complete).toBe(false);
  });

  it('deletes an expired thread’s room, and gives it back to a thread that came back meanwhile', async () => {
    const room = await rooms.thread(THREAD);
    await writeFile(join(room.workspace, 'plan.txt'), 'the plan');
    await rooms.record(THREAD, 42);
    const [found] = await recorded();
    expect(found).toMatchObject({ dir: rooms.dirOf(THREAD), thread: THREAD, bytes: 42 });

    // Claimed between the sweep's look and its rename: the second look keeps the room.
    expect(await rooms.expire(found!, async () => false)).toBe(false);
    expect(await readFile(join(room.workspace, 'plan.txt'), 'utf8')).toBe('the plan');

    expect(await rooms.expire(found!, async () => true)).toBe(true);
    expect(await readdir(join(root, 'slack', 'C1'))).toEqual([]);
    expect(await readdir(join(root, '.expired'))).toEqual([]);
    expect(await recorded()).toEqual([]);
  });
});
