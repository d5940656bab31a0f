#!/usr/bin/env bash
# The older code paths and the learners' GPUs, on the GPU at hand (issue 32; tools/gpu_check.sh's
# `arch` phase). The tree is copied twice and built with PTX only for compute_75 and for compute_80:
# the driver JIT-compiles that PTX for this GPU, so the kernels run the code that a Turing / Ampere
# GPU would (__CUDA_ARCH__ = 750 / 800: the plain-load fallbacks of cp.async, the __CUDA_ARCH__
# alternatives, the skips of features compiled out). Each build runs every program of
# tests/manifest.txt at its test arguments (tools/profile_run.py) under no profile and under the
# device profiles (common/profiles.h) of that architecture:
#   compute_75: none, t4, gtx1650
#   compute_80: none, a100, rtx3060-laptop-wsl, rtx4090
# The 8.6 and 8.9 profiles use the compute_80 build: an sm_86 / sm_89 build holds SASS that a 9.0
# GPU cannot run, and every __CUDA_ARCH__ branch of this tree switches at 7.0, 8.0 or 9.0.
#   tools/arch_check.sh OUTDIR [--jobs=N] [--parts="75 80"]
# Writes OUTDIR/build-<arch>.log, run-<arch>-<profile>.txt (a line per program and the summary
# line), and prints the summary lines. Exit 0 when every run had 0 failed and both builds worked.
set -u
cd "$(dirname "$0")/.."
o=${1:?usage: tools/arch_check.sh OUTDIR [--jobs=N] [--parts=\"75 80\"]}; shift
jobs=6 parts="75 80"
for a in "$@"; do
    case $a in
        --jobs=*) jobs=${a#*=} ;;
        --parts=*) parts=${a#*=} ;;
        *) echo "usage: tools/arch_check.sh OUTDIR [--jobs=N] [--parts=\"75 80\"]" >&2; exit 2 ;;
    esac
done
mkdir -p "$o" && o=$(cd "$o" && pwd)
src=$PWD rc=0
n=$(echo $parts | wc -w)
for a in $parts; do  # the builds at once, nproc/n jobs each
    b=${TMPDIR:-/tmp}/arch-check-$a
    rm -rf "$b" && mkdir -p "$b"
    tar --exclude=./.git --exclude=./.devlibs --exclude=./.venv --exclude=./.toolkits --exclude=./.mutants \
        --exclude=./.stress --exclude=./gpu_check_out -C "$src" -cf - . | tar -C "$b" -xf -
    # -B: the copy carries whatever was built in this tree (gpu_check.sh builds it natively first),
    # newer than its sources, which make would keep; a profile run on that build tests nothing of the
    # profile's architecture (tools/profile_run.py now fails it).
    (cd "$b" && t=$SECONDS && make -B -j$(( $(nproc) / n > 0 ? $(nproc) / n : 1 )) ARCH=compute_$a all > "$o/build-$a.log" 2>&1
     echo "build compute_$a: make exit $?, $((SECONDS - t)) s" >> "$o/build-$a.log") &
done
wait
for a in $parts; do
    line=$(tail -1 "$o/build-$a.log"); echo "$line"
    [[ $line == *"make exit 0"* ]] || rc=1
    case $a in 75) profiles="none t4 gtx1650" ;; 80) profiles="none a100 rtx3060-laptop-wsl rtx4090" ;; *) profiles=none ;; esac
    for p in $profiles; do
        pa=$p; [ $p = none ] && pa=
        python3 tools/profile_run.py --root "${TMPDIR:-/tmp}/arch-check-$a" --profile "$pa" --build compute_$a \
            --jobs "$jobs" > "$o/run-$a-$p.txt" 2>&1 || rc=1
        tail -1 "$o/run-$a-$p.txt"
        grep -E " FAILED" "$o/run-$a-$p.txt" | head -5
    done
    rm -rf "${TMPDIR:-/tmp}/arch-check-$a"
done
exit $rc
