import type { ProcessingMode } from '@tributary/queue/config';

/** How a thread's messages are batched into turns: MESSAGE_PROCESSING_MODE(S) and a route's profile. */
export const PROCESSING_MODES: readonly ProcessingMode[] = ['per-thread', 'per-lane', 'per-message'];
