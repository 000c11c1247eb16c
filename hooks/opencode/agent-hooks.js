// agent-hooks plugin (installed by agent-hooks; do not edit)
// A placeholder until the opencode client lands: it loads, holds the hook command and does
// nothing. The installer puts this file into ~/.config/opencode/plugin/ (or
// <project>/.opencode/plugin/) with the token below replaced by the hook command's argv
// prefix, a JSON array: [python, "-IS", entry, "opencode"]; the plugin appends the event.
const AGENT_HOOKS_COMMAND = __AGENT_HOOKS_COMMAND__;

export const AgentHooks = async () => {
  void AGENT_HOOKS_COMMAND;
  return {};
};
