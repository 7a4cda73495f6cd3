import type { AgentRoom } from './agent-sandbox.js';

/**
 * Where agent processes keep their files (docs/adr/0044): each thread has a room (its workspace and
 * its agent home), and a warm spare one of its own until a thread takes it, when the spare's room
 * becomes the thread's (its files joined by the thread's, under the thread's path) while the process
 * keeps seeing it where its sandbox put it.
 */
export interface AgentRooms {
  /** A new, empty room for a process that serves no thread yet. */
  spare(): Promise<AgentRoom>;
  /** The thread's room, created if missing. */
  thread(threadKey: string): Promise<AgentRoom>;
  /** Makes the spare's room the thread's, with whatever the thread's room held; the spare's is gone. */
  adopt(spare: AgentRoom, threadKey: string): Promise<void>;
  /** Deletes a spare's room whose process ended without a thread. */
  discard(spare: AgentRoom): Promise<void>;
}
