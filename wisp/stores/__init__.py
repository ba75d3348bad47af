"""The stores wing: what wisp keeps for the person besides the channel, each written
atomically under the home's lock (`jsonstore.py`): the standing grants (`grants.py`), the
permanent facts (`facts.py`) and their ID scheme (`factids.py`), the settings (`config.py`),
and a server's thread and session facts, held in memory (`threadfacts.py`). It stands on the
audit wing alone.
"""
