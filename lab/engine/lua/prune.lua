-- prune() drops the slots whose lease ran out, and the waiters of every process whose waiting lease ran out (a dead
-- process's calls leave the queue). Needs `now` (prelude.lua).
local function prune()
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  for _, process in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now)) do
    local gone = {}
    for _, member in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
      if string.sub(member, 1, #process + 1) == process .. ':' then table.insert(gone, member) end
    end
    if #gone > 0 then redis.call('ZREM', KEYS[4], unpack(gone)) end
    redis.call('ZREM', KEYS[5], process)
  end
end
