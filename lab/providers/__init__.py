"""Provider adapters: one per wire protocol, behind the small interface in `base`."""
