"""What a judge is shown of the images in the request it judges: the images themselves when its model reads them,
else the text only, and the verdict says so. The one place this rule lives (comparisons' verdicts and experiments'
scorer)."""

from __future__ import annotations

from collections.abc import Sequence

from compare.models import Output
from lab.files.inline import with_image_data
from lab.files.references import image_parts
from lab.providers.known_models import takes_images

IMAGES_INTRO = "The request above also showed these images, in this order:"


def request_images(outputs: Sequence[Output], *, workspace_id: int) -> list[dict]:
    """The image parts of the request the answers were written for (each file once, in order of appearance), with
    their bytes; a file no longer in the workspace is left out."""
    seen: dict[int, dict] = {}
    for output in outputs:
        for message in output.messages or []:
            for part in image_parts(message.get("content")):
                seen.setdefault(part["file"], part)
    if not seen:
        return []
    try:
        (filled,) = with_image_data([{"role": "user", "content": list(seen.values())}], workspace_id=workspace_id)
    except Exception:  # noqa: BLE001 — a missing file only means the judge sees less; the note says what it saw
        return []
    return filled["content"]


def judge_images(judge, images: list[dict]) -> tuple[list[dict], str]:
    """(the images to send the judge, the verdict's note): all of them when its model may read images; none and
    a note saying it judged the text only when its model is known not to. `judge` is a calls.JudgeModel (not
    imported: calls imports this module)."""
    if not images:
        return [], ""
    if takes_images(judge.model) is False:
        count = f"{len(images)} image{'s' if len(images) != 1 else ''}"
        return [], (
            f"Judged the text only: the request held {count}, and the judge's model {judge.model_id} "
            "does not take images."
        )
    return images, ""


def with_request_images(messages: list[dict], images: list[dict]) -> list[dict]:
    """The judge's messages with the request's images after the text of its last user message."""
    if not images:
        return messages
    last_user = max(index for index, message in enumerate(messages) if message["role"] == "user")
    shown = dict(messages[last_user])
    shown["content"] = [
        {"type": "text", "text": shown["content"]},
        {"type": "text", "text": f"\n\n{IMAGES_INTRO}"},
        *images,
    ]
    return [*messages[:last_user], shown, *messages[last_user + 1 :]]
