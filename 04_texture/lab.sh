#!/usr/bin/env bash
# lab.sh - the 04_texture lab (`make profile`). Compact output: only the lines that matter.
#   1. image_scaling: the input / point / bilinear image triple for the README (figures/)
#   2. ncu: sobel_texture's three versions - L1/TEX hit rate, texture vs global sectors, DRAM bytes
#   3. ncu: image_scaling - hardware bilinear (texture) vs bilinear by hand (global loads)
#   4. ncu: reverse_array and negate_array - texture path vs global path on a streaming access
#   5. cuobjdump -sass: the texture instructions the fetch functions compile to (TEX, TLD, ...)
#   6. nvcc -Xptxas -v: registers of the texture vs global kernels
#   (5 and 6 use common.mk's listing rules, make PROGRAM.sass / PROGRAM.regs: ARCH=sm_XY if set,
#   else this GPU's architecture)
#   7. compute-sanitizer memcheck / initcheck on the in-place negation and the rotation
# Needs ncu and compute-sanitizer (CUDA toolkit) and permission to read GPU counters
# (root, or the driver's NVreg_RestrictProfilingToAdminUsers=0).
set -u
cd "$(dirname "$0")"
NCU=${NCU:-ncu}
SAN=${SAN:-compute-sanitizer}

# ncu's default report, reduced to the kernel header line and the metric lines.
ncu_q() { "$NCU" "$@" 2>&1 | grep -E '^  [A-Za-z_].*\)x\(|^ +(l1tex|lts|dram|gpu|sm|smsp)__|==ERROR==|==WARNING=='; }
# L1/TEX hit rate (all traffic; nvprof tex_cache_hit_rate / global_hit_rate), sectors requested by
# texture fetches and by global loads, L2 hit rate, DRAM bytes read, L1/TEX throughput, kernel time.
TEXM=l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_tex_mem_texture.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
MEMM=lts__t_sector_hit_rate.pct,dram__bytes_read.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum

echo "== 1. image_scaling: figures/scaling_{input,point,bilinear}.png"
make --no-print-directory plots | grep -E "wrote|check|PASSED|FAILED|SKIPPED"

if command -v "$NCU" >/dev/null 2>&1; then
  echo "== 2. sobel_texture 4096 x 4096: global vs texture vs shared tile"
  ncu_q --metrics $TEXM,$MEMM -k regex:'sobel_(global|texture|shared)_kernel' -c 3 \
        ./sobel_texture --width=4096 --height=4096 --reps=1
  # Texture-only hit rate (not exposed on every GPU/ncu version: an error here is harmless).
  ncu_q --metrics l1tex__t_sector_pipe_tex_mem_texture_op_tex_hit_rate.pct -k regex:sobel_texture_kernel -c 1 \
        ./sobel_texture --width=4096 --height=4096 --reps=1

  echo "== 3. image_scaling 2048 x 1536 -> x2: point, hardware bilinear, bilinear by hand"
  ncu_q --metrics $TEXM,$MEMM -k regex:'scale_' -c 3 ./image_scaling --width=2048 --height=1536 --ratio=2 --reps=1

  echo "== 4. streaming access (2^26 elements): texture path vs global path"
  ncu_q --metrics $TEXM,$MEMM -k regex:'reverseArray' -c 2 ./reverse_array --n=2^26 --reps=1
  ncu_q --metrics $TEXM,$MEMM -k regex:'negate_' -c 2 ./negate_array --n=2^26 --reps=1
else
  echo "ncu not found (Nsight Compute, part of the CUDA toolkit): skipping sections 2-4"
fi

echo "== 5. cuobjdump -sass: texture instructions per program (tex1D/tex2D -> TEX, tex1Dfetch -> TLD)"
if command -v "${CUOBJDUMP:-cuobjdump}" >/dev/null 2>&1; then
  for p in read_texels negate_array reverse_array texture_rotate image_scaling addressing_modes read_modes; do
    [ -x "$p" ] || continue
    printf '%-18s ' "$p"
    make -s --no-print-directory "$p.sass" 2>/dev/null && grep -oE '\b(TEX|TLD|TLD4|TMML|TXD|TXQ)(\.[A-Z0-9_]+)*' "$p.sass" | sort | uniq -c | tr -s ' \n' ' '
    echo
  done
else
  echo "cuobjdump not found: skipping section 5"
fi

echo "== 6. nvcc -Xptxas -v: registers per kernel (texture vs global versions)"
for f in reverse_array negate_array; do
  make -s --no-print-directory $f.regs &&
    grep -E "Compiling entry function|registers|spill" $f.regs | sed -E 's/ptxas info *: //' |
    { command -v c++filt >/dev/null && c++filt || cat; }
done

if command -v "$SAN" >/dev/null 2>&1; then
  echo "== 7. compute-sanitizer (expect 0 errors)"
  for tool in memcheck initcheck; do
    echo "-- $tool"
    "$SAN" --tool $tool ./negate_array --n=100003 --reps=1 2>&1 | grep -E "ERROR SUMMARY|PASSED|FAILED"
    "$SAN" --tool $tool ./texture_rotate --width=333 --height=211 --reps=1 2>&1 | grep -E "ERROR SUMMARY|PASSED|FAILED"
  done
else
  echo "compute-sanitizer not found: skipping section 7"
fi
