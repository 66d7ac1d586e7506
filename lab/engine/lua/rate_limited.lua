-- A 429. KEYS: state. ARGV: delay ms, max_concurrency, memory ms. Halves the calls allowed at once and pushes the
-- connection back. After prelude.lua.
local until_ms = now + tonumber(ARGV[1])
if until_ms > tonumber(redis.call('HGET', KEYS[1], 'backoff_until') or '0') then
  redis.call('HSET', KEYS[1], 'backoff_until', until_ms)
end
local max_concurrency = tonumber(ARGV[2])
local penalty = tonumber(redis.call('HGET', KEYS[1], 'penalty') or '0')
local allowed = math.max(1, max_concurrency - penalty)
redis.call('HSET', KEYS[1], 'penalty', max_concurrency - math.max(1, math.floor(allowed / 2)))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 0
