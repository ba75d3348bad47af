// OpenCode plugin for the e2e tier: runs the command in $WISP_E2E_HOOK before every tool call,
// as a command hook of the other harnesses runs, and fails closed.
// stdin: {"hook_event_name": "tool.execute.before", "cwd", "input": {tool, sessionID, callID},
// "output": {args}} (OpenCode's own two objects, verbatim). The command answers on stdout with
// {"decision": "allow"} or {"decision": "deny", "reason": "..."}; a deny, a non-zero exit, a
// signal or an answer that is not one of those throws, and OpenCode does not run the tool (the
// thrown message is the tool's result, which the model sees).
import { spawnSync } from "node:child_process"

export const WispE2eHook = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    const command = process.env.WISP_E2E_HOOK
    if (!command) throw new Error("wisp e2e hook: WISP_E2E_HOOK is not set")
    const event = { hook_event_name: "tool.execute.before", cwd: directory, input, output }
    const ran = spawnSync("sh", ["-c", command], { input: JSON.stringify(event), encoding: "utf8" })
    if (ran.status !== 0) {
      throw new Error(`hook failed (exit ${ran.status}, signal ${ran.signal}): ${ran.stderr}`)
    }
    let answer
    try {
      answer = JSON.parse(ran.stdout)
    } catch {
      throw new Error(`hook answered no JSON: ${ran.stdout}`)
    }
    if (answer.decision === "allow") return
    throw new Error(answer.reason || "denied by the hook")
  },
})
