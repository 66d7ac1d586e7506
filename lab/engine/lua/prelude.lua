-- The start of every script that needs the time: `now` in ms from the Redis server's clock, so hosts agree.
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
