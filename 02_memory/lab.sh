#!/usr/bin/env bash
# lab.sh - the 02_memory labs from README.md "Lab", with compact output (`make profile` runs it).
#   1. ncu: sectors per request for coalescing (offset 0 vs 1, stride 1..32) and aos_soa
#   2. ptxas -v and cuobjdump -sass: spills and LDL/STL in registers_local; ncu local-memory sectors
#      (make registers_local.regs / registers_local.sass: common.mk's listing rules)
#   3. cuobjdump -sass: which global load instruction each readonly_cache kernel uses
#   4. ncu: L2 hit rate of l2_persistence per configuration (caches not flushed between replays)
#   5. compute-sanitizer initcheck on pitch_2d_3d: the padding of pitched rows is never read
#   6. cuobjdump -sass: the pointer chase of latency, each load's address the last load's result
#   7. cuobjdump -sass: the loads and stores alignment's four struct layouts compile to; ncu: the DRAM
#      bytes of its three Float3 kernels (partial and whole 16-byte stores)
# Needs the programs built (make), ncu / cuobjdump / compute-sanitizer on PATH (steps whose
# tool is missing are skipped with a note). NCU=... overrides the ncu binary. ncu may need
# permission to read the GPU counters (ERR_NVGPUCTRPERM: run as root or see the ncu docs).
# The listings are built for one architecture: ARCH=sm_XY if set, else this GPU's (as make does).
set -u
cd "$(dirname "$0")"
NCU=${NCU:-ncu}
have() { command -v "$1" >/dev/null 2>&1; }
# A step whose tool is missing prints its title, then this note in place of its output.
missing() { echo "    $1 not found: skipped${2:+ ($2)}"; }
# Mangled kernel names -> plain names without the parameter list.
demangle() { if have cu++filt; then cu++filt; else cat; fi | sed -E 's/\([^)]*\)//g'; }

# ncu_rows SPEC NCU-ARGS... : runs ncu with --csv --page raw, prints one line per profiled launch.
# SPEC is "index=label;index=label;..." (index = order among the profiled launches) or "*" (all,
# labelled with the kernel name). Metric names are shortened; the nvprof names are in README.md.
ncu_rows() {
    local spec=$1; shift
    local metrics="" prev=""
    for a in "$@"; do [ "$prev" = "--metrics" ] && metrics=$a; prev=$a; done
    "$NCU" --csv --page raw "$@" 2>&1 | python3 -c '
import csv, sys
spec = sys.argv[1]
labels = None if spec == "*" else dict(p.split("=", 1) for p in spec.split(";"))
short = {
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio": "ld sectors/request",
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio": "st sectors/request",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct": "ld bytes used %",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum": "local ld sectors",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum": "local st sectors",
    "lts__t_sector_hit_rate.pct": "L2 hit %",
    "dram__bytes_read.sum": "DRAM read",
    "dram__bytes_write.sum": "DRAM write",
}
lines = sys.stdin.read().splitlines()
rows = list(csv.reader(l for l in lines if l.startswith("\"")))
if not rows:
    errors = [l for l in lines if l.startswith("==ERROR==")][:3]
    print("\n".join("    " + l for l in errors) or "    (ncu printed no results)")
    sys.exit(0)
head, data = rows[0], [r for r in rows[1:] if r and r[0].strip()]  # the units row has no ID
name_col = head.index("Kernel Name") if "Kernel Name" in head else None
asked = {m for a in sys.argv[2:] for m in a.split(",")}  # the --metrics list: ncu also adds device__attribute_* columns
metric_cols = [i for i, h in enumerate(head) if h in asked]
for k, r in enumerate(data):
    label = r[name_col].split("(")[0] if labels is None else labels.get(str(k))
    if label is None:
        continue
    vals = "  ".join(f"{short.get(head[i], head[i])} {r[i]}" for i in metric_cols)
    print(f"    {label:<28} {vals}")
' "$spec" "$metrics"
}

SECTORS=l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio,l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio,smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct

echo "== 1. coalescing: sectors per request (ideal for 4-byte words: 4)"
if have "$NCU"; then
    ncu_rows "0=offset 0;1=offset 1" -k regex:copy_offset -c 2 --metrics "$SECTORS" ./coalescing --n=2^22 --reps=1
    ncu_rows "0=stride 1;1=stride 2;3=stride 4;7=stride 8;31=stride 32" -k regex:copy_stride -c 32 \
        --metrics "$SECTORS" ./coalescing --n=2^22 --reps=1
else
    missing "$NCU" "install Nsight Compute"
fi
echo "== 1b. aos_soa: sectors per request (the book's profiler: ideal 4, AOS 32)"
if have "$NCU"; then
    ncu_rows "0=AOS complicatedCalculation;1=SOA complicatedCalculation" -k regex:complicatedCalculation -c 2 \
        --metrics "$SECTORS,dram__bytes_read.sum" ./aos_soa --n=2^20 --reps=1
else
    missing "$NCU"
fi

echo "== 2. registers_local: ptxas -v (spill stores/loads, registers per kernel)"
make -s --no-print-directory registers_local.regs &&
    grep -E "Compiling entry|bytes spill|Used [0-9]+ registers" registers_local.regs | sed -E "s/ptxas info +: //; s/^ +//; s/Compiling entry function '([^']*)'.*/\1:/" |
    demangle | paste - - - | sed 's/^/    /' 
echo "   LDL/STL (local memory) instructions per kernel in the SASS:"
if have "${CUOBJDUMP:-cuobjdump}"; then
    make -s --no-print-directory registers_local.sass &&
    awk '/Function :/ {f = $3; n[f] += 0} /LDL|STL/ {n[f]++}
        END {for (f in n) printf "    %s %d\n", f, n[f]}' registers_local.sass | demangle | sort
else
    missing cuobjdump
fi
echo "   local-memory sectors moved (ncu; nvprof: local_load_transactions / local_store_transactions):"
if have "$NCU"; then
    ncu_rows "*" -k "regex:state_|window_" -c 4 \
        --metrics l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum \
        ./registers_local --n=2^20 --reps=1
else
    missing "$NCU"
fi

echo "== 3. readonly_cache: global loads per kernel (LDG.E.CONSTANT = read-only / non-coherent path)"
if have "${CUOBJDUMP:-cuobjdump}"; then
    make -s --no-print-directory readonly_cache.sass &&
    awk '/Function :/ {f = $3; c[f] += 0; p[f] += 0}
        /LDG/ {if ($0 ~ /CONSTANT/) c[f]++; else p[f]++}
        END {for (f in c) printf "    %s  LDG %d  LDG.CONSTANT %d\n", f, p[f], c[f]}' readonly_cache.sass | demangle | sort
else
    missing cuobjdump
fi

echo "== 4. l2_persistence: L2 hit rate per configuration (ncu --cache-control none)"
if have "$NCU"; then
    # Launch order in l2_persistence: one checking launch per configuration, all before any timing.
    ncu_rows "0=L2 as found, hot fits;1=set-aside only, hot fits;2=window 0.25, hot fits;3=window 0.50, hot fits;4=window 0.75, hot fits;5=window 1.00, hot fits;6=L2 as found, hot 2x;7=set-aside only, hot 2x;8=window 1.00, hot 2x;9=window tuned, hot 2x" \
        -k regex:hot_stream -c 10 --cache-control none --metrics lts__t_sector_hit_rate.pct ./l2_persistence --reps=1
else
    missing "$NCU"
fi

echo "== 5. pitch_2d_3d under initcheck (padding bytes are never written, and never read)"
if have compute-sanitizer; then
    compute-sanitizer --tool initcheck ./pitch_2d_3d --width=333 --height=97 --depth=5 --time-mb=4 --reps=2 2>&1 |
        grep -E "ERROR SUMMARY|PASSED|FAILED" | sed 's/^/    /'
else
    missing compute-sanitizer
fi

echo "== 6. latency: the first three loads of each chase (the address register is the last load's result)"
if have "${CUOBJDUMP:-cuobjdump}"; then
    make -s --no-print-directory latency.sass &&
    awk '/Function :/ {f = $3; k = 0}
        f ~ /chase_(global|shared|constant|texture)/ && /(LDG|LDS|ULDC|TLD)[. ]/ && !/c\[0x0\]/ &&
        !(f ~ /chase_shared/ && /LDG/) && k < 3 {
            sub(/^[^A-Z]*/, ""); sub(/ *;.*/, ""); line[f] = line[f] (k ? " ; " : "") $0; k++}
        END {for (f in line) printf "    %s: %s\n", f, line[f]}' latency.sass | demangle | sort
else
    missing cuobjdump
fi

echo "== 7. alignment: global loads and stores per kernel (G 5.3.2: one instruction needs size and alignment 8 / 16)"
if have "${CUOBJDUMP:-cuobjdump}"; then
    make -s --no-print-directory alignment.sass &&
    awk '/Function :/ {f = $3} /(LDG|STG)\./ {for (i = 1; i <= NF; i++) if ($i ~ /^(LDG|STG)\./) n[f " " $i]++}
        END {for (k in n) printf "    %s %d\n", k, n[k]}' alignment.sass | demangle | sort
else
    missing cuobjdump
fi
echo "== 7b. alignment: DRAM bytes of the three Float3 kernels (the 8+4-byte store leaves every output sector partly written)"
if have "$NCU"; then
    # The checking launches come first, in the table's order: Float3, Float3A16 8+4-byte, 16-byte store.
    ncu_rows "0=Float3 (3 x 4-byte store);1=Float3A16 8+4-byte store;2=Float3A16 16-byte store" -k regex:map3 -c 3 \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum ./alignment --only=Float3 --reps=1
else
    missing "$NCU"
fi
