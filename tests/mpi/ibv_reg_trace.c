// SPDX-License-Identifier: GPL-2.0-only
/*
 * ibv_reg_trace: an LD_PRELOAD library that logs every memory registration
 * a process makes through libibverbs, for the MPI test (guest-mpi.sh) to
 * match against the address ranges of the npu-mem buffers the ranks sent
 * from.  Debian's UCX is built with --disable-logging: its debug lines
 * about registrations are compiled out, so UCX_LOG_LEVEL cannot show them.
 * UCX's verbs transports register through ibv_reg_mr_iova2 alone (which is
 * what rdma-core's ibv_reg_mr inline calls as well); the line is written
 * after the call, with its result:
 *
 *   ibv_reg_mr pid PID addr 0xADDR len LEN ok lkey 0xKEY
 *   ibv_reg_mr pid PID addr 0xADDR len LEN failed errno E
 *
 * to the file named by $NM_IBV_TRACE (appended, one write per line, so
 * that the ranks' lines do not interleave), or nowhere when it is unset.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

typedef struct ibv_mr *(*reg_mr_iova2_fn)(struct ibv_pd *, void *, size_t,
					  uint64_t, unsigned int);

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, unsigned int access)
{
	static reg_mr_iova2_fn real;
	const char *path = getenv("NM_IBV_TRACE");
	struct ibv_mr *mr;
	char line[160];
	int fd, n, err;

	/*
	 * This library links libibverbs, so that RTLD_NEXT finds it even
	 * when UCX loads its verbs transport with RTLD_LOCAL.
	 */
	if (!real)
		real = (reg_mr_iova2_fn)dlvsym(RTLD_NEXT, "ibv_reg_mr_iova2",
					       "IBVERBS_1.8");
	if (!real) {
		errno = ENOSYS;
		return NULL;
	}
	mr = real(pd, addr, length, iova, access);
	err = errno;
	if (!path)
		return mr;
	if (mr)
		n = snprintf(line, sizeof(line),
			     "ibv_reg_mr pid %d addr %p len %zu ok lkey 0x%x\n",
			     (int)getpid(), addr, length, mr->lkey);
	else
		n = snprintf(line, sizeof(line),
			     "ibv_reg_mr pid %d addr %p len %zu failed errno %d\n",
			     (int)getpid(), addr, length, err);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, line, n) != n)
			n = -1;
		close(fd);
	}
	errno = err;
	return mr;
}
