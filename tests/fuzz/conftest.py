"""Hypothesis profiles for the fuzz tests (issue 11, "Hostile and broken input").

* `ci` (the default): small enough that `tests/fuzz` runs in about a minute on two
  cores under `-n 2`.
* `deep`: for long runs, `HYPOTHESIS_PROFILE=deep pytest tests/fuzz -n 2`.

`FUZZ_EXAMPLES=N` overrides the number of examples of either profile. The profiles
apply to the fuzz tests only (`fuzz_world.fuzz_settings`): loading one globally
would change the defaults of every other hypothesis test in the suite. Both are
stateless (no example database) and not derandomized: every run tries new inputs,
and a failure prints the falsifying example and the `@reproduce_failure` blob.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_EXAMPLES = os.environ.get("FUZZ_EXAMPLES", "")


def _register(name: str, max_examples: int) -> None:
    settings.register_profile(
        name,
        max_examples=int(_EXAMPLES) if _EXAMPLES.isdigit() else max_examples,
        deadline=None,
        database=None,
        derandomize=False,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
            HealthCheck.filter_too_much,
        ],
    )


_register("ci", 40)
_register("deep", 2500)
