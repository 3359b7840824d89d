"""SandboxFusion's documented /run_code shapes (RunCodeRequest / RunCodeResponse)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

SUPPORTED_LANGUAGES = ("python",)


class RunStatus(StrEnum):
    SUCCESS = "Success"
    FAILED = "Failed"
    SANDBOX_ERROR = "SandboxError"


class CommandRunStatus(StrEnum):
    FINISHED = "Finished"
    ERROR = "Error"
    TIME_LIMIT_EXCEEDED = "TimeLimitExceeded"


class RunCodeRequest(BaseModel):
    # SandboxFusion's other fields are accepted and ignored (see README: which fields are honoured).
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={"examples": [{"code": "print(input()[::-1])", "language": "python", "stdin": "abc\n"}]},
    )

    code: str = Field(max_length=262_144, description="The program.")
    language: str = Field(max_length=40, description=f"Supported here: {', '.join(SUPPORTED_LANGUAGES)}.")
    stdin: str | None = Field(None, max_length=16 * 1024 * 1024, description="Given to the program on standard input.")
    compile_timeout: float = Field(10, gt=0, le=3600, description="Accepted; Python has no compile step.")
    run_timeout: float = Field(10, gt=0, le=3600, description="CPU seconds (capped by PASSK_MAX_TIME_LIMIT_S).")
    memory_limit_MB: int | None = Field(
        None, ge=-1, le=1 << 20,
        description="Memory limit in MB (at least 32, capped by PASSK_MAX_MEMORY_MB); -1 or 0: the server's default.",
    )
    files: dict[str, str] = Field(default_factory=dict, description="Path -> base64 content, written before the code runs.")
    fetch_files: list[str] = Field(default_factory=list, description="Accepted; files are not fetched back (always {}).")


class CommandRunResult(BaseModel):
    status: CommandRunStatus
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeResponse(BaseModel):
    status: RunStatus
    message: str
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)
