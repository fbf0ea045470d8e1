/* SPDX-License-Identifier: MIT */
/*
 * DataCopy and DataCopyPad: elements between global memory and the unified
 * buffer, or within the buffer.
 *
 * DataCopy moves whole 32-byte blocks: the count form count elements, a
 * count whose bytes are not a multiple of 32 trapping rather than copying
 * more or fewer bytes than asked; the DataCopyParams form blockCount runs
 * of blockLen blocks, srcStride and dstStride blocks apart (end of one run
 * to the start of the next).
 *
 * DataCopyPad moves any number of bytes per run (blockLen, a whole number
 * of elements).  On the global side the stride is in bytes, on the unified
 * buffer's in 32-byte blocks, and each run there starts on a block: from
 * global memory a run is written after leftPadding elements, followed by
 * rightPadding elements and what is left of its last block; with isPad
 * those are paddingValue, without it they are what the buffer held (CANN:
 * undefined).  To global memory exactly blockLen bytes of each run are
 * written.
 *
 * A count or a run of zero, padding over 32 bytes or a run outside either
 * tensor traps: CANN documents the ranges, and silence would hide the bug.
 */
#ifndef ACLMEM_ASCENDC_KERNEL_DATA_COPY_H
#define ACLMEM_ASCENDC_KERNEL_DATA_COPY_H

#include <cstdint>
#include <cstring>

#include "kernel_tensor.h"

namespace AscendC {
namespace aclmem {

/* Any pair of tensors: both views checked, then the bytes moved. */
template <typename T, typename D, typename S>
inline void Copy(const D &dst, const S &src, uint32_t count)
{
	if (((uint64_t)count * sizeof(T)) % UB_ALIGN)
		Trap("DataCopy: %u elements of %zu bytes are not a multiple of "
		     "32 bytes", count, sizeof(T));
	dst.Check(0, count, "DataCopy");
	src.Check(0, count, "DataCopy");
	std::memmove(dst.GetPhyAddr(), src.GetPhyAddr(), (size_t)count * sizeof(T));
}

/*
 * One run: bytes from byte offset soff of src to doff of dst, both views
 * checked first.  Offsets and lengths are whole elements.
 */
template <typename T, typename D, typename S>
inline void Run(const D &dst, uint64_t doff, const S &src, uint64_t soff,
		uint64_t bytes, const char *fn)
{
	if (soff % sizeof(T) || doff % sizeof(T) || bytes % sizeof(T))
		Trap("%s: %llu bytes at offsets %llu and %llu are not whole "
		     "elements of %zu bytes", fn, (unsigned long long)bytes,
		     (unsigned long long)soff, (unsigned long long)doff, sizeof(T));
	dst.Check(doff / sizeof(T), bytes / sizeof(T), fn);
	src.Check(soff / sizeof(T), bytes / sizeof(T), fn);
	std::memmove((uint8_t *)dst.GetPhyAddr() + doff,
		     (const uint8_t *)src.GetPhyAddr() + soff, bytes);
}

inline uint64_t BlockUp(uint64_t bytes)
{
	return (bytes + UB_ALIGN - 1) / UB_ALIGN * UB_ALIGN;
}

/* Every form takes at least one run of at least one block or byte. */
template <typename P>
inline void CheckRuns(const P &p, const char *fn)
{
	if (!p.blockCount || !p.blockLen)
		Trap("%s: blockCount %u, blockLen %u: both must be at least 1",
		     fn, p.blockCount, (unsigned int)p.blockLen);
}

template <typename T, typename D, typename S, typename P>
inline void Strided(const D &dst, const S &src, const P &p)
{
	CheckRuns(p, "DataCopy");
	for (uint64_t i = 0; i < p.blockCount; i++)
		Run<T>(dst, i * (p.blockLen + p.dstStride) * UB_ALIGN, src,
		       i * (p.blockLen + p.srcStride) * UB_ALIGN,
		       (uint64_t)p.blockLen * UB_ALIGN, "DataCopy");
}

/* DataCopyPad, global memory to the unified buffer. */
template <typename T, typename P>
inline void PadIn(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
		  const P &p, bool isPad, uint8_t left, uint8_t right, T value)
{
	uint64_t row, doff;

	CheckRuns(p, "DataCopyPad");
	if (left * sizeof(T) > UB_ALIGN || right * sizeof(T) > UB_ALIGN)
		Trap("DataCopyPad: padding of %u and %u elements: at most 32 "
		     "bytes each", left, right);
	row = BlockUp(left * sizeof(T) + p.blockLen + right * sizeof(T));
	for (uint64_t i = 0; i < p.blockCount; i++) {
		doff = i * (row + (uint64_t)p.dstStride * UB_ALIGN);
		dst.Check(doff / sizeof(T), row / sizeof(T), "DataCopyPad");
		if (isPad)
			for (uint64_t e = 0; e < row / sizeof(T); e++)
				dst.GetPhyAddr()[doff / sizeof(T) + e] = value;
		Run<T>(dst, doff + left * sizeof(T), src,
		       i * ((uint64_t)p.blockLen + p.srcStride), p.blockLen,
		       "DataCopyPad");
	}
}

/* DataCopyPad, the unified buffer to global memory. */
template <typename T, typename P>
inline void PadOut(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
		   const P &p)
{
	CheckRuns(p, "DataCopyPad");
	for (uint64_t i = 0; i < p.blockCount; i++)
		Run<T>(dst, i * ((uint64_t)p.blockLen + p.dstStride), src,
		       i * (BlockUp(p.blockLen) + (uint64_t)p.srcStride * UB_ALIGN),
		       p.blockLen, "DataCopyPad");
}

} /* namespace aclmem */

/* blockLen and both strides in 32-byte blocks. */
struct DataCopyParams {
	DataCopyParams() {}
	DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn,
		       uint16_t dstStrideIn)
		: blockCount(count), blockLen(len), srcStride(srcStrideIn),
		  dstStride(dstStrideIn) {}

	uint16_t blockCount = 1;
	uint16_t blockLen = 0;
	uint16_t srcStride = 0;
	uint16_t dstStride = 0;
};

/* DataCopyPad's: blockLen in bytes, strides as the header says. */
struct DataCopyExtParams {
	DataCopyExtParams() {}
	DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn,
			  uint32_t dstStrideIn, uint32_t rsvIn)
		: blockCount(count), blockLen(len), srcStride(srcStrideIn),
		  dstStride(dstStrideIn), rsv(rsvIn) {}

	uint16_t blockCount = 1;
	uint32_t blockLen = 0;
	uint32_t srcStride = 0;
	uint32_t dstStride = 0;
	uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
	DataCopyPadExtParams() {}
	DataCopyPadExtParams(bool isPadValue, uint8_t leftPadValue,
			     uint8_t rightPadValue, T padValue)
		: isPad(isPadValue), leftPadding(leftPadValue),
		  rightPadding(rightPadValue), paddingValue(padValue) {}

	bool isPad = false;
	uint8_t leftPadding = 0;
	uint8_t rightPadding = 0;
	T paddingValue = T(0);
};

/* With DataCopyParams: the padding value as the element's bits. */
struct DataCopyPadParams {
	DataCopyPadParams() {}
	DataCopyPadParams(bool isPadValue, uint8_t leftPadValue,
			  uint8_t rightPadValue, uint64_t padValue)
		: isPad(isPadValue), leftPadding(leftPadValue),
		  rightPadding(rightPadValue), paddingValue(padValue) {}

	bool isPad = false;
	uint8_t leftPadding = 0;
	uint8_t rightPadding = 0;
	uint64_t paddingValue = 0;
};

template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
		     const uint32_t count)
{
	aclmem::Copy<T>(dst, src, count);
}

template <typename T>
inline void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
		     const uint32_t count)
{
	aclmem::Copy<T>(dst, src, count);
}

template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src,
		     const uint32_t count)
{
	aclmem::Copy<T>(dst, src, count);
}

template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
		     const DataCopyParams &params)
{
	aclmem::Strided<T>(dst, src, params);
}

template <typename T>
inline void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
		     const DataCopyParams &params)
{
	aclmem::Strided<T>(dst, src, params);
}

template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src,
		     const DataCopyParams &params)
{
	aclmem::Strided<T>(dst, src, params);
}

template <typename T>
inline void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
			const DataCopyExtParams &params,
			const DataCopyPadExtParams<T> &pad)
{
	aclmem::PadIn(dst, src, params, pad.isPad, pad.leftPadding,
		      pad.rightPadding, pad.paddingValue);
}

template <typename T>
inline void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
			const DataCopyParams &params,
			const DataCopyPadParams &pad)
{
	T value;

	static_assert(sizeof(T) <= sizeof(pad.paddingValue));
	std::memcpy(static_cast<void *>(&value), &pad.paddingValue, sizeof(T));
	aclmem::PadIn(dst, src, params, pad.isPad, pad.leftPadding,
		      pad.rightPadding, value);
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
			const DataCopyExtParams &params)
{
	aclmem::PadOut(dst, src, params);
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
			const DataCopyParams &params)
{
	aclmem::PadOut(dst, src, params);
}

} /* namespace AscendC */

#endif /* ACLMEM_ASCENDC_KERNEL_DATA_COPY_H */
