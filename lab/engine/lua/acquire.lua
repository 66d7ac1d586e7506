-- Waiters asking again. ARGV: take.lua's shared ones, then for each call: token, tokens, lane rank. Returns, for
-- each call in order, {take's answer, calls ahead}. After prelude.lua, prune.lua and take.lua.
local replies = {}
for i = 7, #ARGV, 3 do
  start(i)
  local ahead = redis.call('ZRANK', KEYS[4], member)
  if not ahead then
    -- Its process's waiting lease ran out (a long stall): it queues again, at the back of its lane.
    redis.call('ZADD', KEYS[4], order, member)
    replies[#replies + 1] = {-1, redis.call('ZRANK', KEYS[4], member)}
  else
    replies[#replies + 1] = {take(ahead), ahead}
  end
end
return replies
