"""The voting API: votes, reports and leaderboards, the inbox, voter quality, prompt standing, rounds saved as rows."""
