"""The policy wing: the one decision every tool call goes through before a person is asked.

Every harness's hook, the permission prompt tool, `wisp execute` and AgentSession decide a
call here, in one order (docs/policy.md): the self-guard first (never loosened by anything
below), then deny rules, then the must-ask classes, then the person's grants, then allow
rules, else the person is asked.

- :mod:`wisp.policy.shell`: a shell line read by a real bash grammar (tree-sitter-bash) into
  its simple commands, redirections and `cd`s, or said unreadable;
- :mod:`wisp.policy.reading`: a call read for the policy: its classes (read-only, the
  must-ask classes, the rest), the prefixes a person grants, the paths it writes;
- :mod:`wisp.policy.builtin`: the built-in rules, each with a name the audit records;
- :mod:`wisp.policy.rules`: the person's rules (`$WISP_HOME/policy.toml`) and a project's
  (`.wisp/policy.toml`: ask and deny only), each rule's examples checked as it loads;
- :mod:`wisp.policy.decide`: the decision, in the order above, one audit record each.
"""
