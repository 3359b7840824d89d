"""A claim never waits for a language's image (real PostgreSQL): a worker that does not know the image yet leases
nothing, finds or builds it outside any transaction, then claims again."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from service.core.settings import Settings
from service.worker import queue
from service.worker.images import ImageNotReady, LanguageImages
from tests.test_claim_order import _dataset, _run


def test_a_claim_whose_image_is_not_ready_leases_nothing(sync_session: Session) -> None:
    db = sync_session
    dataset, (problem,) = _dataset(db, 1)
    run = _run(db, dataset, problem, None, "batch", 4)
    asked: list[str] = []

    def image_id(language: str) -> tuple[str, str]:
        asked.append(language)
        if len(asked) == 1:
            raise ImageNotReady(language)
        return "image-id", "toolchain 1"

    # As the worker's transaction would: the claim's writes are undone with it.
    with pytest.raises(ImageNotReady), db.begin_nested():
        queue.claim_batch(db, "tests", 16, 60, 3.0, 512, image_id)
    rows = db.execute(text("SELECT state, attempts, lease_owner FROM samples WHERE run_id = :run"), {"run": run}).all()
    assert [tuple(row) for row in rows] == [("queued", 0, None)] * 4  # nothing leased, no attempt counted
    assert db.execute(text("SELECT status FROM runs WHERE id = :run"), {"run": run}).scalar_one() == "queued"

    claimed = queue.claim_batch(db, "tests", 16, 60, 3.0, 512, image_id)
    assert len(claimed) == 4 and {sample.run_id for sample in claimed} == {run}
    assert all(sample.attempts == 1 for sample in claimed)
    assert asked == ["python", "python"]


def test_the_key_of_an_image_not_yet_known_is_asked_for_never_built(settings: Settings) -> None:
    images = LanguageImages(settings, sessions=None)  # type: ignore[arg-type]  (never used: nothing is recorded)
    images.sandbox_image_id = "sha256:sandbox"
    assert images.key("python") == ("sha256:sandbox", "")  # the sandbox image itself, known from the start
    with pytest.raises(ImageNotReady) as raised:
        images.key("cpp")
    assert raised.value.language == "cpp"


def test_a_known_image_is_answered_while_another_language_builds(settings: Settings) -> None:
    images = LanguageImages(settings, sessions=None)  # type: ignore[arg-type]
    images._images["cpp"] = ("passk-sandbox-cpp:tag", "sha256:cpp", "g++ 12")  # found earlier
    answers: list = []
    with images._lock:  # what a build of another language holds for minutes
        asking = threading.Thread(target=lambda: answers.extend([images.key("cpp"), images.tag("cpp")]), daemon=True)
        asking.start()
        asking.join(timeout=30)  # a guard against a hang, not a timing check: the answers need no lock
        assert not asking.is_alive(), "the key of a known image waited for another language's build"
    assert answers == [("sha256:cpp", "g++ 12"), "passk-sandbox-cpp:tag"]
