/** A Redis for one test suite. Only a server the harness owns can be killed, restarted or wiped. */
export interface RedisHandle {
  readonly url: string;
  readonly owned: boolean;
  /**
   * Kills the server abruptly (default SIGKILL): whatever was not yet on disk is gone. SIGSTOP and
   * SIGCONT freeze and thaw it.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same port and data folder (the AOF is replayed). */
  restart(): Promise<void>;
  /** Deletes the data folder; the next restart comes up empty. */
  wipe(): Promise<void>;
  stop(): Promise<void>;
}
