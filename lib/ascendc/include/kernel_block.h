/* SPDX-License-Identifier: MIT */
/*
 * A block: one thread with its own unified buffer.  A launch (one kernel
 * call over blockDim blocks) is shared by its blocks: SyncAll's barrier,
 * and the fact that one of them trapped, which ends every other block
 * waiting at or reaching SyncAll rather than leaving it waiting for ever.
 *
 * A trap prints one line to stderr and unwinds the block (a C++ exception
 * the launch catches), so that the launch fails the stream task as an AI
 * Core trap does (ACL_ERROR_RT_AICORE_TRAP_EXCEPTION at the next
 * synchronisation) and the program goes on.
 */
#ifndef ACLMEM_ASCENDC_KERNEL_BLOCK_H
#define ACLMEM_ASCENDC_KERNEL_BLOCK_H

#include <cassert>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "kernel_types.h"

namespace AscendC {
namespace aclmem {

/* The unified buffer of an AI Core's vector unit (Ascend 910B): 192 KiB. */
inline constexpr uint32_t UB_SIZE = 192 * 1024;
/* Unified-buffer allocations and copies come in 32-byte blocks. */
inline constexpr uint32_t UB_ALIGN = 32;

/* Thrown by a trap; caught where the block started. */
struct TrapSignal {};

/* What one launch's blocks share. */
class Launch {
public:
	explicit Launch(uint32_t num) : num_(num) {}
	virtual ~Launch() = default;
	virtual void Body() = 0;

	uint32_t Num() const { return num_; }

	/* SyncAll: false when the launch broke (a block trapped). */
	bool Barrier()
	{
		std::unique_lock<std::mutex> l(lock_);
		uint64_t gen = gen_;

		/* Every block must reach it: one that ended never will. */
		if (ended_)
			broken_ = true;
		if (broken_) {
			cv_.notify_all();
			return false;
		}
		if (++arrived_ == num_) {
			arrived_ = 0;
			gen_++;
			cv_.notify_all();
			return true;
		}
		cv_.wait(l, [&] { return gen_ != gen || broken_; });
		return gen_ != gen;
	}

	/*
	 * A block ended.  Blocks still waiting at SyncAll would wait for
	 * ever: that, like a trap, breaks the launch.
	 */
	bool BlockEnded(bool failed)
	{
		std::lock_guard<std::mutex> l(lock_);
		bool stranded = arrived_ > 0 && !broken_;

		ended_++;
		if (failed || stranded) {
			broken_ = true;
			cv_.notify_all();
		}
		return stranded;
	}

	bool Broken()
	{
		std::lock_guard<std::mutex> l(lock_);

		return broken_;
	}

private:
	const uint32_t num_;
	std::mutex lock_;
	std::condition_variable cv_;
	uint32_t ended_ = 0, arrived_ = 0;
	uint64_t gen_ = 0;
	bool broken_ = false;
};

/* The running block, per thread. */
struct Block {
	uint32_t idx, num;
	Launch *launch;
	std::unique_ptr<uint8_t[]> ub;
	bool pipe;		/* a TPipe owns the unified buffer */
	uint32_t ubUsed;
};

inline thread_local Block *curBlock;

inline std::mutex &OutputLock()
{
	static std::mutex m;

	return m;
}

[[noreturn]] inline void Fatal(const char *what)
{
	std::fprintf(stderr, "AscendC: %s outside a kernel launch\n", what);
	std::abort();
}

inline Block &Cur(const char *what)
{
	if (!curBlock)
		Fatal(what);
	return *curBlock;
}

/* Report and unwind the block. */
[[noreturn]] inline void Trap(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
[[noreturn]] inline void Trap(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	std::vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	{
		std::lock_guard<std::mutex> l(OutputLock());

		if (curBlock)
			std::fprintf(stderr, "AscendC trap: block %u of %u: %s\n",
				     curBlock->idx, curBlock->num, msg);
		else
			std::fprintf(stderr, "AscendC trap: %s\n", msg);
	}
	throw TrapSignal();
}

[[noreturn]] inline void AssertFail(const char *expr, const char *file, int line)
{
	Trap("%s:%d: assertion failed: %s", file, line, expr);
}

} /* namespace aclmem */

inline int64_t GetBlockIdx()
{
	return aclmem::Cur("GetBlockIdx").idx;
}

inline int64_t GetBlockNum()
{
	return aclmem::Cur("GetBlockNum").num;
}

/*
 * Every block of the launch waits for every other.  A block that traps, or
 * ends without reaching the barrier, traps the blocks waiting at it.
 */
template <bool isAIVOnly = true>
inline void SyncAll()
{
	aclmem::Block &b = aclmem::Cur("SyncAll");

	if (!b.launch->Barrier())
		aclmem::Trap("SyncAll: another block of the launch trapped or "
			     "ended without reaching SyncAll");
}

/* Every operation is complete when it returns: barriers have nothing to do. */
template <pipe_t pipe>
inline void PipeBarrier() {}

inline void pipe_barrier(pipe_t) {}

/*
 * Kernel printf: the whole line at once, whatever the other blocks print.
 * CANN's own output format (a header per block) is not kept.
 */
template <typename... Args>
inline void printf(const char *fmt, Args... args)
{
	std::lock_guard<std::mutex> l(aclmem::OutputLock());

	if constexpr (sizeof...(Args) == 0)
		std::fputs(fmt, stdout);
	else
		std::printf(fmt, args...);
	std::fflush(stdout);
}

template <typename... Args>
inline void PRINTF(const char *fmt, Args... args)
{
	AscendC::printf(fmt, args...);
}

} /* namespace AscendC */

/* The kernel's own trap instruction. */
[[noreturn]] inline void trap()
{
	AscendC::aclmem::Trap("trap()");
}

/* A kernel's assert traps the block, whatever NDEBUG says. */
#undef assert
#define assert(expr) \
	((expr) ? (void)0 : ::AscendC::aclmem::AssertFail(#expr, __FILE__, __LINE__))

#endif /* ACLMEM_ASCENDC_KERNEL_BLOCK_H */
