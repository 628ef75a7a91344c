"""What the language tests share: a test that starts with no language chosen anywhere, and a CJK pattern."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from rocketlab import i18n, workspace

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
"""Ideographs, CJK and full-width punctuation."""
IDEOGRAPH = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def no_language_set(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No ROCKETLAB_LANG, locale or workspace in the environment, no language chosen; reset after."""
    for name in (i18n.ENV, "LC_ALL", "LC_MESSAGES", "LANG", workspace.ENV):
        monkeypatch.delenv(name, raising=False)
    i18n.set_language(None)
    yield
    i18n.set_language(None)
