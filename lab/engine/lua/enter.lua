-- A call joining the queue, asking for a slot at once when ARGV[10] is '1' (none of its process's waiters of the
-- lane is ahead of it); it renews its process's waiting lease only if it stays. ARGV: take.lua's, ask.
-- Returns {ms to wait, 0 when taken, -1 when the pool is full or it did not ask; calls ahead; the place's score}.
-- After prelude.lua, prune.lua and take.lua.
redis.call('ZADD', KEYS[4], order, member)
local ahead = redis.call('ZRANK', KEYS[4], member)
local wait_ms = -1
if ARGV[10] == '1' then wait_ms = take(ahead) end
if wait_ms == 0 then return {0, 0, order} end
redis.call('ZADD', KEYS[5], now + lease_ms, process)
redis.call('PEXPIRE', KEYS[4], lease_ms * 4)
redis.call('PEXPIRE', KEYS[5], lease_ms * 4)
return {wait_ms, ahead, order}
