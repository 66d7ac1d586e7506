-- KEYS: slots, state. ARGV: token, successes. Frees the slot and gives back one of the penalty per success.
redis.call('ZREM', KEYS[1], ARGV[1])
local successes = tonumber(ARGV[2])
if successes > 0 then
  local penalty = tonumber(redis.call('HGET', KEYS[2], 'penalty') or '0')
  if penalty > 0 then redis.call('HSET', KEYS[2], 'penalty', math.max(0, penalty - successes)) end
end
return 0
