"""Field types shared by the problem schemas of every format (service/formats/*, service/api/datasets/schemas.py)."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AfterValidator, AliasChoices, BaseModel, BeforeValidator, Field

def _storable(value: str) -> str:
    # PostgreSQL text cannot hold NUL and psycopg cannot encode lone surrogates
    # (json.loads accepts "\ud800"); refusing here keeps both a 422, not a 500.
    if "\x00" in value:
        raise ValueError("must not contain NUL (\\u0000) characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("must be valid Unicode (contains a lone surrogate)") from exc
    return value


StorableStr = Annotated[str, AfterValidator(_storable)]
Key = Annotated[StorableStr, Field(min_length=1, max_length=300)]
PositiveSeconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
PositiveMB = Annotated[int, Field(gt=0)]


def _id_from_number(value: Any) -> Any:
    # MBPP and APPS number their problems; the id is text everywhere else in passk.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def jsonb_storable(value: Any, path: str = "value") -> Any:
    """Values stored in JSONB: no NUL, no lone surrogates, no NaN or infinity (json.loads accepts all three)."""
    if isinstance(value, str):
        try:
            _storable(value)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{path}: numbers must be finite")
    elif isinstance(value, dict):
        for key, item in value.items():
            jsonb_storable(key, path)
            jsonb_storable(item, f"{path}.{key}")
    elif isinstance(value, list):
        for position, item in enumerate(value):
            jsonb_storable(item, f"{path}[{position}]")
    return value


NumericId = Annotated[Key, BeforeValidator(_id_from_number)]
JsonValue = Annotated[Any, AfterValidator(jsonb_storable)]
Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Identifier = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=300)]
_ID = Field(validation_alias=AliasChoices("id", "task_id"), description="Your problem id (or `task_id`).")
_TAGS = Field(default_factory=list, max_length=100)
_HIDDEN_TESTS = Field(
    False, description="Hide this problem's tests from other projects: their failure details then name the failing "
    "case's index and the kind of failure only (the dataset's `hidden_tests` hides every problem's)."
)
_TIME_LIMIT = Field(None, description="Overrides the dataset's time limit; for `stdio` and `call`, per case.")
_MEMORY = Field(None, description="Overrides the dataset's memory limit.")
_SETUP = Field(None, description="Run before the program, in its namespace (e.g. imports the dataset assumes).")
_TOLERANCES = "`numeric` comparison and floats: match if |got - want| <= max(abs_tol, rel_tol * |want|); default 1e-6."


class ProblemFields(BaseModel):
    """The fields every format's problem has besides its own, which the dataset service reads for any format: a
    format's model derives from this."""

    tags: list[Annotated[StorableStr, Field(max_length=200)]] = _TAGS
    time_limit_s: PositiveSeconds | None = _TIME_LIMIT
    memory_mb: PositiveMB | None = _MEMORY
    hidden_tests: bool = _HIDDEN_TESTS
