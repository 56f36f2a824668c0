"""cashbox/services.py tested directly, where the tests of the cash rules pass whatever one step does: the people a
count names (R17, R20), the amount in words (R21), the two signatures of the register (R22). Each test breaks if
one step is weakened (a mutant of `make mutation MODULE=cashbox/services.py`); refusals are checked by rule id."""

import pytest

pytestmark = pytest.mark.django_db
