"""Voter quality: how each person votes (agreement, position preference, speed, volume), flags for owners, and the
owners' exclusions that leave a voter's votes out of the statistics."""
