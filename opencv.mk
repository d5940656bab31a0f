# opencv.mk - finds OpenCV (included by common.mk and the top-level Makefile).
#
# By default through pkg-config (opencv4), as the distribution's package installs it (libopencv-dev on
# Debian/Ubuntu). OpenCV installed elsewhere - /opt/opencv on a lab machine, a cluster's software
# tree, or a folder made by tools/make_devlibs.sh - is one option away:
#     make OPENCV_DIR=/opt/opencv
# which expects the headers in OPENCV_DIR/include/opencv4 and the libraries in OPENCV_DIR/lib (or
# set OPENCV_LIBDIR). The programs remember that library folder (rpath), so they run without
# LD_LIBRARY_PATH. HAVE_OPENCV, OPENCV_CFLAGS and OPENCV_LIBS can also be set directly.
# Headers are passed as system headers, so their warnings are not ours.
OPENCV_LINK := -lopencv_imgcodecs -lopencv_imgproc -lopencv_core
ifneq ($(strip $(OPENCV_DIR)),)
  OPENCV_LIBDIR ?= $(OPENCV_DIR)/lib
  HAVE_OPENCV ?= $(if $(wildcard $(OPENCV_DIR)/include/opencv4/opencv2/core.hpp),yes)
  OPENCV_CFLAGS ?= -isystem $(OPENCV_DIR)/include/opencv4
  # DT_RPATH (--disable-new-dtags) also serves the libraries' own dependencies in that folder.
  OPENCV_LIBS ?= -L$(OPENCV_LIBDIR) -Xlinker --disable-new-dtags -Xlinker -rpath=$(OPENCV_LIBDIR) \
                 -Xlinker -rpath-link=$(OPENCV_LIBDIR) $(OPENCV_LINK)
endif
HAVE_OPENCV ?= $(shell pkg-config --exists opencv4 2>/dev/null && echo yes)
OPENCV_CFLAGS ?= $(patsubst -I%,-isystem %,$(shell pkg-config --cflags-only-I opencv4 2>/dev/null))
OPENCV_LIBS ?= -L$(shell pkg-config --variable=libdir opencv4 2>/dev/null) $(OPENCV_LINK)
