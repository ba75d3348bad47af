// wisp's OpenCode plugin: `wisp hook opencode` decides every tool call before OpenCode runs it.
// Written by `wisp hook opencode --print-settings`; save it as
// ~/.config/opencode/plugin/wisp.js (every project) or .opencode/plugin/wisp.js (one project).
//
// Before each tool call it runs wisp (WISP below: this wisp's argv) with the event on stdin:
// {"hook_event_name": "tool.execute.before", "cwd", "input": {tool, sessionID, callID},
// "output": {args}} (OpenCode's own two objects, verbatim). The call runs only when wisp exits
// 0 answering {"decision": "allow"}; anything else throws, and a throw is OpenCode's deny (the
// thrown text is the tool's result, which the model sees): wisp's deny and its reason, wisp
// not found or not runnable, wisp killed or crashed, an answer that is not wisp's.
// OpenCode sets no time limit on a plugin: wisp's own wait (--wait) bounds it.
import { spawn } from "node:child_process"

const WISP = __WISP_ARGV__

function runWisp(event) {
  return new Promise((resolve) => {
    const done = (ran) => resolve(ran)
    let child
    try {
      child = spawn(WISP[0], WISP.slice(1), { stdio: ["pipe", "pipe", "pipe"] })
    } catch (error) {
      done({ error: String(error && error.message) })
      return
    }
    let out = ""
    let err = ""
    child.stdout.setEncoding("utf8").on("data", (data) => { out += data })
    child.stderr.setEncoding("utf8").on("data", (data) => { err += data })
    child.on("error", (error) => done({ error: String(error && error.message) }))
    child.on("close", (code, signal) => done({ code, signal, out, err }))
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(event))
  })
}

export const Wisp = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    const event = { hook_event_name: "tool.execute.before", cwd: directory, input, output }
    const ran = await runWisp(event)
    if (ran.error !== undefined) {
      throw new Error(`wisp: \`${WISP.join(" ")}\` could not be run (${ran.error}); denied`)
    }
    let answer = null
    try {
      answer = JSON.parse(ran.out)
    } catch {
      answer = null
    }
    if (ran.code === 0 && answer !== null && answer.decision === "allow") return
    if (answer !== null && typeof answer.reason === "string" && answer.reason) {
      throw new Error(answer.reason)
    }
    const how = ran.signal ? `killed by ${ran.signal}` : `exit ${ran.code}`
    throw new Error(`wisp: \`wisp hook opencode\` ended without answering (${how}); denied ${ran.err.trim()}`)
  },
})
