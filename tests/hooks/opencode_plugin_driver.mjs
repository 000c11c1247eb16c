// Drives agent-hooks' opencode plugin as opencode 1.18.33 does, for
// tests/hooks/test_opencode_plugin.py: `node opencode_plugin_driver.mjs PLUGIN SCENARIO`.
//
// The plugin is imported and its exported function called once with `{client, directory,
// worktree}` (client.session.get answers from the scenario's `sessions`); process.env gets
// OPENCODE_PID, as opencode sets its own. Each entry of the scenario's `steps` is a group of
// hook calls `{hook, input, output}` run concurrently and awaited; the next group starts
// after. Printed as JSON: per group its wall time, how often a 5 ms timer fired meanwhile
// (0 would mean the event loop was blocked), and per call whether it threw (the message)
// and its `output` object afterwards.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [pluginPath, scenarioPath] = process.argv.slice(2);
const scenario = JSON.parse(readFileSync(scenarioPath, "utf8"));
process.env.OPENCODE_PID = String(process.pid);
for (const [name, value] of Object.entries(scenario.env ?? {})) process.env[name] = value;
const sessions = scenario.sessions ?? {};
const looked = [];
const client = {
  session: {
    get: async ({ path: { id } }) => {
      looked.push(id);
      return { data: sessions[id] };
    },
  },
};
const module = await import(pathToFileURL(pluginPath).href);
const exported = Object.values(module).filter((value) => typeof value === "function");
const hooks = await exported[0]({
  client,
  directory: scenario.directory,
  worktree: scenario.directory,
});
const groups = [];
for (const group of scenario.steps) {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const started = Date.now();
  const calls = await Promise.all(
    group.map(async (step) => {
      const hook = hooks[step.hook];
      if (typeof hook !== "function") return { missing: true };
      try {
        await hook(step.input, step.output);
        return { output: step.output ?? null };
      } catch (error) {
        return { thrown: error?.message ?? String(error), isError: error instanceof Error };
      }
    }),
  );
  clearInterval(timer);
  groups.push({ ms: Date.now() - started, ticks, calls });
}
process.stdout.write(
  JSON.stringify({ pid: process.pid, exports: Object.keys(module), groups, looked }),
);
