-- A retry's request. KEYS: slots, requests, state. ARGV: member, rpm, window ms. Returns ms to wait, or 0 when
-- counted. After prelude.lua.
local backoff = tonumber(redis.call('HGET', KEYS[3], 'backoff_until') or '0')
if backoff > now then return backoff - now end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[3]))
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + tonumber(ARGV[3]) - now)
end
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
return 0
