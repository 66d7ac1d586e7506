-- KEYS: waiters, slots. ARGV: process, token. The slot too: a take whose answer never reached its cancelled caller.
local member = ARGV[1] .. ':' .. ARGV[2]
local ahead = redis.call('ZRANK', KEYS[1], member)
redis.call('ZREM', KEYS[1], member)
redis.call('ZREM', KEYS[2], ARGV[2])
return ahead or 0
