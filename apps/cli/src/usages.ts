/**
 * What `tributary <command> --help` prints, per command: kept apart from the commands themselves, so
 * that asking how to call a server command does not load the server (main.ts).
 */
export const USAGES = {
  dev: `usage: tributary dev

Runs the whole stack locally in one process: Redis (REDIS_URL when it answers, else a private
redis-server keeping its data in .tributary/redis), ingress, a worker with its agent (the built-in
one unless AGENT_COMMAND names another) and a local reply receiver. \`tributary send\` talks to it from
this folder or any folder below it. Takes no options: environment variables configure it as they do
ingress and worker. Ctrl-C stops it; running turns are handed back and resume on the next start.`,
  send: `usage: tributary send "text" ["more text" ...] [--thread t] [--from name] [--url URL] [--timeout-ms N]

Posts each text as a signed openab.gateway.event.v1 to the local stack (tributary dev, found from this
folder or any folder above it), in order, then prints the agent's replies until the last message is
answered.

  --thread t        the conversation (default main)
  --from name       the sender's name (default $USER)
  --url URL         ingress to post to (default: the running dev stack's)
  --timeout-ms N    how long to wait for the last reply (default 60000)
  --answer option   answers the agent's permission requests (AGENT_PERMISSION_POLICY=ask) with this
                    option, by name or number; without it they are asked at the terminal`,
  ingress: `usage: tributary ingress

Serves the platform webhooks (POST /webhooks/*) and queues each verified message in Redis; /livez,
/readyz and /metrics on the same port. Takes no options: it is configured by environment variables
(PORT, HOST, REDIS_URL, each platform's verification secret; README, "Running ingress").
Stops on SIGTERM or SIGINT after draining the requests in flight.`,
  worker: `usage: tributary worker

Claims threads from Redis, drives the ACP agent (AGENT_COMMAND, default the built-in agent) and
delivers its replies; /livez, /readyz and /metrics on METRICS_PORT. Takes no options: it is configured
by environment variables (REDIS_URL, AGENT_*, each platform's bot token; README, "Running a worker").
On SIGTERM or SIGINT it lets running turns finish for SHUTDOWN_GRACE_MS, hands the rest back, exits.`,
  'discord-forwarder': `usage: tributary discord-forwarder

Holds the Discord Gateway connection and forwards each message, signed, to ingress. Takes no options:
it is configured by environment variables (DISCORD_BOT_TOKEN, DISCORD_FORWARDER_SECRET,
FORWARD_URL; README, "Platforms").`,
  'agent-host': `usage: tributary agent-host

Runs a worker's agents in a container of their own, without the worker's secrets, processes or files
(docs/adr/0045): listens on AGENT_HOST_SOCKET (default /run/tributary/agent-host.sock, a folder shared
with the worker, which sets AGENT_SANDBOX=agent-host) and starts agents there, each in this container's
sandbox (AGENT_SANDBOX: bubblewrap, or off), only while the worker's warden holds its lease. When the
lease breaks or stops pulsing, every agent and all it started is killed. Takes no options.`,
  doctor: `usage: tributary doctor [--prompt "text"] [--timeout-ms N]

Starts the configured agent exactly as a worker would (AGENT_COMMAND, AGENT_ENV, AGENT_SANDBOX,
AGENT_AUTH_METHOD, AGENT_MCP_SERVERS) in a room of its own under AGENT_WORKSPACES, says which isolation
is in force, initializes it, authenticates when configured, opens a session, puts it in AGENT_SESSION_MODE when set and, with --prompt, sends one prompt. Prints what the agent offers and, for each problem, the fix.
Needs no Redis. Exit status: 0 a worker could use the agent, 1 it could not, 2 usage error.

  --prompt "text"   send one prompt and print the reply
  --timeout-ms N    bound on the prompt's answer (default 120000)`,
  commands: `usage: tributary commands register
       tributary commands slack-manifest --url URL

register        registers /cancel, /cancel-all, /reset, /status and /help as Discord's global
                application commands (DISCORD_BOT_TOKEN) and as Telegram's command list
                (TELEGRAM_BOT_TOKEN); exit 1 when a platform refused
slack-manifest  prints the Slack app manifest part that routes /tributary and the events to ingress
                at URL (paste it into the app's manifest)`,
  routes: `usage: tributary routes check FILE [--platform P [--workspace W] --channel C]

Reads a route table (ROUTES_FILE) as ingress does and prints its routes, or the first problem with
its line and column. With a place, also prints the route a message from there takes and its profile
(\`default\`: the environment's settings). Exit status: 0 the file is usable, 1 it is not, 2 usage error.

  --platform P     slack | telegram | discord | gateway
  --workspace W    Slack's team id or Discord's guild id
  --channel C      the channel's id`,
  admin: `usage: tributary admin <what> [arguments] [--json] [--limit N] [--cursor C] [--all-pages]

Lists and acts on the fleet through the admin API (TRIBUTARY_ADMIN_URL, TRIBUTARY_ADMIN_TOKEN; by
default the local dev stack's).

  overview                          threads by state, backlog, workers, dead items by reason
  threads [--state S]               running | runnable | scheduled | paused | idle | all (default)
  thread <thread>                   a thread's state, history, dead letters and replies
  message <message id>              where a platform message went, in whichever thread
  dead-letters [--reason R]         newest first, with the counts by reason
  dead-replies [--reason R]
  workers                           each worker's pool, state, threads, sessions, agent processes
  pools                             each worker pool's workers taking turns and threads waiting
  audit                             the operators' actions, newest first

  pause|resume|cancel|cancel-all|reset <thread>...   or --state S for every thread in a state
  redrive-letter|discard-letter <thread> <batch id>
  redrive-letters|discard-letters --reason R | --everything
  redrive-reply|discard-reply <thread> <reply id>
  redrive-replies|discard-replies --reason R | --everything
  drain <worker>                    stops taking turns, hands its threads back, stays up
  usage [--days N]                  tokens and cost per route and day (UTC), today first (N: 1-35, 7)
  budget <route> <tokens>|--clear   a route's daily token budget, over the route table's; in force
                                    for its next turn

  --json        print the API's JSON instead of a table
  --all-pages   follow the cursor to the end of a list
  --dry-run     with a filter: print what it matches, do nothing
  --cursor C    a list's next page; with a filter, where the previous action's scan stopped
  --days N      with usage: how many days back
  --clear       with budget: drop the operator's budget; the route table's applies again

Exit codes: 0 done, 1 failed (unreachable, server error), 2 usage, 3 not found, 4 token refused.`,
} as const;

export type CommandName = keyof typeof USAGES;
