#!/usr/bin/env bash
# lab.sh - the 03_shared profiling lab (`make profile`). Compact output: only the lines that matter.
#   1. ncu: shared-memory bank conflicts of transpose shared [32][32] vs padded [32][33],
#      and global sectors per request of the two naive transposes
#   2. ncu: bank conflicts per stride of bank_conflicts (wavefronts / instruction = conflict degree)
#   3. ncu: achieved vs theoretical occupancy of smem_carveout for three carveouts
#   4. nvcc -Xptxas -v: registers, spills and shared memory of every matmul_tiled kernel
#      (make matmul_tiled.regs: common.mk's listing rule, ARCH=sm_XY if set, else this GPU)
#   5. compute-sanitizer racecheck/synccheck on reduction (one __syncthreads per tree step is enough)
#   6. ncu: the SGEMM progression step by step (FFMA share, shared wavefronts, global sectors, stalls)
#   7. nvcc -Xptxas -v: registers and spills of every sgemm_steps kernel (expect 0 spill bytes;
#      make sgemm_steps.regs, as in 4)
# Needs ncu and compute-sanitizer (CUDA toolkit) and permission to read GPU counters
# (root, or the driver's NVreg_RestrictProfilingToAdminUsers=0).
set -u
cd "$(dirname "$0")"
NCU=${NCU:-ncu}
SAN=${SAN:-compute-sanitizer}

# ncu's default report, reduced to the kernel header line and the metric lines.
ncu_q() { "$NCU" "$@" 2>&1 | grep -E '^  [A-Za-z_].*\)x\(|^ +(l1tex|sm|smsp|launch)__|==ERROR==|==WARNING=='; }
BANK=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
WAVES=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
INSTS=smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum

if command -v "$NCU" >/dev/null 2>&1; then
  echo "== 1. transpose 4096 x 4096: bank conflicts, shared [32][32] vs padded [32][33]"
  ncu_q --metrics $BANK,$WAVES -k regex:'matrix_transpose_(shared|padded)' -c 2 \
        ./transpose --rows=4096 --cols=4096 --reps=1
  echo "== 1b. global sectors per request: naive (strided store) vs write-coalesced (strided load)"
  ncu_q --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum \
        -k regex:'matrix_transpose_(naive|write_coalesced)' -c 2 ./transpose --rows=4096 --cols=4096 --reps=1

  echo "== 2. bank_conflicts: conflicts and wavefronts per shared load instruction, by stride"
  for s in 1 2 4 8 16 32 33; do
    echo "-- stride $s (predicted degree gcd($s,32))"
    ncu_q --metrics $BANK,$WAVES,$INSTS -k regex:bank_conflict_strided -c 1 ./bank_conflicts --stride=$s --iters=256 --reps=1
  done

  echo "== 3. smem_carveout: achieved occupancy (sm__warps_active) vs theoretical"
  for p in 0 50 100; do
    echo "-- carveout $p %"
    ncu_q --metrics sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct,launch__occupancy_limit_shared_mem \
          -k regex:mirror_add_tile -c 1 ./smem_carveout --carveout=$p --reps=1
  done
else
  echo "ncu not found (Nsight Compute, part of the CUDA toolkit): skipping sections 1-3"
fi

echo "== 4. matmul_tiled: nvcc -Xptxas -v (registers / spills / shared memory per kernel)"
make -s --no-print-directory matmul_tiled.regs &&
  grep -E "Compiling entry function|registers|spill" matmul_tiled.regs | sed -E 's/ptxas info *: //' |
  { command -v c++filt >/dev/null && c++filt || cat; }

if command -v "$SAN" >/dev/null 2>&1; then
  echo "== 5. reduction under racecheck and synccheck (expect 0 hazards / 0 errors)"
  for tool in racecheck synccheck; do
    echo "-- $tool"
    "$SAN" --tool $tool ./reduction --n=100003 --reps=1 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|PASSED|FAILED"
  done
else
  echo "compute-sanitizer not found: skipping section 5"
fi

SGEMM_METRICS=smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__inst_executed_op_shared_ld.sum
SGEMM_METRICS+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
SGEMM_METRICS+=,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
SGEMM_METRICS+=,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
SGEMM_METRICS+=,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
if command -v "$NCU" >/dev/null 2>&1; then
  echo "== 6. sgemm_steps 2048^3: one ncu report per step (its checking launch)"
  for s in 1 2 3 4 5 6 7 8; do
    echo "-- step $s"
    # step 8: its fast path with the interleaved lanes ("A by 4") and without them ("plain lanes")
    only=(); c=1; [ $s = 8 ] && only=(--only='A by 4|plain lanes') && c=2
    ncu_q -k regex:'^sgemm_' -c $c --metrics $SGEMM_METRICS ./sgemm_steps --kernel=$s --m=2048 --n=2048 --k=2048 --reps=1 "${only[@]}"
  done
else
  echo "ncu not found: skipping section 6"
fi

echo "== 7. sgemm_steps: nvcc -Xptxas -v (registers / spills / shared memory per kernel)"
make -s --no-print-directory sgemm_steps.regs &&
  grep -E "Compiling entry function|registers|spill" sgemm_steps.regs | sed -E 's/ptxas info *: //' |
  { command -v c++filt >/dev/null && c++filt || cat; }
