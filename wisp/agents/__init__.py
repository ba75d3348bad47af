"""The agents wing: wisp in the path of each agent harness, one module per harness.

A harness's module (`claude_code.py`, …) declares its one record, HARNESS (`hookio.Harness`:
its hook at run time and its installation), its name listed in `wisp._entry.HARNESS_MODULES`; it
reads that harness's events exactly as it sends them and answers in its shape; all of them
stand on one gate core (`gate.py`: a tool call → a request → a decision, the grants and the
self-guard included), which :class:`AgentSession` (`session.py`, the server an agent reaches
the person through: `wisp mcp`) uses too. The faces call this wing; it calls the asking and
answering core below it, never a face.
"""
