"""Property-based fuzzing of the whole OpenAPI schema against the running service: no 5xx, responses match it.

Each operation gets its own Hypothesis run (driven here rather than through schemathesis' pytest plugin,
whose parametrisation does not work with the pytest this project uses).
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.e2e.conftest import Stack

EXAMPLES_PER_OPERATION = 60
# What the issue asks for: no 5xx, and every response (status, content type, body) as documented.
# Not checked: that schema-valid input is always accepted, because some rules (no NUL characters,
# limits under the server's configured maxima) live in validators that the schema cannot express.
# One 5xx is planned: an interactive route (POST /v1/judge, /run_code) that has not run the program within the
# request's own `wait_s` answers 504 and lets the run go on. Fuzzed budgets go down to 5e-324 s.


@schemathesis.check
def not_an_unplanned_server_error(ctx, response, case) -> bool | None:
    if response.status_code == 504 and str(response.json().get("detail", "")).startswith("not run"):
        return None
    return not_a_server_error(ctx, response, case)


CHECKS = [not_an_unplanned_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


def test_no_server_errors_and_responses_match_the_schema(stack: Stack) -> None:
    schema = schemathesis.openapi.from_url(f"{stack.api_url}/openapi.json")
    auth = {"Authorization": f"Bearer {stack.api_key}"}
    failures: dict[str, str] = {}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15, [op.label for op in operations]
    # POST /run_code answers once its program ran: a worker must be there.
    stack.start_worker(concurrency=2)
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def fuzz(case: schemathesis.Case) -> None:
            case.call_and_validate(headers=auth, checks=CHECKS)

        try:
            fuzz()
        except Exception as exc:  # collect every operation's failure, then report them together
            failures[operation.label] = str(exc)[:2000]
    stack.stop_workers()
    assert not failures, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())
