#!/usr/bin/env bash
# Checks the import rules of docs/design.md, Layers: imports point down
# the layers cells <- kvstore <- policy <- datapath <- clustermesh <- cmd; leaf
# packages of plain types import nothing of apiary but other leaves; the
# policy engine and the CLI stay free of the framework and etcd.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=github.com/apiary-net/apiary

# Leaves may be imported from anywhere.
leaves=" cells/localnode/cluster cells/api/models cells/api/client cells/version "

layer() {
	case "$1" in
	cells/*) echo 1 ;; kvstore | kvstore/*) echo 2 ;; policy | policy/*) echo 3 ;;
	datapath | datapath/* | bpf | bpf/*) echo 4 ;; clustermesh | clustermesh/*) echo 5 ;;
	cmd/* | hack/*) echo 6 ;; # programs: the agent, the CLI, the embedding example
	*) echo 0 ;;
	esac
}

fail=0
while read -r pkg imports; do
	p=${pkg#"$mod"/}
	for imp in $imports; do
		case "$imp" in "$mod"/*) ;; *) continue ;; esac
		q=${imp#"$mod"/}
		if [[ "$leaves" == *" $p "* ]]; then
			if [[ "$leaves" != *" $q "* ]]; then
				echo "leaf package $p imports $q (leaves import only other leaves)"
				fail=1
			fi
			continue
		fi
		[[ "$leaves" == *" $q "* ]] && continue
		if (($(layer "$q") > $(layer "$p"))); then
			echo "$p (layer $(layer "$p")) imports $q (layer $(layer "$q")): imports must point down"
			fail=1
		fi
	done
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)

# forbid <package> <pattern> <why>: no dependency of package matches
# pattern (leaves aside: they hold plain types and import nothing).
forbid() {
	local bad leaf
	bad=$(go list -deps "./$1" | grep -E "$2" || true)
	for leaf in $leaves; do
		bad=$(grep -vx "$mod/$leaf" <<<"$bad" || true)
	done
	if [[ -n "$bad" ]]; then
		echo "$1 must not depend on $2 ($3):"
		echo "$bad" | sed 's/^/  /'
		fail=1
	fi
}
forbid cmd/apiary '^go\.etcd\.io/|^go\.uber\.org/dig' "the CLI is a thin client of the API"
forbid cmd/apiary-cni '^go\.etcd\.io/|^go\.uber\.org/dig' "the CNI plugin is a thin client of the API"
forbid cmd/apiary "^k8s\.io/" "the CLI is a thin client of the API (no client-go)"
forbid cmd/apiary-agent '^k8s\.io/client-go/(kubernetes|discovery|applyconfigurations)(/|$)' \
	"cells/k8s builds REST clients of the few API groups it reads; client-go's clientset links all of k8s.io/api and doubles the build"
forbid policy "^$mod/(cells|kvstore)|^go\.etcd\.io/|^go\.uber\.org/dig" "the policy engine holds no agent glue"
forbid policy/simulate "^$mod/(cells|kvstore)|^go\.etcd\.io/|^go\.uber\.org/dig" "simulate runs offline"
for p in cells kvstore policy; do
	forbid "$p/..." "^$mod/(bpf|datapath/maps|datapath/loader)(/|\$)|^github\.com/cilium/ebpf" "only the datapath touches BPF"
done
forbid cells/hive "^$mod/cells/job" "the framework stands alone"

# kvstore/layout spells Cilium's keys for every layer above cells: plain
# strings and functions, it imports nothing of apiary.
if bad=$(go list -f '{{join .Imports "\n"}}' ./kvstore/layout | grep "^$mod/"); then
	echo "kvstore/layout must import nothing of apiary (a leaf of plain strings):"
	echo "$bad" | sed 's/^/  /'
	fail=1
fi

exit $fail
