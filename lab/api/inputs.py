"""The base of every API input serializer: a field it does not know is an error naming that field.

DRF drops unknown fields silently, so a misspelt `sharedvariables` or `blid` would be accepted and ignored;
a person sending it means something, and is told what the serializer does know instead.
"""

from rest_framework import serializers

from .. import values

# Sent by HTML forms that post to the API with the session's CSRF token; not data.
IGNORED_FIELDS = frozenset({"csrfmiddlewaretoken"})


class StrictIn(serializers.Serializer):
    def to_internal_value(self, data):
        if hasattr(data, "keys"):
            unknown = sorted(set(map(str, data.keys())) - set(self.fields) - IGNORED_FIELDS)
            if unknown:
                known = ", ".join(name for name, field in self.fields.items() if not field.read_only)
                raise serializers.ValidationError(
                    {values.shown(name): [f"Unknown field; known: {known}."] for name in unknown}
                )
        return super().to_internal_value(data)
