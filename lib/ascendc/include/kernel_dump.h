/* SPDX-License-Identifier: MIT */
/*
 * DumpTensor: the first dumpSize elements of a tensor, printed as one line
 * (as printf's lines, whole whatever the other blocks print) with the
 * caller's desc and the block, so that a person can tell the dumps apart.
 * CANN's own output format (a header per block, the tensor's address and
 * position) is not kept.  Elements outside the tensor trap.
 */
#ifndef ACLMEM_ASCENDC_KERNEL_DUMP_H
#define ACLMEM_ASCENDC_KERNEL_DUMP_H

#include <cstdint>
#include <cstdio>
#include <string>

#include "kernel_tensor.h"

namespace AscendC {
namespace aclmem {

template <typename T>
inline void AppendValue(std::string &line, T v)
{
	char buf[48];

	if constexpr (std::is_same_v<T, half> || std::is_floating_point_v<T>)
		std::snprintf(buf, sizeof(buf), " %g", (double)(float)v);
	else if constexpr (std::is_signed_v<T>)
		std::snprintf(buf, sizeof(buf), " %lld", (long long)v);
	else
		std::snprintf(buf, sizeof(buf), " %llu", (unsigned long long)v);
	line += buf;
}

template <typename T, typename Tensor>
inline void Dump(const Tensor &t, uint32_t desc, uint32_t dumpSize,
		 const char *where)
{
	std::string line;
	char head[96];
	Block &b = Cur("DumpTensor");

	t.Check(0, dumpSize, "DumpTensor");
	std::snprintf(head, sizeof(head), "DumpTensor: desc=%u, block %u of %u, "
		      "%s, %u elements:", desc, b.idx, b.num, where, dumpSize);
	line = head;
	for (uint32_t i = 0; i < dumpSize; i++)
		AppendValue(line, t.GetPhyAddr()[i]);
	line += '\n';
	std::lock_guard<std::mutex> l(OutputLock());
	std::fputs(line.c_str(), stdout);
	std::fflush(stdout);
}

} /* namespace aclmem */

template <typename T>
inline void DumpTensor(const LocalTensor<T> &tensor, uint32_t desc,
		       uint32_t dumpSize)
{
	aclmem::Dump<T>(tensor, desc, dumpSize, "UB");
}

template <typename T>
inline void DumpTensor(const GlobalTensor<T> &tensor, uint32_t desc,
		       uint32_t dumpSize)
{
	aclmem::Dump<T>(tensor, desc, dumpSize, "GM");
}

} /* namespace AscendC */

#endif /* ACLMEM_ASCENDC_KERNEL_DUMP_H */
