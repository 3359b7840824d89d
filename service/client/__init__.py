"""A small Python client for the passk API; the `passk` CLI is built on it.

    from service.client import PasskClient

    with PasskClient() as passk:  # PASSK_URL / PASSK_API_KEY, else localhost and .passk/api-key
        dataset, _ = passk.create_dataset("humaneval", problems)
        run = passk.create_run(dataset["id"], "my-model", {"temperature": 0.8}, samples)
        run = passk.wait(run["id"])
        print(passk.metrics(run["id"], ks=[1, 10]))

Every failure a caller can cause or meet raises a PasskError whose str() is a
message for a person: the server is not reachable, the key is missing or
wrong, a dataset does not exist, the server refused the input (with the
fields it named).
"""

from __future__ import annotations

from urllib.parse import quote

import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from service.core.states import FINAL_RUN_STATES

DEFAULT_URL = "http://127.0.0.1:8000"
DEFAULT_TIMEOUT_S = 300.0  # a run of 30,000 samples is one large POST
TERMINAL_STATUSES = frozenset(FINAL_RUN_STATES)
# A server that answered once and then stops answering is being restarted (a stopping API process ends its
# streams, a new one takes a few seconds to listen): a stream's client tries again this long before giving up.
RECONNECT_FOR_S = 60.0


class PasskError(Exception):
    """Anything that went wrong talking to passk; str() is meant for the user."""


class _NoEvents(Exception):
    """The server has no live events (an older passk): wait() polls instead."""


class ServerUnreachable(PasskError):
    pass


class ErrorResponse(PasskError):
    """The server answered with an error status."""

    def __init__(self, status_code: int, detail: Any, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.detail = detail


class NotFoundResponse(ErrorResponse):
    pass


class AuthError(ErrorResponse):
    pass


def resolve_base_url(base_url: str | None = None) -> str:
    return (base_url or os.environ.get("PASSK_URL") or DEFAULT_URL).rstrip("/")


def resolve_api_key(api_key: str | None = None, data_dir: str | os.PathLike[str] | None = None) -> str | None:
    """The argument, else $PASSK_API_KEY, else the key file `passk up` writes (<data dir>/api-key)."""
    if api_key:
        return api_key
    if os.environ.get("PASSK_API_KEY"):
        return os.environ["PASSK_API_KEY"].strip()
    key_file = Path(data_dir or os.environ.get("PASSK_DATA_DIR") or ".passk") / "api-key"
    try:
        return key_file.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def format_detail(detail: Any) -> str:
    """FastAPI's error detail as one readable line: 'samples.3.completion: ...; dataset_id: ...'."""
    if isinstance(detail, list):
        parts = []
        for item in detail:
            if not isinstance(item, dict):
                parts.append(str(item))
                continue
            loc = [str(part) for part in item.get("loc", []) if part not in ("body", "query", "path")]
            parts.append(f"{'.'.join(loc)}: {item.get('msg')}" if loc else str(item.get("msg")))
        return "; ".join(parts)
    return str(detail)


class PasskClient:
    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        data_dir: str | os.PathLike[str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = resolve_base_url(base_url)
        self.api_key = resolve_api_key(api_key, data_dir)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport)
        self._owns_http = True

    def __enter__(self) -> PasskClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @classmethod
    def over(cls, http: httpx.Client) -> PasskClient:
        """A client that speaks through `http`, already pointed at the server and carrying its key;
        closing this client leaves `http` open."""
        client = cls.__new__(cls)
        client.base_url = str(http.base_url).rstrip("/")
        client.api_key = http.headers.get("authorization", "").removeprefix("Bearer ") or None
        client._http, client._owns_http = http, False
        return client

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    # -- transport

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ServerUnreachable(
                f"cannot reach the passk server at {self.base_url} ({exc}). Is it running? "
                "Start one with `passk up`, or point to yours with PASSK_URL or --url."
            ) from None
        except httpx.TimeoutException:
            raise PasskError(f"the passk server at {self.base_url} did not answer in time ({method} {path})") from None
        except httpx.HTTPError as exc:
            raise PasskError(f"talking to the passk server at {self.base_url} failed: {exc}") from None
        if response.status_code >= 400:
            raise self._error(response)
        return response

    def _error(self, response: httpx.Response) -> ErrorResponse:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text.strip() or response.reason_phrase
        status = response.status_code
        text = format_detail(detail)
        if status == 401:
            hint = (
                " Set PASSK_API_KEY, pass --api-key, or keep the key in .passk/api-key (`passk up` writes it)."
                if not self.api_key
                else " The key given (PASSK_API_KEY, --api-key or .passk/api-key) was not accepted."
            )
            return AuthError(status, detail, f"not authorised: {text}.{hint}")
        if status == 403:
            return AuthError(status, detail, f"forbidden: {text}")
        if status == 404:
            return NotFoundResponse(status, detail, text)
        return ErrorResponse(status, detail, f"the server refused the request ({status}): {text}")

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._request(method, path, **kwargs).json()

    # -- service

    def health(self) -> dict[str, Any]:
        return self._json("GET", "/healthz")

    # -- datasets

    def create_dataset(
        self,
        name: str,
        problems: Sequence[dict[str, Any]],
        *,
        time_limit_s: float | None = None,
        memory_mb: int | None = None,
        language: str | None = None,
        compile_time_limit_s: float | None = None,
        compile_memory_mb: int | None = None,
        shared: bool = False,
        hidden_tests: bool = False,
    ) -> tuple[dict[str, Any], bool]:
        """(dataset, created) in the key's project; posting the same name and content again returns the existing
        one. `shared`: every project may read and run it; `hidden_tests`: other projects do not see the tests."""
        body: dict[str, Any] = {"name": name, "problems": list(problems)}
        if language is not None:
            body["language"] = language
        if shared:
            body["shared"] = True
        if hidden_tests:
            body["hidden_tests"] = True
        if time_limit_s is not None:
            body["time_limit_s"] = time_limit_s
        if memory_mb is not None:
            body["memory_mb"] = memory_mb
        body.update(_compile_limits(compile_time_limit_s, compile_memory_mb))
        response = self._request("POST", "/v1/datasets", json=body)
        return response.json(), response.status_code == 201

    def languages(self) -> list[dict[str, Any]]:
        """The languages the server runs, with the toolchain version each image reported."""
        return self._json("GET", "/v1/languages")

    def get_dataset(self, dataset_id: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/datasets/{dataset_id}")

    def update_dataset(self, dataset_id: str, **fields: Any) -> dict[str, Any]:
        """PATCH /v1/datasets/{id}: `shared`, `hidden_tests` (the dataset's own project only)."""
        return self._json("PATCH", f"/v1/datasets/{dataset_id}", json=fields)

    def iter_datasets(self, page_size: int = 500, **filters: Any) -> Iterator[dict[str, Any]]:
        """Newest first: the project's own and the shared ones (filters: `name`, `project`)."""
        offset = 0
        params = {key: value for key, value in filters.items() if value is not None}
        while True:
            page = self._json("GET", "/v1/datasets", params={**params, "limit": page_size, "offset": offset})
            yield from page["items"]
            offset += len(page["items"])
            if not page["items"] or offset >= page["total"]:
                return

    def find_dataset(self, name_or_id: str) -> dict[str, Any]:
        """A dataset by id; or by name, the newest of the project's own with that name (exact, else ignoring
        case); or `PROJECT/NAME`, another project's shared dataset. A bare name never finds another project's."""
        if _is_uuid(name_or_id):
            try:
                return self.get_dataset(name_or_id)
            except NotFoundResponse:
                raise NotFoundResponse(404, None, f"unknown dataset {name_or_id!r}: no dataset has this id") from None
        exact = next(self.iter_datasets(page_size=1, name=name_or_id), None)
        if exact is not None:
            return exact
        project, slash, name = name_or_id.partition("/")
        if slash and project and name:
            shared = next(self.iter_datasets(page_size=1, name=name, project=project), None)
            if shared is not None:
                return shared
        mine = [d for d in self.iter_datasets() if d.get("own", True)]
        found = next((d for d in mine if d["name"].lower() == name_or_id.lower()), None)
        if found is not None:
            return found
        names = sorted({d["name"] for d in mine})
        known = f"your project's datasets: {', '.join(names[:20])}" if names else "your project has no datasets yet"
        raise NotFoundResponse(
            404, None, f"unknown dataset {name_or_id!r} ({known}); import one with `passk datasets import`, or name "
            "another project's shared dataset as PROJECT/NAME"
        )

    # -- runs

    def create_run(
        self,
        dataset_id: str,
        model: str,
        sampling: dict[str, Any],
        samples: Sequence[dict[str, str]],
        *,
        time_limit_s: float | None = None,
        memory_mb: int | None = None,
        cache: bool = True,
        compile_time_limit_s: float | None = None,
        compile_memory_mb: int | None = None,
        name: str | None = None,
        tags: Sequence[str] = (),
        checkpoint: str | None = None,
        step: int | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "dataset_id": dataset_id, "model": model, "sampling": sampling, "samples": list(samples), "cache": cache,
        }
        if name:
            body["display_name"] = name
        if tags:
            body["tags"] = list(tags)
        if checkpoint is not None:
            body["checkpoint"] = checkpoint
        if step is not None:
            body["step"] = step
        if time_limit_s is not None:
            body["time_limit_s"] = time_limit_s
        if memory_mb is not None:
            body["memory_mb"] = memory_mb
        body.update(_compile_limits(compile_time_limit_s, compile_memory_mb))
        return self._json("POST", "/v1/runs", json=body)

    def resolve_run(self, ref: str) -> str:
        """A run id from a full id or a unique prefix of one, as git takes commit prefixes."""
        ref = ref.strip()
        if _is_uuid(ref):
            return ref
        if len(ref) < 4 or any(ch not in "0123456789abcdefABCDEF-" for ch in ref):
            raise PasskError(f"{ref!r} is not a run id or a prefix of one (at least 4 hex digits, e.g. 0b7e8a9c)")
        page = self._json("GET", "/v1/runs", params={"id_prefix": ref, "archived": "include", "limit": 11})
        matches = [item["id"] for item in page["items"]]
        if not matches:
            raise NotFoundResponse(404, None, f"no run id starts with {ref!r}")
        if len(matches) > 1:
            shown = ", ".join(m[:12] for m in matches[:10]) + (" …" if page["total"] > 10 else "")
            raise PasskError(f"{ref!r} is ambiguous: {page['total']} runs start with it ({shown}); give more digits")
        return str(matches[0])

    def list_runs(self, **filters: Any) -> dict[str, Any]:
        """GET /v1/runs with filters (dataset_id, model, status, tag, q, archived, sort, limit, offset)."""
        return self._json("GET", "/v1/runs", params={k: v for k, v in filters.items() if v is not None})

    def update_run(self, run_id: str, **fields: Any) -> dict[str, Any]:
        """PATCH /v1/runs/{id}: display_name, note, tags, archived."""
        return self._json("PATCH", f"/v1/runs/{run_id}", json=fields)

    def get_run(self, run_id: str) -> dict[str, Any]:
        try:
            return self._json("GET", f"/v1/runs/{run_id}")
        except NotFoundResponse:
            raise NotFoundResponse(404, None, f"unknown run {run_id!r}") from None
        except ErrorResponse as exc:
            if exc.status_code == 422 and not _is_uuid(run_id):
                raise ErrorResponse(422, exc.detail, f"{run_id!r} is not a run id (runs have UUIDs)") from None
            raise

    def cancel_run(self, run_id: str) -> dict[str, Any]:
        return self._json("POST", f"/v1/runs/{run_id}/cancel")

    def wait(
        self,
        run_id: str,
        *,
        poll_s: float = 1.0,
        timeout_s: float | None = None,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Until the run completes, fails or is cancelled; returns the final run.

        Follows the run's live events (GET /v1/runs/{id}/events, resuming with Last-Event-ID when the
        connection drops), calling `on_progress` at most every `poll_s`; polls instead if the server
        offers no events.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        try:
            shown = 0.0
            # Keepalives arrive every few seconds while nothing finishes (a queued run): progress is
            # shown then too, so a log is never silent for minutes.
            for event in self.events(run_id, deadline=deadline, keepalives=True):
                if event["event"] == "end":
                    run = self.get_run(run_id)
                    if on_progress is not None:
                        on_progress(run)
                    return run
                if on_progress is not None and time.monotonic() - shown >= poll_s:
                    try:
                        on_progress(self.get_run(run_id))
                    except ServerUnreachable:
                        pass  # restarting: the events resume, and progress with them
                    shown = time.monotonic()
        except _NoEvents:
            pass
        while True:
            run = self.get_run(run_id)
            if on_progress is not None:
                on_progress(run)
            if run["status"] in TERMINAL_STATUSES:
                return run
            if deadline is not None and time.monotonic() > deadline:
                raise PasskError(f"run {run_id} did not finish within {timeout_s:g} s (it continues on the server)")
            time.sleep(poll_s)

    def events(self, run_id: str, *, after: int = 0, deadline: float | None = None,
               keepalives: bool = False) -> Iterator[dict[str, Any]]:
        """The run's live events ({"id", "event", "data"}): each finished sample, then `end`. Reconnects
        with Last-Event-ID when the connection drops or the server restarts (for up to RECONNECT_FOR_S), so
        nothing is lost or repeated. With `keepalives`, the server's keepalive comments (sent while the run is
        quiet) come as {"event": "keepalive"}."""
        import json

        last = after
        answered = False  # a server that never answered is not restarting: fail at once
        lost_at: float | None = None  # when it stopped answering
        while True:
            if deadline is not None and time.monotonic() > deadline:
                raise PasskError(f"run {run_id} did not finish in time (it continues on the server)")
            read_s = 30.0 if deadline is None else max(1.0, min(30.0, deadline - time.monotonic()))
            headers = {"Accept": "text/event-stream", "Last-Event-ID": str(last)}
            try:
                with self._http.stream("GET", f"/v1/runs/{run_id}/events", headers=headers,
                                       timeout=httpx.Timeout(10.0, read=read_s)) as response:
                    answered, lost_at = True, None
                    if response.status_code == 204:
                        return
                    if response.status_code in (404, 405) and "text/event-stream" not in response.headers.get("content-type", ""):
                        response.read()
                        if response.status_code == 404 and "not found" in response.text and "run" in response.text:
                            raise self._error(response)
                        raise _NoEvents()
                    if response.status_code >= 400:
                        response.read()
                        raise self._error(response)
                    fields: dict[str, str] = {}
                    for line in response.iter_lines():
                        if line:
                            if line.startswith(":") and keepalives:
                                yield {"id": None, "event": "keepalive", "data": None}
                            if not line.startswith(":"):
                                name, _, value = line.partition(":")
                                fields[name] = value[1:] if value.startswith(" ") else value
                            continue
                        if "data" in fields:
                            event = {"id": fields.get("id"), "event": fields.get("event", "message"),
                                     "data": json.loads(fields["data"])}
                            if event["id"] is not None:
                                last = int(event["id"])
                            yield event
                            if event["event"] == "end":
                                return
                        fields = {}
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                lost_at = lost_at or time.monotonic()
                if not answered or time.monotonic() - lost_at > RECONNECT_FOR_S:
                    raise ServerUnreachable(f"cannot reach the passk server at {self.base_url} ({exc})") from None
                time.sleep(0.5)  # restarting: try again
            except (httpx.ReadTimeout, httpx.RemoteProtocolError, httpx.ReadError):
                time.sleep(0.2)  # dropped or quiet: resume after the last event seen

    def iter_samples(self, run_id: str, *, include_completion: bool = False, page_size: int = 1000) -> Iterator[dict[str, Any]]:
        """Every sample of the run with its verdict, in submission order."""
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"limit": page_size}
            if include_completion:
                params["include"] = "completion"
            if cursor:
                params["cursor"] = cursor
            page = self._json("GET", f"/v1/runs/{run_id}/samples", params=params)
            yield from page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    # -- metrics

    def metrics(self, run_id: str, ks: Sequence[int] = (1,), **params: Any) -> dict[str, Any]:
        """GET /v1/runs/{id}/metrics; extra params (confidence, seed, method...) pass through."""
        return self._json("GET", f"/v1/runs/{run_id}/metrics", params={"k": _ks(ks), **params})

    def problem_results(self, run_id: str, ks: Sequence[int] = (1,)) -> dict[str, Any]:
        return self._json("GET", f"/v1/runs/{run_id}/problems", params={"k": _ks(ks)})

    def compare(self, base: str, candidate: str, ks: Sequence[int] = (1,), **params: Any) -> dict[str, Any]:
        """Paired comparison, candidate minus base (GET /v1/compare)."""
        return self._json("GET", "/v1/compare", params={"base": base, "candidate": candidate, "k": _ks(ks), **params})

    def checkpoints(self, dataset_id: str, model: str | None = None, k: int = 1, **params: Any) -> dict[str, Any]:
        """One model's checkpoints on a dataset, each against the one before it (GET /v1/checkpoints)."""
        query = {"dataset": dataset_id, "k": k, **params} | ({"model": model} if model is not None else {})
        return self._json("GET", "/v1/checkpoints", params=query)

    def compare_languages(self, run_ids: Sequence[str], ks: Sequence[int] = (1,), **params: Any) -> dict[str, Any]:
        """One model's runs in several languages: per language, micro and macro (GET /v1/languages/compare)."""
        return self._json("GET", "/v1/languages/compare", params={"runs": ",".join(run_ids), "k": _ks(ks), **params})

    def evaluate_rule(self, rule: str, base: str, candidate: str) -> dict[str, Any]:
        """A release rule's verdict on candidate vs base (GET /v1/release-rules/{rule}/evaluate)."""
        params = {"base": base, "candidate": candidate}
        return self._json("GET", f"/v1/release-rules/{quote(rule, safe='')}/evaluate", params=params)

    def status(self) -> dict[str, Any]:
        """GET /v1/status: queue depth, sandbox errors, runs by status, live workers."""
        return self._json("GET", "/v1/status")

    def prometheus(self) -> str:
        """GET /metrics: the same figures, per worker too, in Prometheus' text format."""
        response = self._request("GET", "/metrics")
        if response.status_code >= 400:
            raise self._error(response)
        return response.text


def _ks(ks: Sequence[int]) -> str:
    return ",".join(str(k) for k in ks)


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _compile_limits(time_limit_s: float | None, memory_mb: int | None) -> dict[str, Any]:
    """The compile-limit overrides given (omitted: the dataset's, else the language's default)."""
    given = {"compile_time_limit_s": time_limit_s, "compile_memory_mb": memory_mb}
    return {name: value for name, value in given.items() if value is not None}
