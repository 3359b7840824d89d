"""SandboxFusion's /run_code shapes (RunCodeRequest / RunCodeResponse), with their fields' meanings here."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class RunStatus(StrEnum):
    SUCCESS = "Success"
    FAILED = "Failed"
    SANDBOX_ERROR = "SandboxError"


class CommandRunStatus(StrEnum):
    FINISHED = "Finished"
    ERROR = "Error"
    TIME_LIMIT_EXCEEDED = "TimeLimitExceeded"


MAX_ARGS = 64
# One command-line argument: no NUL byte, which no argv can hold.
Argument = Annotated[str, Field(max_length=4096, pattern=r"^[^\x00]*$")]


class RunCodeRequest(BaseModel):
    # SandboxFusion's other fields are accepted and ignored (docs/rl.md: which fields are honoured, and how).
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={"examples": [{"code": "print(input()[::-1])", "language": "python", "stdin": "abc\n"}]},
    )

    code: str = Field(max_length=262_144, description="The program.")
    language: str = Field(max_length=40, description="SandboxFusion's name: python, cpp, nodejs, typescript, go, "
                                                     "java, rust, ruby (GET /v1/languages lists passk's own).")
    stdin: str | None = Field(None, max_length=16 * 1024 * 1024, description="Given to the program on standard input.")
    compile_timeout: float = Field(10, gt=0, le=3600, description=(
        "Compiled languages: the compile's CPU limit, in seconds (its wall-clock limit is 5 s more); capped by the "
        "language's compile limit (or PASSK_MAX_COMPILE_TIME_LIMIT_S), the cap reported in `message`."))
    run_timeout: float = Field(10, gt=0, le=3600, description=(
        "The run's wall-clock limit, in seconds, and its CPU limit too; capped by PASSK_MAX_TIME_LIMIT_S, the cap "
        "reported in `message`."))
    memory_limit_MB: int = Field(-1, ge=-1, le=1 << 20, description=(
        "Memory limit in MB; -1 or 0: the server's maximum (PASSK_MAX_MEMORY_MB). Values outside 32..maximum are "
        "brought into it, and `message` says so."))
    files: dict[str, str | None] = Field(default_factory=dict, description=(
        "Relative path -> base64 content, written in the program's working directory before it runs."))
    fetch_files: list[str] = Field(default_factory=list, max_length=100, description=(
        "Files to read back after the run (relative to the working directory, or absolute), base64 in the answer's "
        "`files`, up to PASSK_RUN_CODE_FETCH_BYTES together; missing or oversized ones are named in `message`."))
    args: list[Argument] = Field(default_factory=list, max_length=MAX_ARGS, description=(
        "`pytest` only: more arguments for pytest's command line (`-k name`, `--junitxml=report.xml`, ...), after "
        "passk's own. Another language's are ignored, and `message` says so."))


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
