#!/usr/bin/env bash
# Prints the path of a base binary for `make sprt BASE=…`: BASE itself when it is
# an executable file, else a release build of the git ref BASE in a worktree
# under engine-tests/out/base-<sha> (built once per commit).
set -euo pipefail
base=${1:?usage: build_base.sh <binary or git ref>}
if [ -f "$base" ] && [ -x "$base" ]; then
  readlink -f "$base"
  exit 0
fi
sha=$(git rev-parse --verify --quiet "$base^{commit}") || { echo "not a binary nor a git ref: $base" >&2; exit 2; }
dir="engine-tests/out/base-${sha:0:12}"
if [ ! -x "$dir/qilin" ]; then
  rm -rf "$dir"
  git worktree add --detach --force "$dir" "$sha" >&2
  make -C "$dir" >&2
fi
readlink -f "$dir/qilin"
