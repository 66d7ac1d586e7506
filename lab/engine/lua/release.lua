-- KEYS: slots, state. ARGV, for each call: token, successes. Frees each slot and gives back one of the penalty per
-- success. Returns 0, the reply of every call.
for i = 1, #ARGV, 2 do
  redis.call('ZREM', KEYS[1], ARGV[i])
  local successes = tonumber(ARGV[i + 1])
  if successes > 0 then
    local penalty = tonumber(redis.call('HGET', KEYS[2], 'penalty') or '0')
    if penalty > 0 then redis.call('HSET', KEYS[2], 'penalty', math.max(0, penalty - successes)) end
  end
end
return 0
