#!/usr/bin/env bash
# lab.sh - the 01_intro lab (`make profile`). Compact output: only the lines that matter.
#   1. nvcc -arch / -gencode and cuobjdump: which SASS and PTX a fat binary carries (make arch-lab),
#      and the SASS of vector_add (make vector_add.sass: cuobjdump -sass)
#   1c. nvcc -ptx: a literal without the f suffix makes a float kernel compute in double (G 5.4.1)
#   1d. nvcc -ptx / -Xptxas -v: sinf's slow path keeps a 28-byte array in local memory in the PTX
#   2. nvcc -Xptxas -v: registers, spills and stack of the occupancy kernels (make occupancy.regs)
#   3. ncu: vector_add against the speed of light, and its DRAM traffic
#   4. ncu: warp_divergence - active threads per warp instruction, divergent branch targets
#   5. ncu: occupancy - theoretical vs achieved occupancy, register limit
#   6. compute-sanitizer memcheck finds vector_add's planted off-by-one (-DPLANT_BUG)
# Needs nvcc, cuobjdump, ncu and compute-sanitizer (CUDA toolkit); ncu needs permission to read GPU
# counters (root, or the driver's NVreg_RestrictProfilingToAdminUsers=0). The .sass / .regs listings
# come from common.mk's rules (one architecture: ARCH=sm_XY if set, else this GPU); every extra
# executable is built in a temporary directory that is removed at the end.
set -u
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
NCU=${NCU:-ncu}
SAN=${SAN:-compute-sanitizer}
OBJDUMP=${CUOBJDUMP:-cuobjdump}
ARCH=${ARCH_FLAG:--arch=native}
FLAGS="-std=c++17 -O3 -lineinfo -I../common"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ncu's report, reduced to the kernel header lines and the metric lines.
ncu_q() { "$NCU" "$@" 2>&1 | grep -E '^  [A-Za-z_].*\)x\(|^ +(dram|gpu|sm|smsp|launch)__|^ +(DRAM|Memory|Compute \(SM\)) Throughput|^ +Duration|==ERROR==|==WARNING=='; }

echo "== 1. nvcc -arch / -gencode and cuobjdump --list-elf / --list-ptx: make arch-lab (compilation.cu variants)"
make --no-print-directory arch-lab
echo "== 1b. cuobjdump -sass: the global memory instructions of vector_add (this GPU's SASS): 2 loads, 1 store"
if command -v "$OBJDUMP" >/dev/null 2>&1; then
  make -s --no-print-directory CUOBJDUMP="$OBJDUMP" vector_add.sass &&
    awk '/Function : .*vector_add_vec4/{f=0} /Function : .*vector_add[^_]/{f=1} f' vector_add.sass |
    grep -oE '(LDG|STG)[.A-Z0-9]*|Function : .*' | sort | uniq -c
else
  echo "cuobjdump not found: skipping section 1b"
fi

echo "== 1c. a literal without f (G 5.4.1): PTX of arith_instructions' poly kernels (x * 0.999f + 0.001f vs x * 0.999 + 0.001)"
$NVCC $FLAGS $ARCH -ptx -o "$tmp/arith.ptx" arith_instructions.cu &&
  awk '/\.entry/{f=$3} /cvt\.f64\.f32|fma\.rn\.f64|cvt\.rn\.f32\.f64|fma\.rn\.f32/ && f ~ /poly_/ {print f, $1}' "$tmp/arith.ptx" |
  sort | uniq -c
echo "== 1d. sinf's slow path (G 5.4.1: 28 bytes of local memory): the PTX's local array, then what ptxas keeps of it"
$NVCC $FLAGS $ARCH -DARITH_BUILD=lab -ptx -o "$tmp/flags.ptx" arith_flags.cu &&
  awk '/\.entry/{f=$3} /\.local .*local_depot/{print "   " f, $NF}' "$tmp/flags.ptx"
$NVCC $FLAGS $ARCH -DARITH_BUILD=lab -Xptxas -v -c -o /dev/null arith_flags.cu 2>&1 |
  grep -A2 -E "Compiling entry function '_ZN9arith_lab4evalILi[012]EE" | grep -E "Compiling|stack" | sed -E 's/ptxas info *: //'

echo "== 2. occupancy.cu under nvcc -Xptxas -v (registers / spills per kernel; the host arch)"
make -s --no-print-directory occupancy.regs &&
  grep -E "Compiling entry function|registers|spill" occupancy.regs | sed -E 's/ptxas info *: //' |
  { command -v c++filt >/dev/null && c++filt || cat; }

if command -v "$NCU" >/dev/null 2>&1; then
  echo "== 3. vector_add, n = 2^26: SpeedOfLight section, then DRAM bytes and throughput"
  ncu_q --section SpeedOfLight -k regex:vector_add -c 1 ./vector_add --n=2^26 --reps=1
  ncu_q --metrics dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum \
        -k regex:vector_add -c 2 ./vector_add --n=2^26 --reps=1

  echo "== 4. warp_divergence: threads per warp instruction (32 = no divergence), divergent branch targets"
  ncu_q --metrics smsp__thread_inst_executed_per_inst_executed.ratio,smsp__sass_average_branch_targets_threads_uniform.pct,smsp__sass_branch_targets_threads_divergent.sum,gpu__time_duration.sum \
        -k regex:branch_on -c 2 ./warp_divergence --reps=1

  echo "== 5. occupancy: theoretical vs achieved occupancy of mix_free / mix_bounded, and why"
  ncu_q --metrics launch__registers_per_thread,launch__occupancy_limit_registers,sm__maximum_warps_per_active_cycle_pct,sm__warps_active.avg.pct_of_peak_sustained_active \
        -k regex:mix_ -c 2 ./occupancy --reps=1
else
  echo "ncu not found (Nsight Compute, part of the CUDA toolkit): skipping sections 3-5"
fi

if command -v "$SAN" >/dev/null 2>&1; then
  echo "== 6. compute-sanitizer memcheck on vector_add built with -DPLANT_BUG (i <= n instead of i < n)"
  $NVCC $FLAGS $ARCH -DPLANT_BUG -o "$tmp/vector_add_bug" vector_add.cu &&
    "$SAN" --tool memcheck "$tmp/vector_add_bug" --n=1000003 --reps=1 2>&1 |
    grep -E "Invalid __global__|^=+ +at |by thread|out of bounds|ERROR SUMMARY|^(PASSED|FAILED)" | head -14
else
  echo "compute-sanitizer not found: skipping section 6"
fi
