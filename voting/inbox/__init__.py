"""The "To vote" inbox: per person, across a workspace's comparisons, the round where their vote tells the most."""
