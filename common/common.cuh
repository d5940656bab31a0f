// common.cuh - everything a chapter program needs: include this one header.
// Image programs also include image.h (OpenCV).
#pragma once
#include "args.h"
#include "check.cuh"
#include "cuda_compat.cuh"
#include "compare.h"
#include "device.cuh"
#include "random.h"
#include "timer.cuh"
