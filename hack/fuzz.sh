#!/usr/bin/env bash
# Runs every fuzz target of the main module (test files outside hack/)
# from its corpus for a fixed number of executions each:
# fuzz.sh <go> <execs>.
#
# The run is bounded by a count (-fuzztime <execs>x), not a duration: Go
# 1.26's fuzz coordinator can fail a duration-bounded run with a bare
# "context deadline exceeded" when the deadline races a worker
# (go.dev/issue/75804, fixed in Go 1.27), which cannot be told apart from
# a failure by go test's exit status. A count-bounded run has no such
# deadline, so every non-zero exit is a failure.
set -euo pipefail
go=${1:-go}
execs=${2:-20000}

mapfile -t files < <(grep -rl --include='*_test.go' --exclude-dir=hack --exclude-dir=.git '^func Fuzz' . | sort)
targets=()
for f in "${files[@]}"; do
	while read -r t; do
		[ -n "$t" ] && targets+=("$(dirname "$f") $t")
	done < <(sed -n 's|^func \(Fuzz[A-Za-z0-9_]*\)(.*|\1|p' "$f")
done
echo "${#targets[@]} fuzz targets, $execs executions each"

for entry in "${targets[@]}"; do
	read -r dir target <<<"$entry"
	echo "fuzz $dir $target"
	if ! "$go" test -run '^$' -fuzz "^$target\$" -fuzztime "${execs}x" "$dir"; then
		echo "fuzz $dir $target failed" >&2
		exit 1
	fi
done
