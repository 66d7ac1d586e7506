-- Calls joining the queue, each asking for a slot at once when its ask is '1' (none of its process's waiters of the
-- lane is ahead of it); a call renews its process's waiting lease only if it stays. ARGV: take.lua's shared ones,
-- then for each call: token, tokens, lane rank, ask. Returns, for each call in order, 0 when it took its slot (one
-- line for the client to read rather than four), else {ms to wait, or -1 when the pool is full or it did not ask;
-- calls ahead; the place's score}. After prelude.lua, prune.lua and take.lua.
local replies = {}
for i = 7, #ARGV, 4 do
  start(i)
  redis.call('ZADD', KEYS[4], order, member)
  local ahead = redis.call('ZRANK', KEYS[4], member)
  local wait_ms = -1
  if ARGV[i + 3] == '1' then wait_ms = take(ahead) end
  if wait_ms == 0 then
    replies[#replies + 1] = 0
  else
    redis.call('ZADD', KEYS[5], now + lease_ms, process)
    redis.call('PEXPIRE', KEYS[4], lease_ms * 4)
    redis.call('PEXPIRE', KEYS[5], lease_ms * 4)
    replies[#replies + 1] = {wait_ms, ahead, order}
  end
end
return replies
