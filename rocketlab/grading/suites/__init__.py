"""The built-in graded tests, one module per lab (``labNN.py``)."""
