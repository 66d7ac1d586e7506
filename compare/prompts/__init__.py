"""The prompt library: named prompts with numbered versions, their lineage, diffs and YAML import/export."""
