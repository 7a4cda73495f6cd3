/**
 * Every adapter's thread key starts with the platform whose route accepted it (`slack:…`,
 * `gateway:…`), which is also the platform that answers. The event's own platform may differ: a
 * gateway relays messages of upstream platforms, and replies still go back through the gateway.
 */
export function platformOfThread(thread: string): string {
  return thread.slice(0, Math.max(0, thread.indexOf(':')));
}
