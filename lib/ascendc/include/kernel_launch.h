/* SPDX-License-Identifier: MIT */
/*
 * Launching a kernel: what the code ascendc_library() generates calls,
 * for aclrtlaunch_<kernel>(blockDim, stream, args...) and for
 * kernel<<<blockDim, l2ctrl, stream>>>(args...) in a kernel source.  The
 * arguments are converted to the kernel's parameter types (a pointer to
 * any pointer, a scalar to its type) and kept until the stream runs the
 * launch (libaclmem's aclmem_kernel_launch, <aclmem/kernel.h>); each block
 * runs the kernel in a thread of its own with a fresh unified buffer.
 * EntryLaunch is a kernel's entry in a binary (aclrtBinaryLoadFromFile,
 * <aclmem/kernel.h>): it reads the arguments from a packed block.
 * RunBlocks runs a launch at once on the calling thread's behalf, without
 * a stream or a device (the host tests use it).
 */
#ifndef ACLMEM_ASCENDC_KERNEL_LAUNCH_H
#define ACLMEM_ASCENDC_KERNEL_LAUNCH_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <thread>
#include <tuple>
#include <vector>

#include "acl/acl_base.h"
#include "aclmem/kernel.h"
#include "kernel_block.h"

namespace AscendC {
namespace aclmem {

/* ACL_ERROR_RT_AICORE_TRAP_EXCEPTION, ACL_ERROR_RT_AICORE_EXCEPTION */
inline constexpr int TRAP_ERROR = 507016;
inline constexpr int EXCEPTION_ERROR = 507015;

template <typename... P>
class KernelLaunch : public Launch {
public:
	KernelLaunch(uint32_t num, void (*fn)(P...), std::tuple<P...> args)
		: Launch(num), fn_(fn), args_(args) {}
	void Body() override { std::apply(fn_, args_); }

private:
	void (*fn_)(P...);
	std::tuple<P...> args_;
};

/* One block, on its own thread: 0 or an ACL error code. */
inline int RunBlock(void *launch, uint32_t idx)
{
	Launch *l = static_cast<Launch *>(launch);
	Block b{ idx, l->Num(), l, std::unique_ptr<uint8_t[]>(new uint8_t[UB_SIZE]),
		 false, 0 };
	int ret = 0;

	/* What a kernel reads before writing is not zeros: NaN, or -1. */
	std::memset(b.ub.get(), 0xFF, UB_SIZE);
	curBlock = &b;
	try {
		l->Body();
	} catch (const TrapSignal &) {
		ret = TRAP_ERROR;
	} catch (const std::exception &e) {
		std::lock_guard<std::mutex> g(OutputLock());

		std::fprintf(stderr, "AscendC: block %u of %u: %s\n", idx,
			     l->Num(), e.what());
		ret = EXCEPTION_ERROR;
	} catch (...) {
		ret = EXCEPTION_ERROR;
	}
	if (l->BlockEnded(ret != 0)) {
		std::lock_guard<std::mutex> g(OutputLock());

		std::fprintf(stderr, "AscendC trap: block %u of %u ended while "
			     "others wait at SyncAll\n", idx, l->Num());
		ret = TRAP_ERROR;
	}
	curBlock = nullptr;
	return ret;
}

inline void ReleaseLaunch(void *launch)
{
	delete static_cast<Launch *>(launch);
}

template <typename P, typename A>
inline P Arg(A a)
{
	if constexpr (std::is_pointer_v<P> && std::is_pointer_v<A>)
		return reinterpret_cast<P>(const_cast<void *>(
			reinterpret_cast<const volatile void *>(a)));
	else
		return static_cast<P>(a);
}

template <typename... P, typename... A>
inline Launch *MakeLaunch(uint32_t blockDim, void (*fn)(P...), A... args)
{
	static_assert(sizeof...(P) == sizeof...(A),
		      "AscendC launch: wrong number of kernel arguments");
	return new KernelLaunch<P...>(blockDim, fn,
				      std::tuple<P...>(Arg<P>(args)...));
}

/* aclrtlaunch_<kernel>: queue the launch on stream. */
template <typename... P, typename... A>
inline uint32_t LaunchKernel(const char *name, uint32_t blockDim,
			     aclrtStream stream, void (*fn)(P...), A... args)
{
	return (uint32_t)aclmem_kernel_launch(name, blockDim, stream, RunBlock,
					      ReleaseLaunch,
					      MakeLaunch(blockDim, fn, args...));
}

/* One parameter from a packed block, at its C alignment: false past its end. */
template <typename T>
inline bool Unpack(const uint8_t *block, size_t size, size_t &off, T &out)
{
	off = (off + alignof(T) - 1) & ~(alignof(T) - 1);
	if (off > size || size - off < sizeof(T))
		return false;
	std::memcpy(&out, block + off, sizeof(T));
	off += sizeof(T);
	return true;
}

/* aclmem_kernel_entry_<kernel>: a launch from the packed arguments. */
template <typename... P>
inline int EntryLaunch(void (*fn)(P...), const void *args, size_t size,
		       uint32_t blockDim, aclmem_kernel_block_fn *block,
		       aclmem_kernel_release_fn *release, void **launch)
{
	const uint8_t *b = static_cast<const uint8_t *>(args);
	std::tuple<P...> t{};
	size_t off = 0;
	bool ok = true;

	std::apply([&](auto &...v) { ((ok = ok && Unpack(b, size, off, v)), ...); }, t);
	/* A C struct of the parameters may end in padding: take either size. */
	size_t align = std::max({ alignof(char), alignof(P)... });
	if (!ok || (off != size && ((off + align - 1) & ~(align - 1)) != size))
		return 100000;	/* ACL_ERROR_INVALID_PARAM */
	try {
		*launch = static_cast<Launch *>(new KernelLaunch<P...>(blockDim, fn, t));
	} catch (const std::bad_alloc &) {
		return 207001;	/* ACL_ERROR_RT_MEMORY_ALLOCATION */
	}
	*block = RunBlock;
	*release = ReleaseLaunch;
	return 0;
}

/* kernel<<<blockDim, l2ctrl, stream>>>(args...), rewritten. */
template <typename... P>
class Chevron {
public:
	Chevron(const char *name, void (*fn)(P...), uint32_t blockDim, void *,
		aclrtStream stream)
		: name_(name), fn_(fn), dim_(blockDim), stream_(stream) {}

	/* Errors go where the stream's go: to its synchronisation. */
	template <typename... A>
	void operator()(A... args) const
	{
		(void)LaunchKernel(name_, dim_, stream_, fn_, args...);
	}

private:
	const char *name_;
	void (*fn_)(P...);
	uint32_t dim_;
	aclrtStream stream_;
};

/*
 * Run a launch now, every block on a thread of its own, and wait for it:
 * 0 or the first block's error code.
 */
template <typename... P, typename... A>
inline int RunBlocks(uint32_t blockDim, void (*fn)(P...), A... args)
{
	Launch *l = MakeLaunch(blockDim, fn, args...);
	std::vector<int> rc(blockDim);
	std::vector<std::thread> t;
	int ret = 0;

	for (uint32_t i = 0; i < blockDim; i++)
		t.emplace_back([&, i] { rc[i] = RunBlock(l, i); });
	for (auto &th : t)
		th.join();
	delete l;
	for (int r : rc)
		if (r && !ret)
			ret = r;
	return ret;
}

} /* namespace aclmem */
} /* namespace AscendC */

#endif /* ACLMEM_ASCENDC_KERNEL_LAUNCH_H */
