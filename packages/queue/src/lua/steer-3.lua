-- uses: core, batches, receipts
-- Steering (docs/adr/0040): grows the in-flight batch by the messages right behind `through`, the last
-- one the running turn received, so that its holder sends them into the turn only once they are part
-- of the batch: a crash then re-delivers them with it. What an earlier steer took past `through` and
-- the turn never received (refused, or taken for an attempt that gave way to a repair) goes back in
-- line first and is offered again in its place (lib/receipts.lua's untake), so no later message can pass it
-- and the batch is only what its turn received. Only the holder of the lease (owner, fence) may grow
-- it, and only the batch it runs (`batch`: a commit starts the next batch under the same fence). The
-- batch caps hold for the grown batch, so a re-delivered batch is no larger than any other; with
-- `lanes` a steer takes only the lane of the batch's last message. The call also arms the thread
-- (`steer` = the batch): enqueue then tells the holder of each later arrival. A paused thread and the
-- parts of a split batch (`alone`) take nothing.
-- Returns: {OK, count, per entry: stream id and its six fields} | {BATCH_FULL} | {FENCED}
local st = redis.call('HMGET', K.state, 'status', 'owner', 'fence', 'batch', 'acked', 'read', 'alone', 'paused')
if st[1] ~= 'running' or st[2] ~= A.owner or st[3] ~= A.fence or st[4] ~= A.batch then
  return { STATUS.FENCED }
end
redis.call('HSET', K.state, 'steer', A.batch)
untake(K, A.through, st[6])
if st[7] or st[8] == '1' then return { STATUS.OK, 0 } end

local in_flight = redis.call('XRANGE', K.inbox, '(' .. st[5], A.through)
if #in_flight == 0 then return { STATUS.OK, 0 } end
local room = tonumber(A.maxMessages) - #in_flight
local behind = {}
if room > 0 then behind = redis.call('XRANGE', K.inbox, '(' .. A.through, '+', 'COUNT', room) end
if #behind == 0 then
  if room <= 0 and #redis.call('XRANGE', K.inbox, '(' .. A.through, '+', 'COUNT', 1) > 0 then
    return { STATUS.BATCH_FULL }
  end
  return { STATUS.OK, 0 }
end

local tokens = 0
for i = 1, #in_flight do tokens = tokens + tonumber(entry_field(in_flight[i], 3)) end
local lane = entry_lane(in_flight[#in_flight])
local reply = { STATUS.OK, 0 }
local last
for i = 1, #behind do
  local entry = behind[i]
  local tok = tonumber(entry_field(entry, 3))
  if tokens + tok > tonumber(A.maxTokens) then break end
  if A.lanes == '1' and entry_lane(entry) ~= lane then break end
  tokens = tokens + tok
  last = entry[1]
  reply[2] = reply[2] + 1
  reply[#reply + 1] = entry[1]
  for p = 1, 6 do reply[#reply + 1] = entry_field(entry, p) end
end
if last == nil then return { STATUS.BATCH_FULL } end
redis.call('HSET', K.state, 'read', last)
return reply
