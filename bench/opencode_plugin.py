#!/usr/bin/env python3
"""What agent-hooks' opencode plugin adds to a tool call, timed inside Node.js as opencode's
process would see it: spawn to exit of

  bare    `python -I -S -c pass`, spawned asynchronously (what any hook costs at least)
  hook    the entry (`entry.pyc opencode tool.execute.before`, a write's payload on stdin),
          spawned the same way
  plugin  the plugin's whole `tool.execute.before` for that write: its session look-up, the
          payload built, the same spawn, the answer read

run A B C A B C … so a shared machine's drift meets all three alike. Prints medians in ms and
the ratios to `bare`; exits 0 (a report, not a test). The hook's budget is 1.5x of bare; the
plugin's own share is `plugin - hook`.

    python bench/opencode_plugin.py [--runs 60] [--python /abs/python] [--node node]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from hooks import compiled_entry, new_project, payload_file, start_session  # noqa: E402

DRIVER = r"""
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [pluginPath, configPath] = process.argv.slice(2);
const config = JSON.parse(readFileSync(configPath, "utf8"));
process.env.OPENCODE_PID = String(process.pid);
const run = (argv, input) => new Promise((done) => {
  const started = process.hrtime.bigint();
  const child = spawn(argv[0], argv.slice(1), { env: { ...process.env }, stdio: ["pipe", "pipe", "pipe"] });
  child.stdout.on("data", () => {});
  child.stderr.on("data", () => {});
  child.on("close", () => done(Number(process.hrtime.bigint() - started) / 1e6));
  child.stdin.end(input ?? "");
});
const { AgentHooks } = await import(pathToFileURL(pluginPath).href);
const hooks = await AgentHooks({ client: {}, directory: config.directory });
const payload = JSON.stringify(config.payload);
const times = { bare: [], hook: [], plugin: [] };
for (let n = -3; n < config.runs; n++) {  // three warm-up rounds
  const bare = await run([config.python, "-I", "-S", "-c", "pass"]);
  const hook = await run([...config.command, "tool.execute.before"], payload);
  const started = process.hrtime.bigint();
  const output = { args: { ...config.args } };
  await hooks["tool.execute.before"]({ ...config.input }, output);
  const plugin = Number(process.hrtime.bigint() - started) / 1e6;
  if (n >= 0) { times.bare.push(bare); times.hook.push(hook); times.plugin.push(plugin); }
}
process.stdout.write(JSON.stringify(times));
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--python", default=os.path.realpath(sys.executable))
    parser.add_argument("--node", default=shutil.which("node"))
    args = parser.parse_args()
    if not args.node:
        print("node is not on PATH: nothing measured", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        project, env = new_project(tmp)
        env.pop("CLAUDE_PROJECT_DIR")  # opencode sets no such variable
        entry = compiled_entry(args.python, tmp)
        command = [args.python, "-IS", str(entry), "opencode"]
        start_session([args.python, "-IS", str(entry)], env, tmp, project)
        (project / "a.txt").write_text("alpha\n")
        payload = json.loads(
            payload_file(tmp, "opencode/tool.execute.before_write", project, "a.txt").read_text()
        )
        template = (ROOT / "hooks" / "opencode" / "agent-hooks.js").read_text()
        plugin = tmp / "agent-hooks.js"
        plugin.write_text(template.replace("__AGENT_HOOKS_COMMAND__", json.dumps(command)))
        driver = tmp / "driver.mjs"
        driver.write_text(DRIVER)
        config = tmp / "config.json"
        session = payload["session_id"]
        config.write_text(
            json.dumps(
                {
                    "runs": args.runs,
                    "python": args.python,
                    "command": command,
                    "directory": str(project),
                    "payload": payload,
                    "input": {"tool": "write", "sessionID": session, "callID": "call_write"},
                    "args": payload["tool_input"],
                }
            )
        )
        done = subprocess.run(
            [args.node, str(driver), str(plugin), str(config)],
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            check=False,
        )
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        times = json.loads(done.stdout)
    medians = {name: statistics.median(values) for name, values in times.items()}
    bare = medians["bare"]
    print(f"python: {args.python}; node: {args.node}; {args.runs} rounds (bare, hook, plugin)")
    for name in ("bare", "hook", "plugin"):
        print(f"  {name:<7} {medians[name]:7.2f} ms   {medians[name] / bare:5.2f}x bare")
    print(f"  the plugin's own share (plugin - hook): {medians['plugin'] - medians['hook']:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
