"""Hypothesis profiles for the fuzz tests (issue 11, "Hostile and broken input").

* `ci` (the default): small enough that `tests/fuzz` runs in seconds, and
  derandomized: the suite (and CI) tries the same inputs every run, so a red run is
  a change's doing, never the luck of the draw.
* `deep`: for long runs, `HYPOTHESIS_PROFILE=deep pytest tests/fuzz -n 2`: new
  inputs every run (2,500 examples a property, about 6 minutes on two cores).

`FUZZ_EXAMPLES=N` overrides the number of examples of either profile. The profiles
apply to the fuzz tests only (`fuzz_world.fuzz_settings`): loading one globally
would change the defaults of every other hypothesis test in the suite. Both are
stateless (no example database); a failure prints the falsifying example and the
`@reproduce_failure` blob.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_EXAMPLES = os.environ.get("FUZZ_EXAMPLES", "")


def _register(name: str, max_examples: int, derandomize: bool) -> None:
    settings.register_profile(
        name,
        max_examples=int(_EXAMPLES) if _EXAMPLES.isdigit() else max_examples,
        deadline=None,
        database=None,
        derandomize=derandomize,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
            HealthCheck.filter_too_much,
        ],
    )


_register("ci", 40, derandomize=True)
_register("deep", 2500, derandomize=False)
