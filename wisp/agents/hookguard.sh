# wisp's hook guard: runs `wisp hook HARNESS …` and, if wisp ends any way but its own answer
# (killed, out of memory, a crash: any status but 0 or 2), answers the harness's deny for it.
#
#   /bin/sh hookguard.sh DENY_STATUS DENY_JSON -- WISP_ARGV…
#
# A harness runs the call when its hook dies; this shell, which does nothing but wait, stays
# to say no. A TERM, INT or HUP sent to it (the harness giving up) is passed on to wisp as a
# TERM, and the deny is answered at once: wisp withdraws its request (on the TERM, or on
# seeing this shell, its parent, gone, if the TERM came before it could catch one).
status_deny=$1
said_deny=$2
shift 3
what=$*
pid=
deny() {
    printf '%s\n' "$said_deny"
    printf 'wisp: `%s` %s; denied\n' "$what" "$1" >&2
    exit "$status_deny"
}
trap '[ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null; deny "was stopped by a signal"' TERM INT HUP
exec 3<&0
WISP_HOOK_GUARD=$$ "$@" <&3 3<&- & # wisp watches its parent by this pid
pid=$!
exec 3<&-
wait "$pid"
status=$?
case $status in
    0 | 2) exit "$status" ;;
esac
deny "ended without answering (status $status)"
