# wisp's hook guard: runs `wisp hook HARNESS …` and, if wisp ends any way but its own answer
# (killed, out of memory, a crash: any status but 0 or 2), answers the harness's deny for it.
#
#   /bin/sh hookguard.sh DENY_STATUS DENY_JSON -- WISP_ARGV…
#
# A harness runs the call when its hook dies; this shell, which does nothing but wait, stays
# to say no. Exactly one answer reaches stdout: wisp's, or else this shell's deny.
#
# A TERM, INT or HUP sent to it (the harness giving up) is passed on to wisp as a TERM, and
# wisp answers it: it withdraws its request and writes the deny itself. This shell does not
# deny at once: wisp shares its stdout, and its answer to the TERM would be a second deny
# there. It waits for wisp instead and denies only if wisp ended without answering (a TERM
# that came before wisp could catch one ends it by the signal: status 143). The wait is
# bounded: after AGAIN_S seconds wisp is sent a TERM again (the first can be lost: sent while
# the child this shell forked has not yet become wisp, it is taken by this shell's own trap,
# still set in that child), and after GRACE_S more it is killed. A signal before wisp was
# started: the deny, and wisp never is.
#
# The trap comes first: from this shell's first instruction a signal is caught. (Before it,
# while /bin/sh itself starts, a signal takes its default action; nothing can answer then.)
signals=0 pid= timer= status=
trap 'signals=$((signals + 1)); [ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null' TERM INT HUP
# Seconds wisp has, once told to stop, to withdraw its request and answer (it takes
# milliseconds; told again after AGAIN_S, it is killed GRACE_S later: a stuck disk must not
# keep the harness from its deny).
AGAIN_S=1
GRACE_S=3
status_deny=$1
said_deny=$2
shift 3
what=$*
deny() {
    [ -z "$timer" ] || kill "$timer" 2>/dev/null
    printf '%s\n' "$said_deny"
    printf 'wisp: `%s` %s; denied\n' "$what" "$1" >&2
    exit "$status_deny"
}
[ "$signals" -eq 0 ] || deny "was stopped by a signal before it started"
exec 3<&0
WISP_HOOK_GUARD=$$ "$@" <&3 3<&- & # wisp watches its parent by this pid
pid=$!
exec 3<&-
[ "$signals" -eq 0 ] || kill -TERM "$pid" 2>/dev/null # a signal before its pid was known
# A trapped signal cuts `wait` short (a status over 128, wisp still running): wait again,
# until wisp has ended. A wait that finds no such child (127) comes after the one that saw
# it end, whose status stands.
while :; do
    if [ "$signals" -ne 0 ] && [ -z "$timer" ]; then
        (sleep "$AGAIN_S" && kill -TERM "$pid" && sleep "$GRACE_S" && kill -KILL "$pid") \
            </dev/null >/dev/null 2>&1 &
        timer=$!
    fi
    seen=$signals
    wait "$pid"
    waited=$?
    if [ -z "$status" ] || [ "$waited" -ne 127 ]; then status=$waited; fi
    [ "$signals" -ne "$seen" ] || break
done
[ -z "$timer" ] || kill "$timer" 2>/dev/null
case $status in
    0 | 2) exit "$status" ;;
esac
deny "ended without answering (status $status)"
