"""Shared by the outside-client tests: pytest-anyio runs them on asyncio."""

import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"
