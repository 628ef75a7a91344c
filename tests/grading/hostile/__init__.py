"""Hostile submissions (lab 05 unless the name says otherwise), each with its expected outcome asserted in
``tests/grading/test_sandbox.py``. ``@TARGET@`` and ``@SECRET@`` are replaced with paths by the tests."""
