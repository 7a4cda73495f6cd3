/**
 * Dispatch policies: what stands between a chat thread and the agent. Tributary's modes forward every
 * message to ingress at once and let the broker form turns; the other three are the policies chat bots
 * commonly use, written as their authors would, in front of a broker that runs one turn per prompt.
 */

/** Workload time: milliseconds since the workload's first message. */
export interface Clock {
  now(): number;
  /** Runs `task` after `ms` of workload time. */
  after(ms: number, task: () => void): { cancel(): void };
}

/**
 * Hands the agent one prompt made of these messages, in order. Resolves when the turn's answer reached
 * the platform, which is when a bot learns that the agent is free again.
 */
export type Submit<M> = (messages: M[]) => Promise<void>;

export interface DispatchPolicy<M> {
  receive(message: M): void;
  /** Nothing waits in the policy and no turn it started is running. */
  settled(): boolean;
}

/** Every message goes to the broker as it arrives; the broker decides what a turn holds. */
export class Forward<M> implements DispatchPolicy<M> {
  private running = 0;

  constructor(private readonly submit: Submit<M>) {}

  receive(message: M): void {
    this.running++;
    void this.submit([message]).finally(() => this.running--);
  }

  settled(): boolean {
    return this.running === 0;
  }
}

/**
 * Waits until the thread has been quiet for `windowMs`, then sends everything received as one prompt.
 * Prompts queue behind a running turn (the broker runs one turn per prompt, in order): nothing is lost,
 * but every first answer waits out the window.
 */
export class Debounce<M> implements DispatchPolicy<M> {
  private buffer: M[] = [];
  private timer: { cancel(): void } | undefined;
  private running = 0;

  constructor(
    private readonly clock: Clock,
    private readonly submit: Submit<M>,
    private readonly windowMs: number,
  ) {}

  receive(message: M): void {
    this.buffer.push(message);
    this.timer?.cancel();
    this.timer = this.clock.after(this.windowMs, () => this.flush());
  }

  settled(): boolean {
    return this.buffer.length === 0 && this.running === 0;
  }

  private flush(): void {
    const prompt = this.buffer;
    this.buffer = [];
    this.timer = undefined;
    this.running++;
    void this.submit(prompt).finally(() => this.running--);
  }
}

/**
 * An idle agent gets the message at once; while a turn runs, the newest message waits in a single slot
 * and replaces whatever waited there before. The slot is sent when the turn ends.
 */
export class OverwriteSlot<M> implements DispatchPolicy<M> {
  private slot: M | undefined;
  private running = false;

  constructor(private readonly submit: Submit<M>) {}

  receive(message: M): void {
    if (this.running) this.slot = message;
    else this.start(message);
  }

  settled(): boolean {
    return !this.running && this.slot === undefined;
  }

  private start(message: M): void {
    this.running = true;
    void this.submit([message]).finally(() => {
      this.running = false;
      const next = this.slot;
      this.slot = undefined;
      if (next !== undefined) this.start(next);
    });
  }
}

/**
 * An idle agent gets the message at once; while a turn runs, messages wait in a bounded queue that
 * drops its oldest entry when full and discards entries older than `maxAgeMs`. One message per turn.
 */
export class DropOldestQueue<M> implements DispatchPolicy<M> {
  private readonly waiting: { message: M; at: number }[] = [];
  private running = false;

  constructor(
    private readonly clock: Clock,
    private readonly submit: Submit<M>,
    private readonly capacity: number,
    private readonly maxAgeMs: number,
  ) {}

  receive(message: M): void {
    if (!this.running) {
      this.start(message);
      return;
    }
    this.waiting.push({ message, at: this.clock.now() });
    if (this.waiting.length > this.capacity) this.waiting.shift();
  }

  settled(): boolean {
    return !this.running && this.waiting.length === 0;
  }

  private start(message: M): void {
    this.running = true;
    void this.submit([message]).finally(() => {
      this.running = false;
      const now = this.clock.now();
      while (this.waiting.length > 0 && now - this.waiting[0]!.at > this.maxAgeMs) this.waiting.shift();
      const next = this.waiting.shift();
      if (next !== undefined) this.start(next.message);
    });
  }
}
