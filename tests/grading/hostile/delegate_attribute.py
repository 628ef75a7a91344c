"""Lab 05 by delegation through a module attribute and a look-up by name."""
import importlib

import rocketlab.broker.dledger_commit_log as kit

phy_offset = kit.phy_offset
which_log = getattr(importlib.import_module("rocketlab.broker.dledger_commit_log"), "which_log")  # noqa: B009
