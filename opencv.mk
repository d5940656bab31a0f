# opencv.mk - finds OpenCV through pkg-config (included by common.mk and the top-level Makefile).
# All three variables can be set from outside instead (tools/gpu_check.sh does, for .devlibs/).
# Headers are passed as system headers, so their warnings are not ours.
HAVE_OPENCV ?= $(shell pkg-config --exists opencv4 2>/dev/null && echo yes)
OPENCV_CFLAGS ?= $(patsubst -I%,-isystem %,$(shell pkg-config --cflags-only-I opencv4 2>/dev/null))
OPENCV_LIBS ?= -L$(shell pkg-config --variable=libdir opencv4 2>/dev/null) \
               -lopencv_imgcodecs -lopencv_imgproc -lopencv_core
