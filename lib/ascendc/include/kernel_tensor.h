/* SPDX-License-Identifier: MIT */
/*
 * GlobalTensor: a view of global (device) memory; LocalTensor: a view of
 * the block's unified buffer, handed out by a queue or a TBuf.  Element
 * accesses are checked against the view: out of it, the block traps.  A
 * GlobalTensor set without a size has no bound to check.
 */
#ifndef ACLMEM_ASCENDC_KERNEL_TENSOR_H
#define ACLMEM_ASCENDC_KERNEL_TENSOR_H

#include <cstdint>

#include "kernel_block.h"

namespace AscendC {
namespace aclmem {
class QueBase;
inline constexpr uint64_t UNBOUNDED = ~0ull;
} /* namespace aclmem */

template <typename T>
class GlobalTensor {
public:
	void SetGlobalBuffer(__gm__ T *buffer, uint64_t bufferSize)
	{
		addr_ = buffer;
		size_ = bufferSize;
	}
	void SetGlobalBuffer(__gm__ T *buffer)
	{
		addr_ = buffer;
		size_ = aclmem::UNBOUNDED;
	}

	T GetValue(uint64_t offset) const
	{
		Check(offset, 1, "GlobalTensor::GetValue");
		return addr_[offset];
	}
	void SetValue(uint64_t offset, T value)
	{
		Check(offset, 1, "GlobalTensor::SetValue");
		addr_[offset] = value;
	}

	/* The tensor from element offset on. */
	GlobalTensor operator[](uint64_t offset) const
	{
		GlobalTensor t;

		Check(offset, 0, "GlobalTensor::operator[]");
		t.addr_ = addr_ + offset;
		t.size_ = size_ == aclmem::UNBOUNDED ? size_ : size_ - offset;
		return t;
	}

	__gm__ T *GetPhyAddr() const { return addr_; }
	__gm__ T *GetPhyAddr(uint64_t offset) const { return addr_ + offset; }
	uint64_t GetSize() const { return size_; }

	/* For DataCopy: count elements from offset 0 must be in the view. */
	void Check(uint64_t offset, uint64_t count, const char *fn) const
	{
		if (!addr_)
			aclmem::Trap("%s: the GlobalTensor has no buffer (SetGlobalBuffer)", fn);
		if (size_ != aclmem::UNBOUNDED &&
		    (offset > size_ || count > size_ - offset))
			aclmem::Trap("%s: elements [%llu, %llu) outside a GlobalTensor of %llu",
				     fn, (unsigned long long)offset,
				     (unsigned long long)(offset + count),
				     (unsigned long long)size_);
	}

private:
	T *addr_ = nullptr;
	uint64_t size_ = 0;
};

template <typename T>
class LocalTensor {
public:
	LocalTensor() = default;
	LocalTensor(T *addr, uint32_t size, aclmem::QueBase *owner, uint32_t buf)
		: addr_(addr), size_(size), owner_(owner), buf_(buf) {}

	T GetValue(uint32_t offset) const
	{
		Check(offset, 1, "LocalTensor::GetValue");
		return addr_[offset];
	}
	void SetValue(uint32_t offset, T value) const
	{
		Check(offset, 1, "LocalTensor::SetValue");
		addr_[offset] = value;
	}

	/* The tensor from element offset on (not a queue's buffer itself). */
	LocalTensor operator[](uint32_t offset) const
	{
		Check(offset, 0, "LocalTensor::operator[]");
		return LocalTensor(addr_ + offset, size_ - offset,
				   offset ? nullptr : owner_, buf_);
	}

	template <typename U>
	LocalTensor<U> ReinterpretCast() const
	{
		return LocalTensor<U>(reinterpret_cast<U *>(addr_),
				      (uint32_t)((uint64_t)size_ * sizeof(T) / sizeof(U)),
				      owner_, buf_);
	}

	__ubuf__ T *GetPhyAddr() const { return addr_; }
	uint32_t GetSize() const { return size_; }
	uint32_t GetLength() const { return size_ * sizeof(T); }

	aclmem::QueBase *Owner() const { return owner_; }
	uint32_t Buf() const { return buf_; }

	void Check(uint32_t offset, uint32_t count, const char *fn) const
	{
		if (!addr_)
			aclmem::Trap("%s: the LocalTensor has no buffer", fn);
		if (offset > size_ || count > size_ - offset)
			aclmem::Trap("%s: elements [%u, %u) outside a LocalTensor of %u",
				     fn, offset, offset + count, size_);
	}

private:
	T *addr_ = nullptr;
	uint32_t size_ = 0;
	aclmem::QueBase *owner_ = nullptr;
	uint32_t buf_ = 0;
};

} /* namespace AscendC */

#endif /* ACLMEM_ASCENDC_KERNEL_TENSOR_H */
