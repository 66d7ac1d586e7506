"""What a Redis client raises when Redis is away (stopped, restarting, unreachable): redis-py's own errors, or the
socket's (a refused connection, a timeout). Callers that can do without Redis for a while catch exactly these."""

from redis.exceptions import RedisError

REDIS_DOWN = (RedisError, OSError)
