"""The audit wing: the audit log written (`writer.py`: one JSON line per transition, with its
entry point), read and followed (`reader.py`), the ended requests it remembers
(`history.py`), and a front end's hello heard (`hello.py`, for the relay). The lowest wing:
it imports none of the others, and only the application writes through it, never a face.
"""
