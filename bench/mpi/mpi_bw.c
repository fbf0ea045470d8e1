// SPDX-License-Identifier: GPL-2.0-only
/*
 * mpi_bw: MPI point-to-point bandwidth between two ranks, out of and into
 * buffers of three kinds in the same run, so that their rows compare:
 *
 *   malloc       malloc'd memory (what MPI programs usually send)
 *   huge_first   aclrtMallocCached, ACL_MEM_MALLOC_HUGE_FIRST
 *   normal_only  aclrtMallocCached, ACL_MEM_MALLOC_NORMAL_ONLY
 *
 * For each kind and size, rank 0 sends ITERS messages to rank 1, which
 * answers the last with one byte; the time is rank 0's, from the first
 * send to that answer.  One round before the timed ones warms the
 * transport's registration cache, so the rows show the steady state (the
 * first round's time, registration included, is the "first_ms" column).
 * Rank 0 writes CSV to standard output:
 *
 *   kind,bytes,iters,first_ms,seconds,mb_per_s
 *
 *     mpirun -np 2 ... build/bench/mpi_bw [ITERS [SIZE...]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#include "acl/acl.h"

static int rank;

enum kind { KIND_MALLOC, KIND_HUGE_FIRST, KIND_NORMAL_ONLY, KIND_COUNT };
static const char *const kind_name[KIND_COUNT] = {
	"malloc", "huge_first", "normal_only",
};

static void *buf_alloc(enum kind k, size_t bytes)
{
	void *p = NULL;

	switch (k) {
	case KIND_MALLOC:
		return malloc(bytes);
	case KIND_HUGE_FIRST:
		if (aclrtMallocCached(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST))
			return NULL;
		return p;
	default:
		if (aclrtMallocCached(&p, bytes, ACL_MEM_MALLOC_NORMAL_ONLY))
			return NULL;
		return p;
	}
}

static void buf_free(enum kind k, void *p)
{
	if (k == KIND_MALLOC)
		free(p);
	else
		aclrtFree(p);
}

/* One round: iters messages of bytes from rank 0 to 1; seconds on rank 0 */
static double round_trip(void *buf, size_t bytes, int iters)
{
	char ack = 0;
	double t0;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		if (rank == 0)
			MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 0,
				 MPI_COMM_WORLD);
		else
			MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	if (rank == 0)
		MPI_Recv(&ack, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	else
		MPI_Send(&ack, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
	return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
	static const size_t default_sizes[] = { 64 << 10, 1 << 20, 4 << 20 };
	size_t sizes[16];
	int nsizes = 0, iters = 20, size, ok = 1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		iters = atoi(argv[1]);
	for (int i = 2; i < argc && nsizes < 16; i++)
		sizes[nsizes++] = strtoull(argv[i], NULL, 0);
	if (!nsizes)
		for (size_t i = 0; i < sizeof(default_sizes) / sizeof(*default_sizes); i++)
			sizes[nsizes++] = default_sizes[i];
	if (size != 2 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "mpi_bw: 2 ranks and ITERS >= 1\n");
		MPI_Finalize();
		return 2;
	}
	if (aclInit(NULL) || aclrtSetDevice(0)) {
		fprintf(stderr, "mpi_bw: rank %d: no ACL device\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("kind,bytes,iters,first_ms,seconds,mb_per_s\n");
	for (int s = 0; s < nsizes; s++) {
		for (int k = 0; k < KIND_COUNT; k++) {
			void *buf = buf_alloc(k, sizes[s]);
			double first, secs;

			if (!buf || sizes[s] > INT32_MAX) {
				fprintf(stderr, "mpi_bw: rank %d: no %zu-byte %s buffer\n",
					rank, sizes[s], kind_name[k]);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
			memset(buf, rank + 1, sizes[s]);
			first = round_trip(buf, sizes[s], 1);
			secs = round_trip(buf, sizes[s], iters);
			if (rank == 0)
				printf("%s,%zu,%d,%.3f,%.6f,%.2f\n",
				       kind_name[k], sizes[s], iters,
				       first * 1e3, secs,
				       (double)sizes[s] * iters / secs / 1e6);
			/* What arrived is what rank 0 wrote. */
			if (rank == 1 && ((unsigned char *)buf)[sizes[s] - 1] != 1)
				ok = 0;
			buf_free(k, buf);
		}
	}
	fflush(stdout);
	aclrtResetDevice(0);
	aclFinalize();
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	MPI_Finalize();
	if (!ok && rank == 0)
		fprintf(stderr, "mpi_bw: rank 1 received wrong bytes\n");
	return ok ? 0 : 1;
}
