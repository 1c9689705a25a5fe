#!/usr/bin/env bash
# run.sh runs the side-by-side benchmark grid, compares the implementations
# with benchstat and writes RESULTS.md (medians, jobkit/peer ratios, targets
# met or missed) and results/chart.svg.
#
# Usage: bench/run.sh [go test -bench regexp, default: every scenario]
#
# Scenario 1 (BenchmarkMPMC/keys=<kind>/path=<work|scope>/backlog=<small|1M>/
# p=<P>/c=<C>/batch=<B>/impl=<impl>) runs a fixed number of items (MPMC_N)
# for every implementation: with a preloaded backlog the cost of the queues'
# hash tables depends on how many items a run adds, so a time-based
# -benchtime would give each implementation a different load. The other
# scenarios run for BENCHTIME. The report has one scenario-1 table per key
# kind and path, and leads with the least favourable of them.
#
# Scenario 5 (BenchmarkSched_NoOp/workers=<W>/adds=<during|before>/p=<P>/
# impl=<impl>) runs no-op jobs through the scheduler, sched, and through raw
# goroutines and worker pools (conc, pond, ants) for BENCHTIME; the report
# gives it a table of ratios and a chart of its own (SCHED_SVG), then the
# first row again with int and string keys and with IDs from four producers'
# ranges (BenchmarkSched_NoOpKeys), with the producer adding 64 jobs at a
# time (BenchmarkSched_AddAll), and the per-job work under the backend's
# lock and the scheduler around a backend that does nearly nothing
# (BenchmarkSched_Floor).
#
# Section 6 (the packages' own costs) runs separately from the grid, in the
# same rounds, into COSTS_OUT: the cron engine against gocron
# (BenchmarkCron_Register and BenchmarkCron_Run, here, for COSTS_N
# iterations, since a run of BenchmarkCron_Run waits for the clock), and the
# in-package benchmarks of cron (against robfig/cron in the same run),
# scope, governor (against x/sync's semaphore, a channel and a mutex) and
# distinct (Config.Timestamps on and off), run from the repository's root
# for BENCHTIME. A round of them takes about 2 minutes.
#
# At COUNT=6 the whole grid takes about 65 minutes on the project's 2-core
# machine: a round is about 7.5 minutes of scenario 1 (260 benchmarks; two
# thirds of their timed part is controller-runtime's priority queue, at 2–10
# µs per item), about 2 minutes of scenarios 2–4 and about 1.5 minutes of
# scenario 5 (50 benchmarks).
#
# Environment:
#   COUNT      runs per benchmark, in as many rounds (default 6; the targets
#              need ≥ 6)
#   CPU        -cpu list (default 2: the project's machine has 2 cores)
#   BENCHTIME  -benchtime for all but scenario 1 (default 1s)
#   MPMC_N     items per scenario-1 run (default 1000000)
#   MPMC_BACKLOG  keys preloaded for scenario 1's large backlog (default
#              1000000, named backlog=1M); passed to the benchmarks as
#              JOBKIT_BENCH_BACKLOG
#   OUT        raw output file (default results/bench.txt)
#   COSTS_OUT  raw output file of section 6 (default results/costs.txt)
#   COSTS_N    iterations of the cron engine's benchmarks (default 2000)
#   GRID=0     run section 6 only, leaving OUT as it is
#   COSTS=0    run the grid only, leaving COSTS_OUT as it is (as a FILTER
#              does)
#   REPORT, SVG, SCHED_SVG, STAT  where the report, the charts and
#              benchstat's output go (default RESULTS.md, results/chart.svg,
#              results/sched.svg, results/benchstat.txt), so that a trial run
#              can leave the committed ones alone
#   SKIP_RUN=1 only redo the comparison and the report from OUT
#   REV        what was measured, for the report (default: git describe of
#              the repository, marked dirty if distinct/, scope/, governor/ or
#              sched/ differ)
set -euo pipefail
cd "$(dirname "$0")"

FILTER=${1:-}
COUNT=${COUNT:-6}
CPU=${CPU:-2}
BENCHTIME=${BENCHTIME:-1s}
MPMC_N=${MPMC_N:-1000000}
MPMC_BACKLOG=${MPMC_BACKLOG:-1000000}
OUT=${OUT:-results/bench.txt}
COSTS_OUT=${COSTS_OUT:-results/costs.txt}
COSTS_N=${COSTS_N:-2000}
GRID=${GRID:-1}
COSTS=${COSTS:-1}
REPORT=${REPORT:-RESULTS.md}
SVG=${SVG:-results/chart.svg}
SCHED_SVG=${SCHED_SVG:-results/sched.svg}
STAT=${STAT:-results/benchstat.txt}
BENCHSTAT=${BENCHSTAT:-go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da}
if [[ -z "${REV:-}" ]]; then
	REV=$(git -C .. rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [[ -n "$(git -C .. status --porcelain -- distinct scope governor sched 2>/dev/null)" ]]; then
		REV="$REV with uncommitted changes in distinct/, scope/, governor/ or sched/"
	fi
fi

# One go test per group, each with its benchtime.
groups=(
	"^BenchmarkMPMC\$|${MPMC_N}x"
	"^Benchmark(Duplicates|Queue_Add|Queue_AddProcess)\$|$BENCHTIME"
	"^BenchmarkRequeue\$|$BENCHTIME"
	"^BenchmarkScale\$|$BENCHTIME"
	"^BenchmarkSched_NoOp\$|$BENCHTIME"
	"^BenchmarkSched_(NoOpKeys|Floor|AddAll)\$|$BENCHTIME"
)
cmds=()
for g in "${groups[@]}"; do
	bench=${g%|*}
	bt=${g##*|}
	if [[ -n "$FILTER" ]]; then
		# A filter runs as one command, for BENCHTIME, or for MPMC_N
		# iterations if it selects scenario 1.
		bench="$FILTER"
		bt=$BENCHTIME
		if [[ "$FILTER" == *MPMC* ]]; then
			bt="${MPMC_N}x"
		fi
	fi
	env=""
	if [[ "$bench" == *MPMC* ]]; then
		env="JOBKIT_BENCH_BACKLOG=$MPMC_BACKLOG "
	fi
	cmds+=("${env}go test -run='^\$' -bench='$bench' -benchmem -count=$COUNT -cpu=$CPU -benchtime=$bt -timeout=0 .")
	if [[ -n "$FILTER" ]]; then
		break
	fi
done

# Section 6's commands; those not starting with "cd bench && " run from the
# repository's root.
costcmds=(
	"cd bench && go test -run='^\$' -bench='^BenchmarkCron_(Register|Run)\$' -benchmem -count=$COUNT -cpu=$CPU -benchtime=${COSTS_N}x -timeout=0 ."
	"go test -run='^\$' -bench='^Benchmark(Spec_Next|Parse|Every_Next|Due)\$' -benchmem -count=$COUNT -cpu=$CPU -benchtime=$BENCHTIME ./cron"
	"go test -run='^\$' -bench='^BenchmarkRun\$' -benchmem -count=$COUNT -cpu=$CPU -benchtime=$BENCHTIME ./scope"
	"go test -run='^\$' -bench='^BenchmarkGovernor_(TryAcquire|TryAcquireRelease|Acquire)\$' -benchmem -count=$COUNT -cpu=$CPU -benchtime=$BENCHTIME ./governor"
	"go test -run='^\$' -bench='^BenchmarkQueue_TakeComplete\$' -benchmem -count=$COUNT -cpu=$CPU -benchtime=$BENCHTIME ./distinct"
)
if [[ -n "$FILTER" ]]; then
	COSTS=0
fi

mkdir -p "$(dirname "$OUT")" "$(dirname "$COSTS_OUT")" "$(dirname "$REPORT")" "$(dirname "$SVG")" "$(dirname "$SCHED_SVG")" "$(dirname "$STAT")"
if [[ "${SKIP_RUN:-}" != 1 ]]; then
	if [[ "$GRID" != 0 ]]; then
		: > "$OUT"
	fi
	if [[ "$COSTS" != 0 ]]; then
		# What section 6 measured, read back by the report.
		crev=$(git -C .. rev-parse --short HEAD 2>/dev/null || echo unknown)
		if [[ -n "$(git -C .. status --porcelain -- cron scope governor distinct 2>/dev/null)" ]]; then
			crev="$crev with uncommitted changes in cron/, scope/, governor/ or distinct/"
		fi
		echo "jobkit-rev: $crev" > "$COSTS_OUT"
	fi
	# Round robin: COUNT rounds of -count=1 over every group, so that a slow
	# spell of the shared machine hits every implementation alike instead of
	# all the runs of one.
	for round in $(seq "$COUNT"); do
		if [[ "$GRID" != 0 ]]; then
			for c in "${cmds[@]}"; do
				c1=${c/-count=$COUNT/-count=1}
				echo "+ round $round/$COUNT: (cd bench && $c1) >> $OUT" >&2
				eval "$c1" | tee -a "$OUT"
			done
		fi
		if [[ "$COSTS" != 0 ]]; then
			for c in "${costcmds[@]}"; do
				c1=${c/-count=$COUNT/-count=1}
				c1=${c1#cd bench && }
				if [[ "$c1" == "${c/-count=$COUNT/-count=1}" ]]; then
					c1="cd .. && $c1"
				fi
				echo "+ round $round/$COUNT: (cd bench && $c1) >> $COSTS_OUT" >&2
				(eval "$c1") | tee -a "$COSTS_OUT"
			done
		fi
	done
fi

# benchstat: one column per implementation, jobkit first (the base).
$BENCHSTAT -col /impl "$OUT" > "$STAT"

args=()
for c in "${cmds[@]}"; do
	args+=(-cmd "cd bench && $c")
done
if [[ -f "$COSTS_OUT" ]]; then
	args+=(-costs "$COSTS_OUT")
	for c in "${costcmds[@]}"; do
		args+=(-costcmd "$c")
	done
fi
go run ./cmd/report \
	-in "$OUT" \
	-benchstat "$STAT" \
	-rev "$REV" \
	"${args[@]}" \
	-out "$REPORT" \
	-svg "$SVG" \
	-schedsvg "$SCHED_SVG"
echo "wrote $REPORT, $SVG, $SCHED_SVG, $STAT (in bench/)" >&2
