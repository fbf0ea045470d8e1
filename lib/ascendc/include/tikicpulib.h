/* SPDX-License-Identifier: MIT */
/*
 * CANN's CPU debug entry points (tikicpulib): a program built with
 * ASCENDC_CPU_DEBUG calls its kernel directly, without a device or a
 * stream, on memory from GmAlloc:
 *
 *	uint8_t *x = (uint8_t *)AscendC::GmAlloc(bytes);
 *	AscendC::SetKernelMode(KernelMode::AIV_MODE);
 *	ICPU_RUN_KF(add_custom, blockDim, x, y, z);
 *	AscendC::GmFree(x);
 *
 * ICPU_RUN_KF runs blockDim blocks, each on a thread of its own with its
 * own unified buffer (CANN forks a process per block; threads share the
 * address space, so GmAlloc needs no shared memory here), and returns when
 * every block ended.  It has no way to return an error, so a kernel that
 * traps or throws ends the program with exit status 1 after its blocks
 * ended, rather than let it go on with wrong data.
 */
#ifndef ACLMEM_ASCENDC_TIKICPULIB_H
#define ACLMEM_ASCENDC_TIKICPULIB_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "kernel_operator.h"

/* The cores a kernel is debugged for: every mode runs the vector subset. */
enum class KernelMode {
	MIX_MODE = 0,
	AIC_MODE,
	AIV_MODE
};

namespace AscendC {
namespace aclmem {

/* CANN's limit on ICPU_RUN_KF's kernel arguments. */
inline constexpr size_t ICPU_MAX_ARGS = 32;
/* GM allocations are aligned as the device's: 32-byte blocks, and pages. */
inline constexpr size_t GM_ALIGN = 4096;

struct CpuDebug {
	std::mutex lock;
	std::set<void *> gm;
	KernelMode mode = KernelMode::AIV_MODE;
	uint64_t tilingKey = 0;
};

inline CpuDebug &Debug()
{
	static CpuDebug d;

	return d;
}

[[noreturn]] inline void CpuFatal(const char *what, const char *name)
{
	std::fprintf(stderr, "AscendC CPU debug: %s%s%s\n", what,
		     name ? ": " : "", name ? name : "");
	std::exit(EXIT_FAILURE);
}

template <typename F, typename... A>
inline void CpuRunKernel(const char *name, F fn, int64_t blockDim, A... args)
{
	static_assert(sizeof...(A) <= ICPU_MAX_ARGS,
		      "ICPU_RUN_KF: more than 32 kernel arguments");
	int ret;

	if (blockDim < 1 || blockDim > UINT16_MAX)
		CpuFatal("ICPU_RUN_KF: blockDim must be 1 to 65535", name);
	ret = RunBlocks((uint32_t)blockDim, fn, args...);
	if (ret == TRAP_ERROR)
		CpuFatal("ICPU_RUN_KF: the kernel trapped", name);
	if (ret)
		CpuFatal("ICPU_RUN_KF: the kernel failed", name);
}

} /* namespace aclmem */

/* Zeroed memory that every block of a kernel can reach, like the GM. */
inline void *GmAlloc(size_t size)
{
	aclmem::CpuDebug &d = aclmem::Debug();
	void *p = nullptr;

	if (posix_memalign(&p, aclmem::GM_ALIGN, size ? size : 1))
		aclmem::CpuFatal("GmAlloc: out of memory", nullptr);
	std::memset(p, 0, size);
	std::lock_guard<std::mutex> l(d.lock);
	d.gm.insert(p);
	return p;
}

/* A pointer GmAlloc did not give, or gave and took back, is a bug. */
inline void GmFree(void *ptr)
{
	aclmem::CpuDebug &d = aclmem::Debug();
	{
		std::lock_guard<std::mutex> l(d.lock);

		if (!d.gm.erase(ptr))
			aclmem::CpuFatal("GmFree: not a pointer from GmAlloc",
					 nullptr);
	}
	std::free(ptr);
}

inline void SetKernelMode(KernelMode mode)
{
	aclmem::Debug().mode = mode;
}

} /* namespace AscendC */

/*
 * The kernel is converted to a function pointer first (+), so that a
 * template's specialisation and a lambda without captures are taken too.
 */
#define ICPU_RUN_KF(func, blkdim, ...)					\
	AscendC::aclmem::CpuRunKernel(#func, +(func), (blkdim), ##__VA_ARGS__)

/* Kept for the program; no kernel of the subset reads a tiling key. */
#define ICPU_SET_TILING_KEY(tilingKey)					\
	do {								\
		AscendC::aclmem::Debug().tilingKey = (tilingKey);	\
	} while (0)

#endif /* ACLMEM_ASCENDC_TIKICPULIB_H */
