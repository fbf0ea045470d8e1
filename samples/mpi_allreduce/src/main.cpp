// SPDX-License-Identifier: MIT
/*
 * mpi_allreduce: an MPI program whose messages go directly out of, and into,
 * memory from aclrtMallocCached, with no staging copy: the buffers are
 * ordinary CPU-cached memory, so MPI (and UCX or any RDMA transport under
 * it) registers and moves them as it would malloc'd memory.
 *
 *   aclInit, aclrtSetDevice (each rank its own process)
 *   aclrtMallocCached with ACL_MEM_MALLOC_HUGE_FIRST, then NORMAL_ONLY
 *   MPI_Send/MPI_Recv around the ring of ranks, out of and into them
 *   MPI_Allreduce (MPI_SUM over uint32) out of one into the other
 *   every received byte compared with what it must be
 *
 *     mpirun -np 2 ./mpi_allreduce [BYTES]      (default 4 MiB a buffer)
 *
 * Each rank prints its pid and its buffers' address ranges ("rank R pid P
 * buffer ..."), so that a transport's registrations can be matched with
 * them.  Rank 0 prints "PASS mpi_allreduce" when every rank checked its
 * data; every rank exits 0 then, 1 otherwise.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <unistd.h>

// The C API from C++: without these, Open MPI's and MPICH's mpi.h pull in
// their C++ bindings, which live in another library.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "acl/acl.h"

#define INFO_LOG(fmt, ...) fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)

#define CHECK_ACL(call)                                                      \
	do {                                                                 \
		aclError ret_ = (call);                                      \
		if (ret_ != ACL_SUCCESS) {                                   \
			ERROR_LOG("rank %d: %s failed, error code %d (line %d)", \
				  g_rank, #call, static_cast<int>(ret_),     \
				  __LINE__);                                 \
			return false;                                        \
		}                                                            \
	} while (0)

namespace {

const int32_t kDeviceId = 0;
int g_rank, g_size;

// What rank r puts in word i of its buffer in round seed.
uint32_t Word(int r, size_t i, unsigned seed)
{
	return static_cast<uint32_t>((i * 2654435761u) ^ (r * 40503u + seed)) +
	       static_cast<uint32_t>(r);
}

void Fill(void *buf, size_t words, int r, unsigned seed)
{
	uint32_t *p = static_cast<uint32_t *>(buf);
	for (size_t i = 0; i < words; i++)
		p[i] = Word(r, i, seed);
}

// Byte for byte against the expected words, which are built apart.
bool Compare(const void *got, const std::vector<uint32_t> &want,
	     const char *what)
{
	size_t bytes = want.size() * sizeof(uint32_t);
	const uint8_t *g = static_cast<const uint8_t *>(got);
	const uint8_t *w = reinterpret_cast<const uint8_t *>(want.data());

	if (memcmp(g, w, bytes) == 0) {
		INFO_LOG("rank %d: %s: %zu bytes correct", g_rank, what, bytes);
		return true;
	}
	for (size_t i = 0; i < bytes; i++) {
		if (g[i] != w[i]) {
			ERROR_LOG("rank %d: %s: byte %zu is 0x%02x, expected 0x%02x",
				  g_rank, what, i, g[i], w[i]);
			break;
		}
	}
	return false;
}

bool Round(aclrtMemMallocPolicy policy, const char *name, size_t bytes,
	   unsigned seed)
{
	size_t words = bytes / sizeof(uint32_t);
	void *send = nullptr, *recv = nullptr;
	std::vector<uint32_t> want(words);
	bool ok = false, p2p_ok = true;

	// The other ranks would wait in the next call for this one: a rank
	// without its buffers ends the job.
	if (aclrtMallocCached(&send, bytes, policy) != ACL_SUCCESS ||
	    aclrtMallocCached(&recv, bytes, policy) != ACL_SUCCESS) {
		ERROR_LOG("rank %d: aclrtMallocCached(%zu, %s) failed", g_rank,
			  bytes, name);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	printf("rank %d pid %d buffer %s send %p-%p\n", g_rank,
	       static_cast<int>(getpid()), name, send,
	       static_cast<char *>(send) + bytes);
	printf("rank %d pid %d buffer %s recv %p-%p\n", g_rank,
	       static_cast<int>(getpid()), name, recv,
	       static_cast<char *>(recv) + bytes);

	// Send/Recv around the ring; even ranks send first, so that no two
	// neighbours wait for each other's receive.
	if (g_size > 1) {
		int next = (g_rank + 1) % g_size;
		int prev = (g_rank + g_size - 1) % g_size;
		int count = static_cast<int>(words);

		Fill(send, words, g_rank, seed);
		memset(recv, 0, bytes);
		if (g_rank % 2 == 0) {
			if (MPI_Send(send, count, MPI_UINT32_T, next, 1,
				     MPI_COMM_WORLD) != MPI_SUCCESS ||
			    MPI_Recv(recv, count, MPI_UINT32_T, prev, 1,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
				    MPI_SUCCESS)
				goto mpi_failed;
		} else {
			if (MPI_Recv(recv, count, MPI_UINT32_T, prev, 1,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
				    MPI_SUCCESS ||
			    MPI_Send(send, count, MPI_UINT32_T, next, 1,
				     MPI_COMM_WORLD) != MPI_SUCCESS)
				goto mpi_failed;
		}
		for (size_t i = 0; i < words; i++)
			want[i] = Word(prev, i, seed);
		// Wrong bytes end nothing early: every rank must still take
		// part in the collectives that follow.
		p2p_ok = Compare(recv, want, name);
	}

	// Allreduce: the sum of every rank's words, wrapping at 2^32.
	Fill(send, words, g_rank, seed + 1);
	memset(recv, 0, bytes);
	if (MPI_Allreduce(send, recv, static_cast<int>(words), MPI_UINT32_T,
			  MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
		goto mpi_failed;
	for (size_t i = 0; i < words; i++) {
		uint32_t sum = 0;

		for (int r = 0; r < g_size; r++)
			sum += Word(r, i, seed + 1);
		want[i] = sum;
	}
	ok = Compare(recv, want, "MPI_Allreduce") && p2p_ok;
	goto out;

mpi_failed:
	ERROR_LOG("rank %d: MPI failed in the %s round", g_rank, name);
out:
	if (send && aclrtFree(send) != ACL_SUCCESS)
		ok = false;
	if (recv && aclrtFree(recv) != ACL_SUCCESS)
		ok = false;
	return ok;
}

bool Run(size_t bytes)
{
	// As above: a rank without its device ends the job.
	if (aclInit(nullptr) != ACL_SUCCESS ||
	    aclrtSetDevice(kDeviceId) != ACL_SUCCESS) {
		ERROR_LOG("rank %d: aclInit or aclrtSetDevice(%d) failed",
			  g_rank, kDeviceId);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	// Both rounds on every rank, whatever the first gave.
	bool huge = Round(ACL_MEM_MALLOC_HUGE_FIRST, "HUGE_FIRST", bytes, 1);
	bool normal = Round(ACL_MEM_MALLOC_NORMAL_ONLY, "NORMAL_ONLY", bytes, 3);
	bool ok = huge && normal;
	CHECK_ACL(aclrtResetDevice(kDeviceId));
	CHECK_ACL(aclFinalize());
	return ok;
}

} // namespace

int main(int argc, char **argv)
{
	size_t bytes = 4u << 20;
	int ok, all_ok = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g_size);
	if (argc > 1)
		bytes = strtoull(argv[1], nullptr, 0) & ~static_cast<size_t>(3);
	if (bytes == 0 || bytes / sizeof(uint32_t) > INT32_MAX) {
		if (g_rank == 0)
			ERROR_LOG("usage: mpi_allreduce [BYTES], 4 to 8 GiB");
		MPI_Finalize();
		return 1;
	}
	if (g_rank == 0)
		INFO_LOG("%d ranks, %zu bytes a buffer", g_size, bytes);
	ok = Run(bytes);
	fflush(stdout);
	// Every rank's verdict, so that rank 0 passes only if all did.
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	MPI_Finalize();
	if (g_rank == 0 && all_ok)
		printf("PASS mpi_allreduce\n");
	return all_ok ? 0 : 1;
}
