// wisp's pi extension: `wisp hook pi` decides every tool call before pi runs it.
// Written by `wisp hook pi --print-settings`; save it as ~/.pi/agent/extensions/wisp.js (every
// project) or .pi/extensions/wisp.js (one project: loaded once pi trusts the project).
//
// Before each tool call (pi's `tool_call` event) it runs wisp (WISP below: this wisp's argv)
// with {"hook_event_name": "tool_call", "cwd", "session_id", "tool_name", "tool_call_id",
// "tool_input"} on stdin. The call runs only when wisp exits 0 answering {"decision": "allow"};
// anything else is pi's block, {block: true, reason} (the reason is the tool's result, which
// the model sees): wisp's deny and its reason, wisp not found or not runnable, wisp killed or
// crashed, an answer that is not wisp's. A throw here blocks too (pi's own rule). Once wisp
// allows, the call's input is frozen: an extension after this one that would change it throws,
// and pi blocks the call, so what runs is what was asked. pi sets no time limit on an
// extension: wisp's own wait (--wait) bounds it.
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

function freeze(value) {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const item of Object.values(value)) freeze(item)
  }
  return value
}

async function decide(event, ctx) {
  const call = {
    hook_event_name: "tool_call",
    cwd: ctx.cwd,
    session_id: ctx.sessionManager.getSessionId(),
    tool_name: event.toolName,
    tool_call_id: event.toolCallId,
    tool_input: event.input,
  }
  const ran = await runWisp(call)
  if (ran.error !== undefined) {
    return { block: true, reason: `wisp: \`${WISP.join(" ")}\` could not be run (${ran.error}); denied` }
  }
  let answer = null
  try {
    answer = JSON.parse(ran.out)
  } catch {
    answer = null
  }
  if (ran.code === 0 && answer !== null && answer.decision === "allow") {
    freeze(event.input)
    return undefined
  }
  if (answer !== null && typeof answer.reason === "string" && answer.reason) {
    return { block: true, reason: answer.reason }
  }
  const how = ran.signal ? `killed by ${ran.signal}` : `exit ${ran.code}`
  return { block: true, reason: `wisp: \`wisp hook pi\` ended without answering (${how}); denied ${ran.err.trim()}` }
}

export default function wisp(pi) {
  pi.on("tool_call", async (event, ctx) => {
    try {
      return await decide(event, ctx)
    } catch (error) {
      return { block: true, reason: `wisp: the call could not be put to wisp (${error && error.message}); denied` }
    }
  })
}
