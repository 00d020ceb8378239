"""Fixtures shared by the driver tests: the server's addresses and credentials come from run.sh."""

import os
import uuid

import pytest
from neo4j import GraphDatabase


@pytest.fixture(scope="session")
def bolt_uri():
    uri = os.environ.get("PLEXUS_BOLT_URI")
    if not uri:
        pytest.skip("PLEXUS_BOLT_URI is not set: run these tests through run.sh")
    return uri


@pytest.fixture(scope="session")
def http_uri():
    uri = os.environ.get("PLEXUS_HTTP_URI")
    if not uri:
        pytest.skip("PLEXUS_HTTP_URI is not set: the server has no HTTP listener")
    return uri


@pytest.fixture(scope="session")
def auth():
    return (os.environ.get("PLEXUS_USER", "neo4j"), os.environ["PLEXUS_PASSWORD"])


@pytest.fixture(scope="session")
def driver(bolt_uri, auth):
    with GraphDatabase.driver(bolt_uri, auth=auth) as d:
        yield d


@pytest.fixture
def tag():
    """A label unique to one test, so tests sharing the server never see each other's data."""
    return "T" + uuid.uuid4().hex[:12]
