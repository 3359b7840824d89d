"""Python with the scientific stack (`python-science`) end to end: a dataset in that language judges programs that
import NumPy, pandas, SciPy, SymPy and NetworkX, through the API, a worker and its own image (built on demand),
with Python's judges (a forged pass fails as in Python); the same program under lean `python` is an error; and
/run_code and /v1/judge take it by name."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sandbox.languages import get
from service.api.judge import service as judge_service
from service.api.judge.schemas import JudgeRequest
from service.api.runcode import service as runcode_service
from service.api.runcode.schemas import RunCodeRequest
from service.core.settings import Settings
from service.formats import registry
from tests.e2e.conftest import Stack
from tests.languages import endtoend

PROBLEM = {
    "id": "det", "entry_point": "det", "time_limit_s": 30,
    "prompt": "def det(rows):\n    \"\"\"The determinant of a square matrix, rounded to an integer.\"\"\"\n",
    "test": "def check(candidate):\n    assert candidate([[1, 2], [3, 4]]) == -2\n    assert candidate([[2]]) == 2\n",
}
USES_THE_STACK = (
    "    import numpy as np, pandas as pd, scipy.linalg, sympy, networkx as nx\n"
    "    assert pd.DataFrame(rows).shape == (len(rows), len(rows)) and nx.path_graph(3).number_of_edges() == 2\n"
    "    assert sympy.Matrix(rows).det() == round(float(np.linalg.det(np.array(rows))))\n"
    "    return int(round(scipy.linalg.det(np.array(rows, dtype=float))))\n"
)


def test_a_variant_of_python() -> None:
    science, python = get("python-science"), get("python")
    assert science.family == "python" and not science.native and science.own_image and not python.own_image
    assert registry.allows_language("humaneval", "python-science") and registry.allows_language("stdio", "python-science")
    assert not registry.allows_language("multipl-e", "python-science")


def test_an_operator_sends_sandboxfusions_python_to_python_science() -> None:
    """PASSK_RUN_CODE_LANGUAGES: unmodified verl sends `python` for programs that import NumPy."""
    mapped = Settings(run_code_languages={"python": "python-science"})
    code = RunCodeRequest(language="python", code="import numpy")
    assert runcode_service.language_of(Settings(), code).name == "python"
    assert runcode_service.language_of(mapped, code).name == "python-science"
    judged = JudgeRequest(language="python", problem=PROBLEM, completion="    return 0\n")
    assert judge_service.language_of(mapped, judged).name == "python-science"
    with pytest.raises(ValidationError, match="passk has no language 'python-sciense'"):
        Settings(run_code_languages={"python": "python-sciense"})


def test_python_science_end_to_end(stack: Stack) -> None:
    endtoend.check_language(stack, "python-science", {
        "science-det": endtoend.Case(
            dataset={"language": "python-science", "problems": [PROBLEM]},
            samples=[
                ("uses the stack", "det", USES_THE_STACK, "passed"),
                ("wrong", "det", "    import numpy as np\n    return int(np.trace(np.array(rows)))\n", "failed"),
                ("exits early", "det", "    import os\n    os._exit(0)\n", "failed"),
            ],
        ),
    })
    endtoend.check_language(stack, "python", {
        "lean-det": endtoend.Case(
            dataset={"language": "python", "problems": [PROBLEM]},
            samples=[("no numpy here", "det", USES_THE_STACK, "error")],
        ),
    })
    assert "NumPy" in endtoend.assert_toolchain(stack, "python-science", "science-det", "Python 3")["toolchain"]

    stack.start_worker(concurrency=1)
    try:
        with stack.client(timeout=300) as client:
            ran = client.post("/run_code", json={"language": "python-science",
                                                 "code": "import numpy; print(numpy.arange(4).sum())"})
            judged = client.post("/v1/judge", json={"language": "python-science", "problem": PROBLEM,
                                                    "completion": USES_THE_STACK})
    finally:
        stack.stop_workers()
    assert ran.status_code == 200, ran.text
    assert (ran.json()["status"], ran.json()["run_result"]["stdout"]) == ("Success", "6\n")
    assert judged.status_code == 200, judged.text
    assert judged.json()["reward"] == 1.0
