/** Status codes returned by the Lua scripts (first element of every reply); mirrors STATUS in lib.lua. */
export enum ScriptStatus {
  Ok = 0,
  Ring = 1,
  Queued = 2,
  Duplicate = 3,
  Claimed = 10,
  Stale = 11,
  Busy = 12,
  Empty = 13,
  Paused = 14,
  Next = 20,
  Yield = 21,
  Idle = 22,
  Retry = 23,
  NotFound = 30,
  BacklogFull = -1,
  Fenced = -2,
}
