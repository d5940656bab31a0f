#!/usr/bin/env bash
# Packs OpenCV (headers + the shared libraries it needs) into one folder that works as OPENCV_DIR,
# for a GPU machine where OpenCV is not installed and cannot be (no network, no root): a cluster
# node, a lab machine. Run it on a Debian/Ubuntu machine that has libopencv-dev, copy the folder
# along, then build there with `make OPENCV_DIR=/path/to/folder` (the programs find the libraries
# through their rpath). tools/gpu_check.sh uses ./.devlibs by itself when there is no other OpenCV.
#     tools/make_devlibs.sh [DIR]        (default DIR: .devlibs in the repository root)
# Debian's libopencv_imgcodecs links GDAL and GDCM (GIS and DICOM formats, 150 MB of dependencies)
# that PNG/JPEG I/O never calls: they are replaced by stub libraries that define the same symbols and
# return 0 (imgcodecs calls GDALAllRegister() at start-up; nothing else of them runs for PNG/JPEG files).
set -euo pipefail
dst=$(realpath -m "${1:-$(dirname "$0")/../.devlibs}")
if [ -e "$dst" ] && [ -n "$(ls -A "$dst")" ] && [ ! -d "$dst/include/opencv4" ]; then
    echo "make_devlibs: $dst exists and is not an OpenCV folder made by this script; not touching it" >&2; exit 2
fi
rm -rf "$dst"; mkdir -p "$dst/lib" "$dst/include"
cp -r /usr/include/opencv4 "$dst/include/"
libdir=/lib/x86_64-linux-gnu
stubs="libgdal.so.32 libgdcmMSFF.so.3.0 libgdcmDSED.so.3.0"
python3 - "$dst" "$libdir" $stubs <<'PY'
import os, shutil, subprocess, sys
dst, libdir, stubs = sys.argv[1], sys.argv[2], set(sys.argv[3:])
base = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2",
        "librt.so.1", "ld-linux-x86-64.so.2", "libz.so.1"}
def needed(p):
    out = subprocess.run(["objdump", "-p", p], capture_output=True, text=True, check=True).stdout
    return [l.split()[1] for l in out.splitlines() if l.strip().startswith("NEEDED")]
todo, seen = ["libopencv_imgcodecs.so.406", "libopencv_imgproc.so.406", "libopencv_core.so.406"], set()
while todo:
    n = todo.pop()
    if n in seen or n in base or n in stubs: continue
    seen.add(n)
    p = os.path.realpath(os.path.join(libdir, n))
    shutil.copy(p, os.path.join(dst, "lib", n))
    todo += needed(p)
for n in ["libopencv_core", "libopencv_imgproc", "libopencv_imgcodecs"]:
    os.symlink(n + ".so.406", os.path.join(dst, "lib", n + ".so"))
# stubs: every symbol imgcodecs takes from the stubbed libraries
und = subprocess.run(["nm", "-D", "--undefined-only", os.path.join(libdir, "libopencv_imgcodecs.so.406")],
                     capture_output=True, text=True, check=True).stdout.split()
for lib in stubs:
    rows = subprocess.run(["objdump", "-T", os.path.join(libdir, lib)], capture_output=True, text=True).stdout
    src = ["/* generated stub */"]
    for i, line in enumerate(rows.splitlines()):
        parts = line.split()
        if len(parts) < 6 or "*UND*" in line or parts[-1] not in und: continue
        name, kind, size = parts[-1], parts[-5] if parts[-5] in ("DF", "DO") else parts[2], int(parts[-3], 16)
        if "DO" in line.split("\t")[0]:
            src.append(f'char o{i}[{max(size, 8)}] __asm__("{name}") __attribute__((aligned(16)));')
        else:
            src.append(f'long f{i}(void) __asm__("{name}"); long f{i}(void) {{ return 0; }}')
    c = os.path.join(dst, lib + ".c")
    open(c, "w").write("\n".join(src) + "\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", os.path.join(dst, "lib", lib), f"-Wl,-soname,{lib}", c], check=True)
    os.remove(c)
PY
du -sh "$dst"
