/* SPDX-License-Identifier: MIT */
/*
 * libaclmem's AscendC: the subset of CANN's AscendC kernel API that
 * doc/ascendc.md lists, in plain C++17, so that a kernel source built by
 * ascendc_library() (the toolkit's ascendc.cmake) runs on the CPU, one
 * thread per block, as CANN's CPU debug mode runs it.  Anything outside the
 * subset is not declared, so it fails to compile, naming what is missing.
 */
#ifndef ACLMEM_ASCENDC_KERNEL_OPERATOR_H
#define ACLMEM_ASCENDC_KERNEL_OPERATOR_H

#if __cplusplus < 201703L
#error "AscendC kernels need C++17 (ascendc_library() compiles them so)"
#endif

#include "kernel_types.h"
#include "kernel_block.h"
#include "kernel_tensor.h"
#include "kernel_tpipe.h"
#include "kernel_data_copy.h"
#include "kernel_vec.h"
#include "kernel_cast.h"
#include "kernel_dump.h"
#include "kernel_launch.h"

#endif /* ACLMEM_ASCENDC_KERNEL_OPERATOR_H */
