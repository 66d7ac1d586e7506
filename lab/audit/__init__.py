"""The audit log: who changed what in a workspace, and when. Entries name things, never secrets."""
