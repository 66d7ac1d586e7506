-- A waiter asking again. ARGV: take.lua's. Returns {take's answer, calls ahead}.
-- After prelude.lua, prune.lua and take.lua.
local ahead = redis.call('ZRANK', KEYS[4], member)
if not ahead then
  -- Its process's waiting lease ran out (a long stall): it queues again, at the back of its lane.
  redis.call('ZADD', KEYS[4], order, member)
  return {-1, redis.call('ZRANK', KEYS[4], member)}
end
return {take(ahead), ahead}
