#!/usr/bin/env bash
# run.sh runs the side-by-side benchmark grid, compares the implementations
# with benchstat and writes RESULTS.md (tables of medians and jobkit/peer
# ratios, targets met or missed) and results/chart.svg.
#
# Usage: bench/run.sh [go test -bench regexp]
# Environment:
#   COUNT      runs per benchmark (default 6; the targets need ≥ 6)
#   CPU        -cpu list (default 2: the project's machine has 2 cores)
#   BENCHTIME  -benchtime (default 1s)
#   OUT        raw output file (default results/bench.txt)
#   SKIP_RUN=1 only redo the comparison and the report from OUT
set -euo pipefail
cd "$(dirname "$0")"

BENCH=${1:-.}
COUNT=${COUNT:-6}
CPU=${CPU:-2}
BENCHTIME=${BENCHTIME:-1s}
OUT=${OUT:-results/bench.txt}
BENCHSTAT=${BENCHSTAT:-go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da}

CMD="go test -run='^\$' -bench='$BENCH' -benchmem -count=$COUNT -cpu=$CPU -benchtime=$BENCHTIME -timeout=0 ."
mkdir -p "$(dirname "$OUT")"
if [[ "${SKIP_RUN:-}" != 1 ]]; then
	echo "+ (cd bench && $CMD) > bench/$OUT" >&2
	eval "$CMD" | tee "$OUT"
fi

# benchstat: one column per implementation, jobkit first (the base).
$BENCHSTAT -col /impl "$OUT" > results/benchstat.txt

go run ./cmd/report \
	-in "$OUT" \
	-benchstat results/benchstat.txt \
	-cmd "cd bench && $CMD" \
	-out RESULTS.md \
	-svg results/chart.svg
echo "wrote bench/RESULTS.md, bench/results/chart.svg, bench/results/benchstat.txt" >&2
