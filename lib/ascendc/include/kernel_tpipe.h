/* SPDX-License-Identifier: MIT */
/*
 * TPipe, TQue and TBuf: the block's unified buffer, cut into a queue's
 * buffers or a TBuf by TPipe::InitBuffer, in order, each rounded up to 32
 * bytes; more than 192 KiB in all traps.  A queue enforces the discipline
 * the hardware's would deadlock or corrupt data on, and traps instead:
 * AllocTensor with every buffer in use, EnQue of a tensor that is not a
 * buffer of this queue just allocated, EnQue beyond the queue's depth,
 * DeQue of an empty queue, FreeTensor of a buffer that is queued or free.
 */
#ifndef ACLMEM_ASCENDC_KERNEL_TPIPE_H
#define ACLMEM_ASCENDC_KERNEL_TPIPE_H

#include <cstdint>

#include "kernel_block.h"
#include "kernel_tensor.h"

namespace AscendC {
namespace aclmem {

/* The most buffers one queue may have. */
inline constexpr uint32_t MAX_QUE_BUFS = 16;

class QueBase {
public:
	enum State : uint8_t { FREE, ALLOCATED, QUEUED, DEQUEUED };

	QueBase(uint32_t depth) : depth_(depth) {}
	QueBase(const QueBase &) = delete;
	QueBase &operator=(const QueBase &) = delete;

	void Init(uint8_t *base, uint32_t num, uint32_t len)
	{
		base_ = base;
		num_ = num;
		len_ = len;
	}
	bool Inited() const { return base_ != nullptr; }

	template <typename T>
	LocalTensor<T> Alloc()
	{
		uint32_t i;

		Need("TQue::AllocTensor");
		for (i = 0; i < num_; i++) {
			if (state_[i] == FREE) {
				state_[i] = ALLOCATED;
				return Tensor<T>(i);
			}
		}
		Trap("TQue::AllocTensor: all %u buffers of the queue are in use "
		     "(a FreeTensor missing?)", num_);
	}

	template <typename T>
	bool EnQue(const LocalTensor<T> &t)
	{
		uint32_t i = Mine(t, "TQue::EnQue");

		if (state_[i] != ALLOCATED)
			Trap("TQue::EnQue: buffer %u is %s, not just allocated", i,
			     Name(state_[i]));
		if (count_ >= depth_)
			Trap("TQue::EnQue: the queue already holds its depth, %u",
			     depth_);
		state_[i] = QUEUED;
		fifo_[(head_ + count_++) % MAX_QUE_BUFS] = (uint8_t)i;
		return true;
	}

	template <typename T>
	LocalTensor<T> DeQue()
	{
		uint32_t i;

		Need("TQue::DeQue");
		if (!count_)
			Trap("TQue::DeQue: the queue is empty (an EnQue missing?)");
		i = fifo_[head_];
		head_ = (head_ + 1) % MAX_QUE_BUFS;
		count_--;
		state_[i] = DEQUEUED;
		return Tensor<T>(i);
	}

	template <typename T>
	void Free(const LocalTensor<T> &t)
	{
		uint32_t i = Mine(t, "TQue::FreeTensor");

		if (state_[i] != ALLOCATED && state_[i] != DEQUEUED)
			Trap("TQue::FreeTensor: buffer %u is %s", i,
			     Name(state_[i]));
		state_[i] = FREE;
	}

	bool Empty() const { return count_ == 0; }
	bool Full() const { return count_ >= depth_; }

private:
	static const char *Name(State s)
	{
		switch (s) {
		case FREE:
			return "free";
		case ALLOCATED:
			return "allocated";
		case QUEUED:
			return "queued";
		default:
			return "dequeued";
		}
	}

	void Need(const char *fn) const
	{
		if (!base_)
			Trap("%s: the queue has no buffers (TPipe::InitBuffer)", fn);
	}

	template <typename T>
	LocalTensor<T> Tensor(uint32_t i)
	{
		return LocalTensor<T>(reinterpret_cast<T *>(base_ + (uint64_t)i * len_),
				      len_ / (uint32_t)sizeof(T), this, i);
	}

	template <typename T>
	uint32_t Mine(const LocalTensor<T> &t, const char *fn) const
	{
		Need(fn);
		if (t.Owner() != this || t.Buf() >= num_ ||
		    reinterpret_cast<const uint8_t *>(t.GetPhyAddr()) !=
			    base_ + (uint64_t)t.Buf() * len_)
			Trap("%s: the tensor is not a buffer of this queue", fn);
		return t.Buf();
	}

	const uint32_t depth_;
	uint8_t *base_ = nullptr;
	uint32_t num_ = 0, len_ = 0;
	State state_[MAX_QUE_BUFS] = {};
	uint8_t fifo_[MAX_QUE_BUFS] = {};
	uint32_t head_ = 0, count_ = 0;
};

} /* namespace aclmem */

template <QuePosition pos, int32_t depth>
class TQue : public aclmem::QueBase {
	static_assert(pos == QuePosition::VECIN || pos == QuePosition::VECOUT,
		      "AscendC::TQue: libaclmem's subset has VECIN and VECOUT queues only");
	static_assert(depth >= 1 && depth <= (int32_t)aclmem::MAX_QUE_BUFS,
		      "AscendC::TQue: depth must be 1 to 16");

public:
	TQue() : QueBase((uint32_t)depth) {}

	template <typename T>
	LocalTensor<T> AllocTensor() { return Alloc<T>(); }
	template <typename T>
	bool EnQue(const LocalTensor<T> &tensor) { return QueBase::EnQue(tensor); }
	template <typename T>
	LocalTensor<T> DeQue() { return QueBase::DeQue<T>(); }
	template <typename T>
	void FreeTensor(LocalTensor<T> &tensor) { Free(tensor); }
};

template <QuePosition pos = QuePosition::VECCALC>
class TBuf {
	static_assert(pos == QuePosition::VECCALC || pos == QuePosition::VECIN ||
			      pos == QuePosition::VECOUT,
		      "AscendC::TBuf: libaclmem's subset has unified-buffer TBufs only");

public:
	TBuf() = default;
	TBuf(const TBuf &) = delete;
	TBuf &operator=(const TBuf &) = delete;

	void Init(uint8_t *base, uint32_t len)
	{
		base_ = base;
		len_ = len;
	}
	bool Inited() const { return base_ != nullptr; }

	template <typename T>
	LocalTensor<T> Get() { return Get<T>(len_ / (uint32_t)sizeof(T)); }

	template <typename T>
	LocalTensor<T> Get(uint32_t count)
	{
		if (!base_)
			aclmem::Trap("TBuf::Get: the TBuf has no buffer (TPipe::InitBuffer)");
		if ((uint64_t)count * sizeof(T) > len_)
			aclmem::Trap("TBuf::Get: %u elements exceed its %u bytes",
				     count, len_);
		return LocalTensor<T>(reinterpret_cast<T *>(base_), count, nullptr, 0);
	}

private:
	uint8_t *base_ = nullptr;
	uint32_t len_ = 0;
};

/*
 * The block's one pipe: owns the unified buffer from its construction to
 * its destruction (a second TPipe alive at once traps).
 */
class TPipe {
public:
	TPipe()
	{
		aclmem::Block &b = aclmem::Cur("TPipe");

		if (b.pipe)
			aclmem::Trap("TPipe: a block has one TPipe at a time");
		b.pipe = true;
		b.ubUsed = 0;
		block_ = &b;
	}
	~TPipe()
	{
		block_->pipe = false;
		block_->ubUsed = 0;
	}
	TPipe(const TPipe &) = delete;
	TPipe &operator=(const TPipe &) = delete;

	template <QuePosition pos, int32_t depth>
	bool InitBuffer(TQue<pos, depth> &que, uint8_t num, uint32_t len)
	{
		if (que.Inited())
			aclmem::Trap("TPipe::InitBuffer: the queue has its buffers already");
		if (!num || num > aclmem::MAX_QUE_BUFS)
			aclmem::Trap("TPipe::InitBuffer: %u buffers (1 to %u)", num,
				     aclmem::MAX_QUE_BUFS);
		len = Round(len);
		que.Init(Take((uint64_t)num * len), num, len);
		return true;
	}

	template <QuePosition pos>
	bool InitBuffer(TBuf<pos> &buf, uint32_t len)
	{
		if (buf.Inited())
			aclmem::Trap("TPipe::InitBuffer: the TBuf has its buffer already");
		len = Round(len);
		buf.Init(Take(len), len);
		return true;
	}

	void Destroy() {}

private:
	static uint32_t Round(uint32_t len)
	{
		if (!len)
			aclmem::Trap("TPipe::InitBuffer: a length of 0");
		return (uint32_t)(((uint64_t)len + aclmem::UB_ALIGN - 1) &
				  ~(uint64_t)(aclmem::UB_ALIGN - 1));
	}

	uint8_t *Take(uint64_t bytes)
	{
		if (bytes > aclmem::UB_SIZE - block_->ubUsed)
			aclmem::Trap("TPipe::InitBuffer: %llu bytes more than the "
				     "%u left of the %u-byte unified buffer",
				     (unsigned long long)bytes,
				     aclmem::UB_SIZE - block_->ubUsed, aclmem::UB_SIZE);
		uint8_t *p = block_->ub.get() + block_->ubUsed;

		block_->ubUsed += (uint32_t)bytes;
		return p;
	}

	aclmem::Block *block_;
};

} /* namespace AscendC */

#endif /* ACLMEM_ASCENDC_KERNEL_TPIPE_H */
