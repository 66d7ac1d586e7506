"""The lab REST API: workspaces, connections, tokens, invitations, the audit log, and the parser and errors all use."""
