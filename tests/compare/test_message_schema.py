"""The OpenAPI schema describes message lists: a group's `shared_messages`, a variant's `messages` beside its
`prompt` shorthand, each output's `messages` (the list sent) and a round's `parent` and `turn`."""

from drf_spectacular.generators import SchemaGenerator


def components() -> dict:
    return SchemaGenerator(patterns=None).get_schema(request=None, public=True)["components"]["schemas"]


def test_the_schema_describes_messages_parent_and_turn():
    schemas = components()

    message = schemas["MessageInRequest"]
    assert set(message["properties"]) == {"role", "content"} and set(message["required"]) == {"role", "content"}
    assert schemas["MessageRoleEnum"]["enum"] == ["system", "user", "assistant"]
    variant_in = schemas["VariantInRequest"]
    assert variant_in["properties"]["messages"]["items"] == {"$ref": "#/components/schemas/MessageInRequest"}
    assert "exactly one of `messages` and `prompt`" in variant_in["properties"]["messages"]["description"]
    assert "prompt" not in variant_in.get("required", []) and "messages" not in variant_in.get("required", [])
    shared = schemas["GroupInRequest"]["properties"]["shared_messages"]
    assert shared["items"] == {"$ref": "#/components/schemas/MessageInRequest"}

    assert {"prompt", "messages"} <= set(schemas["VariantOut"]["properties"])
    assert "shared_messages" in schemas["GroupOut"]["properties"]
    output = schemas["OutputOut"]["properties"]["messages"]
    assert output["nullable"] is True and "the exact list sent" in output["description"]
    round_out = schemas["RoundOut"]["properties"]
    assert round_out["parent"]["nullable"] is True and round_out["turn"]["type"] == "integer"
    assert "messages" in schemas["RenderedVariantOut"]["properties"]
