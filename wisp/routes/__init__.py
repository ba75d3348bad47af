"""The routes wing: how the person is told that something waits. `notify.py` is the notifier
(limits, then the first route here that works for the face, then push); `tmux.py` the tmux
route's server and clients; `push.py` the push route through Apprise (imported only to send);
`subproc.py` the bounded child processes the routes run. It reads the kinds' views (a
request's notice) and the settings, and is read by the asking core above it.
"""
