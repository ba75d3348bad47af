"""`wisp relay`: the pending channel as JSON lines on stdin/stdout, for a front end.

docs/relay.md is the protocol's reference.
"""
