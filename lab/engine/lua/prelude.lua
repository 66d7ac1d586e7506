-- The start of every script that needs the time: `now` in ms from the Redis server's clock, so hosts agree. A
-- script that runs many calls reads the clock again for each (`clock()`), as each would in a script of its own.
local function clock()
  local parts = redis.call('TIME')
  return tonumber(parts[1]) * 1000 + math.floor(tonumber(parts[2]) / 1000)
end
local now = clock()
