"""Workspace files: uploaded images, private to their workspace. Owns the upload rules (type sniffed from the bytes,
size and pixel limits), where the bytes live (Django's storage API, under random names), and how a prompt variable
names a file (`{"$file": id}`)."""
