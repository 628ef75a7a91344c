"""Lab 03 by delegation: one line naming the kit's own implementation."""
from rocketlab.dledger.elector_decisions import decide_vote as handle_vote, parse_vote_result  # noqa: F401, I001
from rocketlab.dledger.elector_decisions import decide_heart_beat as handle_heart_beat  # noqa: F401, I001
