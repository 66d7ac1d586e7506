-- What taking a slot checks, for a waiter `ahead` places from the front: the pool, the back-off, the rpm window and
-- the tpm window. ARGV: process, max_concurrency, rpm, tpm, lease ms, window ms (shared by the calls of one script),
-- then each call's own: token, tokens, lane rank (then what a script adds). start(i) makes the call whose own
-- arguments start at ARGV[i] the current one, with the time read and the sets pruned as a script of its own would;
-- take(ahead) then returns ms to wait, 0 when taken, or -1 when the pool is full.
local process = ARGV[1]
local max_concurrency, rpm, tpm = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local lease_ms, window_ms = tonumber(ARGV[5]), tonumber(ARGV[6])
local token, member, tokens, order
local function start(i)
  now = clock()
  prune()
  token, tokens = ARGV[i], tonumber(ARGV[i + 1])
  member = process .. ':' .. token
  order = tonumber(ARGV[i + 2]) * 1e13 + now
end
local function take(ahead)
  local penalty = tonumber(redis.call('HGET', KEYS[6], 'penalty') or '0')
  local allowed = math.max(1, max_concurrency - penalty)
  if ahead >= allowed - redis.call('ZCARD', KEYS[1]) then return -1 end
  local backoff = tonumber(redis.call('HGET', KEYS[6], 'backoff_until') or '0')
  if backoff > now then return backoff - now end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window_ms)
  if redis.call('ZCARD', KEYS[2]) >= rpm then
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    return math.max(1, tonumber(oldest[2]) + window_ms - now)
  end
  if tpm > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window_ms)
    local used = 0
    for _, entry in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
      used = used + tonumber(string.match(entry, ':(%d+)$'))
    end
    if used > 0 and used + tokens > tpm then
      local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
      return math.max(1, tonumber(oldest[2]) + window_ms - now)
    end
    redis.call('ZADD', KEYS[3], now, token .. ':' .. tokens)
    redis.call('PEXPIRE', KEYS[3], window_ms)
  end
  redis.call('ZREM', KEYS[4], member)
  redis.call('ZADD', KEYS[1], now + lease_ms, token)
  redis.call('PEXPIRE', KEYS[1], lease_ms * 2)
  redis.call('ZADD', KEYS[2], now, token .. ':1')
  redis.call('PEXPIRE', KEYS[2], window_ms)
  return 0
end
