-- KEYS: slots. How many slots are held now (their lease has not run out). After prelude.lua.
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
