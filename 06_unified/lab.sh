#!/usr/bin/env bash
# lab.sh - the 06_unified lab (`make profile`). Compact output: only the lines that matter.
#   1. ncu: DRAM bytes and duration of add() - naive (CPU-initialized, page faults) vs prefetched
#      vs the cudaMalloc baseline (um_page_faults)
#   2. nsys: the unified-memory view - GPU page-fault groups, CPU page faults and the migrations
#      they cause, for the naive version (a desktop GPU; where nsys cannot write a report, says so)
#   3. compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over the whole chapter at the
#      test sizes of tests/manifest.txt, through tests/sanitize.py
# Needs ncu / nsys / compute-sanitizer on PATH (a step whose tool is missing is skipped with a
# note) and, for ncu, permission to read the GPU counters (root, or the driver's
# NVreg_RestrictProfilingToAdminUsers=0). NCU=... / NSYS=... override the binaries.
set -u
cd "$(dirname "$0")"
NCU=${NCU:-ncu}
NSYS=${NSYS:-nsys}
have() { command -v "$1" >/dev/null 2>&1; }

if have "$NCU"; then
    echo "== 1. um_page_faults: add() under ncu (nvprof: dram_read_bytes, dram_write_bytes, gpu time)"
    echo "   launches: 1 = CPU init (faults inside the kernel), 2 = CPU init + prefetch, 3 = cudaMalloc"
    # Application replay: every metric pass re-runs the program, so each pass sees the pages where
    # the program left them (kernel replay would replay the naive kernel on already-migrated pages).
    "$NCU" --replay-mode application --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        -k regex:'^add' --launch-skip 1 -c 3 ./um_page_faults --n=2^24 --reps=1 --only='^[14] ' 2>&1 |
        grep -E '^  add|dram__bytes|gpu__time_duration|==ERROR==' | sed 's/^ */    /'
else
    echo "== 1. ncu not found: skipping the DRAM-bytes lab (install Nsight Compute)"
fi

if have "$NSYS"; then
    echo "== 2. nsys: unified-memory page faults and migrations of the naive version (2^22 floats)"
    tmp=$(mktemp -d)
    if "$NSYS" profile --trace=cuda --cuda-um-cpu-page-faults=true --cuda-um-gpu-page-faults=true \
           -o "$tmp/um" ./um_page_faults --n=2^22 --reps=1 --only='^1 ' >"$tmp/log" 2>&1 &&
       [ -f "$tmp/um.nsys-rep" ]; then
        # Migrations show up as "[CUDA memcpy Unified Host-to-Device]" (and Device-to-Host) rows.
        "$NSYS" stats --report cuda_gpu_mem_size_sum,cuda_gpu_mem_time_sum --format table "$tmp/um.nsys-rep" 2>&1 |
            grep -E 'Unified|Operation' | sed 's/^/    /'
        # Page-fault summaries (reports present in recent nsys versions; absent ones print nothing).
        for r in um_cpu_page_faults_sum um_sum um_total_sum; do
            "$NSYS" stats --report $r --format table "$tmp/um.nsys-rep" 2>/dev/null | grep -vE '^\s*$|Processing|Generating' |
                head -8 | sed 's/^/    /'
        done
        echo "   timeline: nsys-ui $tmp/um.nsys-rep (rows 'CUDA HW > Unified memory': GPU page-fault groups)"
    else
        echo "   nsys could not write a report on this machine:"
        tail -3 "$tmp/log" | sed 's/^/    /'
    fi
else
    echo "== 2. nsys not found: skipping the unified-memory timeline (install Nsight Systems)"
fi

if have compute-sanitizer; then
    echo "== 3. compute-sanitizer over the chapter (test sizes; manifest exclusions print their reason)"
    python3 ../tests/sanitize.py --chapter=06_unified --jobs=2
else
    echo "== 3. compute-sanitizer not found: skipping"
fi
