"""Invitations to a workspace: by e-mail or as a link, with a role and an expiry; used once, revocable."""
