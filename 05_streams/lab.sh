#!/usr/bin/env bash
# lab.sh - the 05_streams lab from README.md "Lab", with compact output (`make profile` runs it).
#   1. nsys: the timeline of overlap (copies and kernels of 8 streams overlapping) and of
#      concurrent_kernels (16 one-block kernels side by side) - only where nsys can write a report
#   2. ncu: overlap's kernel is compute-bound (SM busy, DRAM idle), so its time can be matched to
#      the copy time with --iters
#   3. ncu: one CUDA graph launch of graphs, profiled as one workload (--graph-profiling graph)
#   4. compute-sanitizer racecheck and synccheck on overlap, memcheck on dynamic_parallelism (the other
#      tools refuse dynamic parallelism) and on
#      host_callbacks (host functions and pinned memory)
# Needs the programs built (make); steps whose tool is missing are skipped with a note. ncu needs
# permission to read the GPU counters (root, or the driver's NVreg_RestrictProfilingToAdminUsers=0).
set -u
set -f  # the regular expressions below contain * and |: no filename expansion
cd "$(dirname "$0")"
NCU=${NCU:-ncu}
NSYS=${NSYS:-nsys}
SAN=${SAN:-compute-sanitizer}
have() { command -v "$1" >/dev/null 2>&1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== 1. nsys timelines (overlap, concurrent_kernels)"
if have "$NSYS"; then
    for run in "overlap --n=2^24 --reps=2 --only=serial|8.streams.*depth" "concurrent_kernels --kernels=16 --reps=2"; do
        prog=${run%% *}
        # shellcheck disable=SC2086
        if "$NSYS" profile --trace=cuda --force-overwrite true -o "$TMP/$prog" ./$run >"$TMP/$prog.log" 2>&1 &&
            [ -f "$TMP/$prog.nsys-rep" ]; then
            echo "-- $prog: the first GPU operations (start ns, duration ns, stream, name)"
            "$NSYS" stats --report cuda_gpu_trace --format csv --output - "$TMP/$prog.nsys-rep" 2>/dev/null |
                python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(l for l in sys.stdin if l.count(",") > 3)]
for r in rows[:24]:
    print("    {:>14} {:>10} strm {:>3}  {}".format(r.get("Start (ns)", "?"), r.get("Duration (ns)", "?"),
          r.get("Strm", "?"), r.get("Name", "?")[:50]))
print("    ... {} GPU operations in all; open {} in nsys-ui for the picture".format(len(rows), sys.argv[1]))
' "$prog.nsys-rep"
        else
            echo "    nsys could not write a report here ($(tail -n 1 "$TMP/$prog.log"));"
            echo "    the program's own event timeline shows the same: make plots -> figures/overlap_timeline.png"
        fi
    done
else
    echo "    nsys not found (Nsight Systems): skipping; make plots draws overlap's timeline from CUDA events"
fi

if have "$NCU"; then
    echo "== 2. overlap's kernel: compute-bound (SM % of peak high, DRAM % low)"
    "$NCU" -k regex:lcg_steps -c 1 --metrics sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum \
        ./overlap --n=2^24 --iters=1000 --reps=1 --only=serial 2>&1 |
        grep -E '^  [a-z_]+.*\(|sm__throughput|dram__throughput|gpu__time_duration|==ERROR==' | sed 's/^ */    /'

    echo "== 3. graphs: one graph launch profiled as a whole (--graph-profiling graph)"
    "$NCU" --graph-profiling graph --launch-count 1 --metrics gpu__time_duration.sum \
        ./graphs --n=100003 --kernels=100 --reps=1 2>&1 |
        grep -E '^  [A-Za-z_].*|gpu__time_duration|==ERROR==|==WARNING==' | grep -v '^  check' | head -n 8 | sed 's/^ */    /'
else
    echo "ncu not found (Nsight Compute, part of the CUDA toolkit): skipping sections 2-3"
fi

if have "$SAN"; then
    echo "== 4. compute-sanitizer (expect 0 errors / 0 hazards)"
    for run in "racecheck overlap --n=1000003 --chunks=7 --reps=1" "synccheck overlap --n=1000003 --chunks=7 --reps=1" \
               "memcheck dynamic_parallelism --n=100003" \
               "memcheck host_callbacks --n=100003 --streams=3"; do
        tool=${run%% *}
        cmd=${run#* }
        echo "-- $tool: $cmd"
        # shellcheck disable=SC2086
        "$SAN" --tool "$tool" ./$cmd 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^PASSED|^FAILED|^SKIPPED" | sed 's/^/    /'
    done
else
    echo "compute-sanitizer not found: skipping section 4"
fi
