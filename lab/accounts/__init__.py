"""Sign-in and sign-up through django-allauth: local accounts, OpenID Connect, GitHub and Google."""
