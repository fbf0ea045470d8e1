/* SPDX-License-Identifier: MIT */
/*
 * DataCopy, the count form: count elements between global memory and the
 * unified buffer, or within the buffer.  The hardware moves 32-byte blocks:
 * a count whose bytes are not a multiple of 32 traps rather than copying
 * more or fewer bytes than asked.
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

} /* namespace aclmem */

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

} /* namespace AscendC */

#endif /* ACLMEM_ASCENDC_KERNEL_DATA_COPY_H */
