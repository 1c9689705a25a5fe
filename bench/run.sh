#!/usr/bin/env bash
# run.sh runs the side-by-side benchmark grid, compares the implementations
# with benchstat and writes RESULTS.md (medians, jobkit/peer ratios, targets
# met or missed) and results/chart.svg.
#
# Usage: bench/run.sh [go test -bench regexp, default: every scenario]
#
# Scenario 1 (MPMC) runs a fixed number of items (MPMC_N) for every
# implementation: its backlog, and so the cost of the queues' hash tables,
# grows with b.N, so a time-based -benchtime would give each implementation a
# different load. The other scenarios run for BENCHTIME.
#
# Environment:
#   COUNT      runs per benchmark, in as many rounds (default 6; the targets
#              need ≥ 6)
#   CPU        -cpu list (default 2: the project's machine has 2 cores)
#   BENCHTIME  -benchtime for all but scenario 1 (default 1s)
#   MPMC_N     items per scenario-1 run (default 1000000)
#   OUT        raw output file (default results/bench.txt)
#   SKIP_RUN=1 only redo the comparison and the report from OUT
#   REV        what was measured, for the report (default: git describe of
#              the repository, marked dirty if distinct/ or scope/ differ)
set -euo pipefail
cd "$(dirname "$0")"

FILTER=${1:-}
COUNT=${COUNT:-6}
CPU=${CPU:-2}
BENCHTIME=${BENCHTIME:-1s}
MPMC_N=${MPMC_N:-1000000}
OUT=${OUT:-results/bench.txt}
BENCHSTAT=${BENCHSTAT:-go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da}
if [[ -z "${REV:-}" ]]; then
	REV=$(git -C .. rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [[ -n "$(git -C .. status --porcelain -- distinct scope 2>/dev/null)" ]]; then
		REV="$REV with uncommitted changes in distinct/ or scope/"
	fi
fi

# One go test per group, each with its benchtime.
groups=(
	"^BenchmarkMPMC\$|${MPMC_N}x"
	"^Benchmark(Duplicates|Queue_Add|Queue_AddProcess)\$|$BENCHTIME"
	"^BenchmarkRequeue\$|$BENCHTIME"
	"^BenchmarkScale\$|$BENCHTIME"
)
cmds=()
for g in "${groups[@]}"; do
	bench=${g%|*}
	bt=${g##*|}
	if [[ -n "$FILTER" ]]; then
		bench="$FILTER"
	fi
	cmds+=("go test -run='^\$' -bench='$bench' -benchmem -count=$COUNT -cpu=$CPU -benchtime=$bt -timeout=0 .")
	if [[ -n "$FILTER" ]]; then
		break
	fi
done

mkdir -p "$(dirname "$OUT")"
if [[ "${SKIP_RUN:-}" != 1 ]]; then
	: > "$OUT"
	# Round robin: COUNT rounds of -count=1 over every group, so that a slow
	# spell of the shared machine hits every implementation alike instead of
	# all the runs of one.
	for round in $(seq "$COUNT"); do
		for c in "${cmds[@]}"; do
			c1=${c/-count=$COUNT/-count=1}
			echo "+ round $round/$COUNT: (cd bench && $c1) >> bench/$OUT" >&2
			eval "$c1" | tee -a "$OUT"
		done
	done
fi

# benchstat: one column per implementation, jobkit first (the base).
$BENCHSTAT -col /impl "$OUT" > results/benchstat.txt

args=()
for c in "${cmds[@]}"; do
	args+=(-cmd "cd bench && $c")
done
go run ./cmd/report \
	-in "$OUT" \
	-benchstat results/benchstat.txt \
	-rev "$REV" \
	"${args[@]}" \
	-out RESULTS.md \
	-svg results/chart.svg
echo "wrote bench/RESULTS.md, bench/results/chart.svg, bench/results/benchstat.txt" >&2
