// agent-hooks plugin (installed by agent-hooks; do not edit)
/*
 * agent-hooks for opencode (1.18.33): opencode has no command hooks, so this plugin, which
 * opencode loads into its own process, runs agent-hooks' hook entry for it — the same entry
 * every client runs — and acts on the answer (docs/adr/0026-opencode-plugin.md).
 *
 * The installer writes this file into ~/.config/opencode/plugin/ (or <project>/.opencode/
 * plugin/) with the hook command in place of the placeholder in `COMMAND` below: a JSON
 * array, the argv prefix `[python, "-IS", entry, "opencode"]`. For each event the plugin
 * appends the event's name and writes one JSON payload on the hook's stdin:
 *
 *   tool.execute.before   a write, edit, apply_patch or bash call, before it runs (and before
 *                         opencode's permission check): a refusal is thrown, and opencode
 *                         hands the model exactly its text as the tool's result
 *   tool.execute.after    those tools, read and task, after one succeeded: context from the
 *                         hook is appended to the tool's result, which the model reads
 *   session.created       a session without a parent started (`source: "startup"`), or one
 *                         is seen for the first time (`"resume"`): its context is added to
 *                         that session's system prompt
 *   session.idle          the session's turn ended (Claude Code's Stop)
 *   session.deleted       the session was deleted (Claude Code's SessionEnd)
 *   dispose               opencode ends normally: the same, for every session seen
 *   subagent.created      a child session started (the `task` tool's subagent)
 *   subagent.idle         a child session finished or was deleted (Claude Code's SubagentStop)
 *
 * The payload speaks the hooks' common envelope: `session_id` is the conversation (the
 * session at the root of the parent chain), `agent_id` and `agent_type` name a child
 * session and its agent (a subagent is a writer of its own), `cwd` is the directory
 * opencode works in (relative paths of write, edit, apply_patch and bash resolve there),
 * `tool_use_id` the model's call id, and `tool_name`, `tool_input` (the tool's args) and
 * `tool_response` (`{title, output, metadata}`) are opencode's own.
 *
 * Invariants:
 * - Every hook is spawned asynchronously (a synchronous spawn would stop opencode's event
 *   loop, and with it every parallel tool call), without a shell, with opencode's whole
 *   environment passed on explicitly (a spawn without `env` loses OPENCODE_PID and what
 *   opencode set), and is waited for at most its limit (`LIMITS`), then killed.
 * - Only a `deny` the hook answers blocks a call. A hook that cannot be spawned, exits with
 *   a failure, answers what is not JSON, or outlives its limit lets the call through, and
 *   the plugin logs why in agent-hooks' log (`agent-hooks.log` in CLAUDE_CONFIG_DIR, else
 *   ~/.claude): opencode has no hook timeout of its own, and a thrown error is a refusal.
 * - Nothing this plugin does throws into opencode except that refusal.
 * - A session's tool hooks wait for its start hook (and its root's), so the start never
 *   resets a trail a tool call already added to.
 * - Plain JavaScript with `node:` imports only: it loads with nothing installed.
 */
import { spawn } from "node:child_process";
import { closeSync, constants, fstatSync, mkdirSync, openSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

const COMMAND = __AGENT_HOOKS_COMMAND__;

// How long each event's hook may take before the call goes on without it (milliseconds):
// as long as the other clients' installs allow theirs.
const LIMITS = {
  "session.created": 30_000,
  "tool.execute.before": 10_000,
  "tool.execute.after": 10_000,
  "session.idle": 10_000,
  "session.deleted": 5_000,
  dispose: 5_000,
  "subagent.created": 10_000,
  "subagent.idle": 30_000,
};
const CHECKED = new Set(["write", "edit", "apply_patch", "bash"]); // before they run
const RECORDED = new Set(["write", "edit", "apply_patch", "bash", "read", "task"]); // after
const MAX_ANSWER = 1 << 20; // bytes of stdout read from a hook
const LOOKUP_MS = 2_000; // asking opencode for a session it never announced

/** One line in agent-hooks' log, as the hooks write theirs (never throws). */
function log(event, message) {
  try {
    const configured = process.env.CLAUDE_CONFIG_DIR || "";
    const home = process.env.HOME || homedir();
    const dir = configured
      ? configured.startsWith("~/")
        ? join(home, configured.slice(2))
        : configured
      : join(home, ".claude");
    if (!isAbsolute(dir)) return;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const agent = escape(process.env.AGENT_NAME || "-");
    const line = `${stamp} pid=${process.pid} agent=${agent} event=${escape(event)} ${escape(message)}\n`;
    const fd = openSync(
      join(dir, "agent-hooks.log"),
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW |
        constants.O_NONBLOCK,
      0o600,
    );
    try {
      if (fstatSync(fd).isFile()) writeSync(fd, line);
    } finally {
      closeSync(fd);
    }
  } catch {
    // a log that cannot be written must never reach opencode
  }
}

/** `text` on one printable line: controls escaped, a backslash doubled. */
function escape(text) {
  return String(text).replace(/[\\\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
    c === "\\" ? "\\\\" : c === "\n" ? "\\n" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

/**
 * Run the hook for `event` with `payload`; resolves to its answer (an object, possibly
 * empty), never rejects: whatever goes wrong is logged and answered with `{}` (allow).
 */
function runHook(event, payload) {
  const limit = LIMITS[event] ?? 10_000;
  return new Promise((settle) => {
    let done = false;
    let timer;
    const finish = (answer, problem) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (problem) log(event, `${problem}; allowed (fail open)`);
      settle(answer);
    };
    let child;
    try {
      if (!Array.isArray(COMMAND) || COMMAND.length === 0) throw new Error("no hook command");
      child = spawn(COMMAND[0], [...COMMAND.slice(1), event], {
        env: { ...process.env },
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
      });
    } catch (error) {
      finish({}, `the hook could not be started (${error?.message ?? error})`);
      return;
    }
    timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {}
      finish({}, `the hook did not answer within ${limit / 1000} s (killed)`);
    }, limit);
    const out = [];
    let size = 0;
    let err = "";
    child.stdout.on("data", (chunk) => {
      if (size <= MAX_ANSWER) out.push(chunk);
      size += chunk.length;
    });
    child.stderr.on("data", (chunk) => {
      if (err.length < 2_000) err += chunk.toString("utf8");
    });
    child.on("error", (error) => finish({}, `the hook could not be started (${error.message})`));
    child.on("close", (code, signal) => {
      const text = Buffer.concat(out).toString("utf8").trim();
      const said = err.trim().split("\n")[0].slice(0, 300);
      if (code !== 0) {
        finish({}, `the hook exited ${signal ?? code}${said ? `: ${said}` : ""}`);
      } else if (size > MAX_ANSWER) {
        finish({}, `the hook's answer is larger than ${MAX_ANSWER} bytes`);
      } else if (!text) {
        finish({});
      } else {
        let answer;
        try {
          answer = JSON.parse(text);
        } catch {
          answer = undefined;
        }
        if (answer && typeof answer === "object" && !Array.isArray(answer)) finish(answer);
        else finish({}, `the hook's answer is not a JSON object: ${JSON.stringify(text.slice(0, 120))}`);
      }
    });
    child.stdin.on("error", () => {}); // a hook that exits before reading all of it
    child.stdin.end(JSON.stringify({ hook_event_name: event, ...payload }));
  });
}

export const AgentHooks = async ({ client, directory }) => {
  const cwd = typeof directory === "string" && directory ? directory : process.cwd();
  // session id -> {parent, agent, started: the promise of its start hook}
  const sessions = new Map();
  const pending = new Set();

  const track = (promise) => {
    pending.add(promise);
    promise.finally(() => pending.delete(promise));
    return promise;
  };

  const rootOf = (id) => {
    let here = id;
    for (let hops = 0; hops < 64; hops++) {
      const parent = sessions.get(here)?.parent;
      if (!parent) return here;
      here = parent;
    }
    return here;
  };

  /** The envelope of a hook in session `id`: the conversation, and the child's own id. */
  const envelope = (id) => {
    const known = sessions.get(id);
    const payload = { session_id: rootOf(id), cwd };
    if (known?.parent) {
      payload.agent_id = id;
      if (known.agent) payload.agent_type = known.agent;
    }
    return payload;
  };

  const started = (id, parent, agent, source) => {
    if (sessions.has(id)) return sessions.get(id).started;
    const entry = { parent: parent || null, agent: agent || null, started: null };
    sessions.set(id, entry);
    entry.started = parent
      ? track(runHook("subagent.created", envelope(id)))
      : track(runHook("session.created", { ...envelope(id), source }));
    return entry.started;
  };

  /** A session never announced (resumed, or created before this plugin loaded): ask
   * opencode for its parent, then start it. */
  const known = async (id) => {
    if (typeof id !== "string" || !id) return;
    if (!sessions.has(id)) {
      let info;
      try {
        const lookup = client?.session?.get?.({ path: { id } });
        const timeout = new Promise((r) => setTimeout(r, LOOKUP_MS, undefined));
        info = (await Promise.race([lookup, timeout]))?.data;
      } catch {
        info = undefined;
      }
      if (!sessions.has(id)) {
        const parent = typeof info?.parentID === "string" ? info.parentID : null;
        if (parent) await known(parent);
        started(id, parent, info?.agent, "resume");
      }
    }
    // its start hook, and its root's, before any of its tool hooks
    await sessions.get(id).started;
    await sessions.get(rootOf(id))?.started;
  };

  const ended = (id, event) => {
    const entry = sessions.get(id);
    if (!entry) return;
    if (event === "session.deleted") sessions.delete(id);
    track(runHook(entry.parent ? "subagent.idle" : event, envelope(id)));
  };

  /** The model's context in a hook's answer, if any. */
  const contextOf = (answer) =>
    typeof answer?.context === "string" && answer.context ? answer.context : null;

  return {
    event: async ({ event }) => {
      try {
        const props = event?.properties ?? {};
        if (event?.type === "session.created") {
          const info = props.info ?? {};
          if (typeof info.id !== "string") return;
          const parent = typeof info.parentID === "string" ? info.parentID : null;
          started(info.id, parent, info.agent, "startup");
        } else if (event?.type === "session.idle") {
          ended(props.sessionID, "session.idle");
        } else if (event?.type === "session.deleted") {
          ended(props.info?.id ?? props.sessionID, "session.deleted");
        }
      } catch (error) {
        log("event", `plugin error: ${error?.message ?? error}`);
      }
    },

    "chat.message": async (input) => {
      try {
        await known(input?.sessionID);
      } catch (error) {
        log("chat.message", `plugin error: ${error?.message ?? error}`);
      }
    },

    "experimental.chat.system.transform": async (input, output) => {
      try {
        // the start hook's context, in every request of a session without a parent
        const id = input?.sessionID;
        const entry = typeof id === "string" ? sessions.get(id) : undefined;
        if (!entry || entry.parent) return;
        const text = contextOf(await entry.started);
        if (text && Array.isArray(output?.system)) output.system.push(text);
      } catch (error) {
        log("experimental.chat.system.transform", `plugin error: ${error?.message ?? error}`);
      }
    },

    "shell.env": async (input, output) => {
      try {
        // the `agent-hooks` command run from the agent's bash finds its conversation here
        if (typeof input?.sessionID === "string" && output?.env) {
          output.env.OPENCODE_SESSION_ID = rootOf(input.sessionID);
        }
      } catch {}
    },

    "tool.execute.before": async (input, output) => {
      let answer = {};
      try {
        if (!CHECKED.has(input?.tool)) return;
        await known(input.sessionID);
        answer = await runHook("tool.execute.before", {
          ...envelope(input.sessionID),
          tool_name: input.tool,
          tool_input: output?.args ?? {},
          tool_use_id: input.callID,
        });
      } catch (error) {
        log("tool.execute.before", `plugin error: ${error?.message ?? error}; allowed`);
        return;
      }
      if (typeof answer.deny === "string" && answer.deny) throw new Error(answer.deny);
    },

    "tool.execute.after": async (input, output) => {
      try {
        if (!RECORDED.has(input?.tool)) return;
        await known(input.sessionID);
        const answer = await runHook("tool.execute.after", {
          ...envelope(input.sessionID),
          tool_name: input.tool,
          tool_input: input.args ?? {},
          tool_use_id: input.callID,
          tool_response: {
            title: output?.title,
            output: output?.output,
            metadata: output?.metadata,
          },
        });
        const text = contextOf(answer);
        if (text && output && typeof output.output === "string") {
          output.output = `${output.output}\n\n${text}`;
        }
      } catch (error) {
        log("tool.execute.after", `plugin error: ${error?.message ?? error}`);
      }
    },

    dispose: async () => {
      try {
        await Promise.allSettled([...pending]);
        const roots = [...sessions.entries()].filter(([, entry]) => !entry.parent);
        await Promise.allSettled(
          roots.map(([id]) => runHook("dispose", envelope(id))),
        );
      } catch (error) {
        log("dispose", `plugin error: ${error?.message ?? error}`);
      }
    },
  };
};
