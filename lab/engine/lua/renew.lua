-- KEYS: slots, waiters, processes. ARGV: lease ms, the process if it waits here (else ''), the slots it holds.
-- After prelude.lua.
local lease_ms = tonumber(ARGV[1])
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[3], now + lease_ms, ARGV[2])
  redis.call('PEXPIRE', KEYS[2], lease_ms * 4)
  redis.call('PEXPIRE', KEYS[3], lease_ms * 4)
end
if #ARGV > 2 then
  for i = 3, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + lease_ms, ARGV[i]) end
  redis.call('PEXPIRE', KEYS[1], lease_ms * 4)
end
return 0
