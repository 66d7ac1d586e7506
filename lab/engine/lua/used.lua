-- KEYS: tokens. ARGV: token, estimated, actual. Replaces the tokens counted against tpm with what was reported.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1] .. ':' .. ARGV[2])
if score then
  redis.call('ZREM', KEYS[1], ARGV[1] .. ':' .. ARGV[2])
  redis.call('ZADD', KEYS[1], score, ARGV[1] .. ':' .. ARGV[3])
end
return 0
