#!/usr/bin/env bash
# The whole verification on a GPU machine, in one command:
#   1. build everything for the GPU in the machine,
#   2. make test (every program's CPU check at its test sizes, the exercises: each published one
#      `not yet`, each solution `solved`, their check output in exercises/; plus the host-side tests;
#      and every program again with CUDA_LAB_CORRUPT=1, where it must print FAILED and exit 1:
#      tests/test_corruption.py, summarised from $OUT/corruption.log),
#      The chapter notebooks run there too (tests/test_notebooks.py: every program cell PASSED or
#      SKIPPED, the figures drawn; their make check and lab cells say SKIPPED there); the executed
#      notebooks are kept in $OUT/notebooks/.
#   2b. 01_intro/nvrtc_saxpy built with -DCUDA_LAB_DRIVER_API_ROUTE: the route a CUDA 12.2-12.7 build
#      takes (common/cuda_compat.cuh), run on this newer toolkit,
#   3. compute-sanitizer memcheck (leak checking on), racecheck, initcheck and synccheck over every
#      program at its test arguments (tests/sanitize.py; exclusions only through the manifest),
#   4. the mutants (tests/mutants.py): every program's lesson put back wrong by a small source change
#      (a barrier deleted, a wait dropped); each mutant built and run, and each must end FAILED,
#   5. the ordering stress (tests/stress.py): every program under a preloaded library that puts a
#      random delay in front of every asynchronous operation, and 8 copies of each at once on the GPU;
#      each run must pass,
#   6. the older code paths and the learners' GPUs (tools/arch_check.sh): the tree built with PTX
#      only for compute_75 and for compute_80, each run under no profile and under the device
#      profiles of that architecture (CUDA_LAB_PROFILE, common/profiles.h); each program must pass
#      or skip with its reason,
#   7. the peak device memory of every program at its defaults (tools/peak_memory.py): the table
#      results/peak_memory/ is rewritten, and any default over a 4 GB card's budget fails,
#   8. the notebooks' exercise and lab cells (tests/test_notebooks.py with NOTEBOOK_LAB=1): each
#      notebook again, now with make check (each published exercise `not yet`, with its hint) and
#      make profile (ncu, compute-sanitizer: exit 0); executed notebooks in $OUT/notebooks_lab/,
#      with times.txt (a phase of its own, so that --only can give it a call of its own),
#   9. optionally (--full) every program once at its default size, output kept for the READMEs,
# then a short summary. Logs go to $OUT (or ./gpu_check_out).
# --only=PHASES runs the build and only the phases named (test, sanitize, mutants, stress, arch,
# memory, notebooks; comma list), for a machine whose calls are limited in time: e.g. --only=test,
# then --only=mutants,stress, then --only=arch,memory, then --only=notebooks.
# --sweep instead runs, after the build, the size sweep of tests/sweep.txt (tests/sweep.py): every
# program at size 1, small odd sizes, just past a block or tile boundary, thin 2D shapes and the
# largest sizes its --help allows (PASSED, or one "FAILED: out of memory" line and exit 1 where the
# GPU is too small), plus compute-sanitizer memcheck at the small sizes. Options:
#   tools/gpu_check.sh [--chapter=NN_name] [--full] [--no-sanitize] [--no-mutants] [--no-stress]
#                      [--no-arch] [--no-memory] [--no-notebooks] [--only=PHASES] [--stress-mode=shim,shared] [--jobs=N] [--sweep [--timeout=S]]
# (with --sweep, --chapter may list several: --chapter=01_intro,02_memory)
# OpenCV: pkg-config, or OPENCV_DIR=/where/it/is in the environment, or ./.devlibs (see
# tools/make_devlibs.sh) when neither has it.
set -u
cd "$(dirname "$0")/.."
chapter= full=0 sanitize=1 jobs=4 sweep=0 timeout=180 mutants=1 stress=1 tests=1 arch=1 memory=1 notebooks=1 stress_mode=shim,shared
for a in "$@"; do
    case $a in
        --chapter=*) chapter=${a#*=} ;;
        --full) full=1 ;;
        --no-sanitize) sanitize=0 ;;
        --no-mutants) mutants=0 ;;
        --no-stress) stress=0 ;;
        --no-arch) arch=0 ;;
        --no-memory) memory=0 ;;
        --no-notebooks) notebooks=0 ;;
        --stress-mode=*) stress_mode=${a#*=} ;;
        --only=*) only=",${a#*=},"; tests=0 sanitize=0 mutants=0 stress=0 arch=0 memory=0 notebooks=0
                  for ph in ${only//,/ }; do case $ph in test|sanitize|mutants|stress|arch|memory|notebooks) ;;
                      *) echo "$0: --only: unknown phase '$ph' (test, sanitize, mutants, stress, arch, memory, notebooks)" >&2; exit 2 ;; esac; done
                  [[ $only == *,test,* ]] && tests=1; [[ $only == *,sanitize,* ]] && sanitize=1
                  [[ $only == *,mutants,* ]] && mutants=1; [[ $only == *,stress,* ]] && stress=1
                  [[ $only == *,arch,* ]] && arch=1; [[ $only == *,memory,* ]] && memory=1
                  [[ $only == *,notebooks,* ]] && notebooks=1 ;;
        --jobs=*) jobs=${a#*=} ;;
        --sweep) sweep=1 ;;
        --timeout=*) timeout=${a#*=} ;;
        *) echo "usage: $0 [--chapter=NN_name] [--full] [--no-sanitize] [--no-mutants] [--no-stress] [--no-arch] [--no-memory] [--no-notebooks] [--only=test,sanitize,mutants,stress,arch,memory,notebooks] [--stress-mode=shim,shared] [--jobs=N] [--sweep [--timeout=S]]" >&2; exit 2 ;;
    esac
done
out=${OUT:-gpu_check_out}
mkdir -p "$out" && out=$(cd "$out" && pwd)
# OpenCV: OPENCV_DIR if given (make reads it from the environment), else pkg-config, else the
# folder packed by tools/make_devlibs.sh if it came along.
if [ -z "${OPENCV_DIR:-}" ] && ! pkg-config --exists opencv4 2>/dev/null && [ -d .devlibs/lib ]; then
    export OPENCV_DIR=$PWD/.devlibs
fi
if [ -n "${OPENCV_DIR:-}" ]; then
    export LD_LIBRARY_PATH=$OPENCV_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # programs built before OPENCV_DIR had no rpath
    echo "OpenCV: OPENCV_DIR=$OPENCV_DIR"
fi
echo "== GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
nvcc --version | tail -1

echo "== build"
target=${chapter//,/ }  # --sweep takes several chapters: --chapter=01_intro,02_memory
if ! make -j"$(nproc)" ${target:-all} tests/gpu_probe tests/unit/test_common >"$out/build.log" 2>&1; then
    tail -30 "$out/build.log"; echo "build: FAILED"; exit 1
fi
grep -iE "warning|notice" "$out/build.log" | head -5
echo "build: ok"

if [ $sweep = 1 ]; then
    echo "== size sweep (tests/sweep.txt; every run's output in $out/sweep.log, memcheck in $out/memcheck.log, one line per run as it ends in $out/progress.log)"
    python3 tests/sweep.py ${chapter:+--chapter=$chapter} --jobs="$jobs" --timeout="$timeout" --log-dir="$out" \
        $([ $sanitize = 1 ] || echo --no-memcheck) | tee "$out/sweep.txt"
    exit "${PIPESTATUS[0]}"
fi

test_rc=0 route_rc=0 test_summary="not run" corruption_summary="corruption: not run"
route_summary="driver-API route: not run"
if [ $tests = 1 ]; then
echo "== make test"
: >"$out/corruption.log"
NOTEBOOK_EXECUTED_DIR="$out/notebooks" EXERCISE_LOG_DIR="$out/exercises" CORRUPTION_LOG="$out/corruption.log" make test ${chapter:+CHAPTER=$chapter} \
    >"$out/test.log" 2>&1
test_rc=$?
grep -E "^(FAILED|ERROR) |^SKIPPED \[" "$out/test.log" | head -40
test_summary=$(grep -E "[0-9]+ (passed|failed)" "$out/test.log" | tail -1)
python3 tests/corruption.py --summary "$out/corruption.log" >"$out/corruption.txt"
grep -v "^corruption:" "$out/corruption.txt" | head -20  # the programs that did not fail as they must
corruption_summary=$(tail -1 "$out/corruption.txt")

# The pre-12.8 route of common/cuda_compat.cuh (driver-API module load and launch) is what a CUDA
# 12.2-12.7 build of nvrtc_saxpy runs; this toolkit is newer, so build that route on purpose and run it.
route_rc=0 route_summary="driver-API route: not run (chapter 01_intro not selected)"
if [ -z "$chapter" ] || [[ ",$chapter," == *",01_intro,"* ]]; then
    args=$(awk -F'|' '$1 ~ /^01_intro\/nvrtc_saxpy /{print $2}' tests/manifest.txt)
    if (cd 01_intro && nvcc -std=c++17 -O3 -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../common \
            -DCUDA_LAB_DRIVER_API_ROUTE -o "$out/nvrtc_saxpy_driver_route" nvrtc_saxpy.cu -lnvrtc) >"$out/route.log" 2>&1 &&
        (cd 01_intro && "$out/nvrtc_saxpy_driver_route" $args) >>"$out/route.log" 2>&1; then
        route_summary="driver-API route (nvrtc_saxpy -DCUDA_LAB_DRIVER_API_ROUTE $args): $(tail -1 "$out/route.log")"
    else
        route_rc=1 route_summary="driver-API route: FAILED (see $out/route.log): $(tail -1 "$out/route.log")"
    fi
    rm -f "$out/nvrtc_saxpy_driver_route"
fi
fi  # tests

san_rc=0 san_summary="sanitizer: not run"
if [ $sanitize = 1 ]; then
    echo "== compute-sanitizer"
    python3 tests/sanitize.py ${chapter:+--chapter=$chapter} --jobs="$jobs" --log="$out/sanitizer.log" | tee "$out/sanitizer.txt"
    san_rc=${PIPESTATUS[0]}
    san_summary=$(tail -1 "$out/sanitizer.txt")
fi

mut_rc=0 mut_summary="mutants: not run"
if [ $mutants = 1 ]; then
    echo "== mutants (each must end FAILED; every run's output in $out/mutants.log)"
    : >"$out/mutants.log"
    python3 tests/mutants.py ${chapter:+--chapter=$chapter} --jobs="$(nproc)" --log="$out/mutants.log" | tee "$out/mutants.txt"
    mut_rc=${PIPESTATUS[0]}
    mut_summary=$(tail -1 "$out/mutants.txt")
fi

stress_rc=0 stress_summary="stress: not run"
if [ $stress = 1 ]; then
    echo "== ordering stress (logs: $out/stress_shim.log, $out/stress_shared.log)"
    python3 tests/stress.py ${chapter:+--chapter=$chapter} --mode="$stress_mode" --log-dir="$out" | tee "$out/stress.txt"
    stress_rc=${PIPESTATUS[0]}
    stress_summary=$(grep "^stress" "$out/stress.txt")
fi

arch_rc=0 arch_summary="arch/profiles: not run"
if [ $arch = 1 ] && [ -z "$chapter" ]; then
    echo "== older code paths and device profiles (tools/arch_check.sh; logs in $out/arch/)"
    tools/arch_check.sh "$out/arch" --jobs="$jobs" | tee "$out/arch.txt"
    arch_rc=${PIPESTATUS[0]}
    arch_summary="arch/profiles: $(grep -c "^profile .* 0 failed" "$out/arch.txt") of $(grep -c "^profile " "$out/arch.txt") runs with 0 failed (exit $arch_rc)"
fi

mem_rc=0 mem_summary="peak memory: not run"
if [ $memory = 1 ] && [ -z "$chapter" ]; then
    echo "== peak device memory at the defaults (tools/peak_memory.py; table in results/peak_memory/)"
    python3 tools/peak_memory.py --jobs=16 --timeout=100 | tee "$out/peak_memory.txt"
    mem_rc=${PIPESTATUS[0]}
    mem_summary=$(grep "^peak memory:" "$out/peak_memory.txt" | tail -1)
fi

nb_rc=0 nb_summary="notebook lab cells: not run"
if [ $notebooks = 1 ]; then
    echo "== the notebooks' exercise and lab cells (NOTEBOOK_LAB=1; log $out/notebooks_lab.log, notebooks in $out/notebooks_lab/)"
    rm -rf "$out/notebooks_lab"
    NOTEBOOK_LAB=1 NOTEBOOK_EXECUTED_DIR="$out/notebooks_lab" tools/run_tests.sh -k test_notebook_runs \
        ${chapter:+--chapter=$chapter} >"$out/notebooks_lab.log" 2>&1
    nb_rc=$?
    # every notebook must have run here: a phase whose tests all skipped (no notebook packages, no
    # GPU seen) proves nothing and fails
    if ! grep -qE "[0-9]+ passed" "$out/notebooks_lab.log" || grep -qE "[0-9]+ skipped" "$out/notebooks_lab.log"; then
        [ $nb_rc = 0 ] && nb_rc=1
    fi
    grep -E "^(FAILED|ERROR) |^SKIPPED \[" "$out/notebooks_lab.log" | head -20
    cat "$out/notebooks_lab/times.txt" 2>/dev/null
    nb_summary="notebook lab cells: $(grep -E "[0-9]+ (passed|failed)" "$out/notebooks_lab.log" | tail -1) (exit $nb_rc)"
fi

if [ $full = 1 ]; then
    echo "== full-size runs (output in $out/full_runs.txt)"
    : >"$out/full_runs.txt"
    for d in ${chapter:-0[0-9]_*}; do
        for p in $(make -s --no-print-directory -C "$d" list); do
            [ -x "$d/$p" ] || continue
            echo "===== $d/$p" >>"$out/full_runs.txt"
            (cd "$d" && timeout 300 "./$p" >>"$out/full_runs.txt" 2>&1; echo "exit $?" >>"$out/full_runs.txt")
            echo "$d/$p: $(tail -2 "$out/full_runs.txt" | head -1)"
        done
    done
fi

echo "== summary"
echo "make test: ${test_summary:-no summary line (see test.log)} (exit $test_rc)"
echo "$corruption_summary"
echo "$route_summary"
echo "$san_summary"
echo "$mut_summary"
echo "$stress_summary"
echo "$arch_summary"
echo "${mem_summary:-peak memory: no summary line}"
echo "$nb_summary"
[ $test_rc = 0 ] && [ $san_rc = 0 ] && [ $route_rc = 0 ] && [ $mut_rc = 0 ] && [ $stress_rc = 0 ] && [ $arch_rc = 0 ] && [ $mem_rc = 0 ] && [ $nb_rc = 0 ]
