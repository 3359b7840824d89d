"""The worker's images: the sandbox image (Python) and one per other language, built on demand the first time a
dataset needs it; each language's toolchain version is written to the `toolchains` table (GET /v1/languages)."""

from __future__ import annotations

import logging
import threading

import docker
from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from sandbox import languages
from sandbox.engine import connect
from sandbox.images import ensure_language_image, toolchain_version
from service.core.database import transaction
from service.core.models import Toolchain
from service.core.settings import Settings

log = logging.getLogger(__name__)


class ImageNotReady(Exception):
    """A language's image is not known to this worker yet. Raised by `LanguageImages.key` inside a claim's
    transaction, which then leases nothing: the thread finds or builds the image (`prepare`, minutes for some
    languages) outside any transaction and claims again. A build inside the claim would hold its samples' rows
    and a connection for its whole length, and the claimed leases, dated from the transaction's start, could
    expire before it committed."""

    def __init__(self, language: str) -> None:
        super().__init__(f"the {language} image is not ready on this worker")
        self.language = language


class LanguageImages:
    def __init__(self, settings: Settings, sessions: sessionmaker[Session]) -> None:
        self.settings = settings
        self.sessions = sessions
        # The sandbox image's id (set when the worker starts): part of every Python program's cache key.
        self.sandbox_image_id = ""
        # language -> (image tag, image id, toolchain version), built or found on first use.
        self._images: dict[str, tuple[str, str, str]] = {}
        self._lock = threading.Lock()

    def start(self, client: docker.DockerClient, image: str) -> None:
        """The sandbox image: its id, and the toolchain of the languages it runs itself (Python), known from the
        start since that image is never built on demand."""
        self.sandbox_image_id = client.images.get(image).id
        for language in languages.all_languages().values():
            if not language.own_image:
                self._record(language.name, image, toolchain_version(client, image, language.name))

    def key(self, language: str) -> tuple[str, str]:
        """(image id, toolchain version) of a language: part of the program and of its cache key. Never builds
        (it is called inside a claim's transaction): ImageNotReady if the image is not known yet."""
        if not languages.get(language).own_image:  # the sandbox image itself
            return self.sandbox_image_id, ""
        # Without the lock, which a build holds for minutes: an entry is only ever added, whole.
        known = self._images.get(language)
        if known is None:
            raise ImageNotReady(language)
        _, image_id, version = known
        return image_id, version

    def prepare(self, language: str) -> None:
        """Find or build a language's image (outside any transaction), so that `key` knows it."""
        self._image(language)

    def tag(self, language: str) -> str:
        return self._image(language)[0]

    def _image(self, language: str) -> tuple[str, str, str]:
        known = self._images.get(language)
        if known is not None:  # without waiting for another language's build
            return known
        with self._lock:
            if language not in self._images:
                client = connect()
                tag = ensure_language_image(client, language, self.settings.sandbox_base_image, self.settings.deb_cache)
                version = toolchain_version(client, tag, language)
                self._images[language] = (tag, client.images.get(tag).id, version)
                self._record(language, tag, version)
            return self._images[language]

    def _record(self, language: str, tag: str, version: str) -> None:
        """What GET /v1/languages and `passk languages` show: the version the language's image reports."""
        with transaction(self.sessions) as session:
            statement = insert(Toolchain).values(language=language, image=tag, version=version)
            session.execute(
                statement.on_conflict_do_update(
                    index_elements=[Toolchain.language],
                    set_={"image": tag, "version": version, "updated_at": func.now()},
                )
            )
        log.warning("language %s: image %s, %s", language, tag, version)
