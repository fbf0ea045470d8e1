/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_rdma: soft-RoCE (rdma_rxe) for the tests that register npu-mem
 * buffers as RDMA memory regions.  A header (static functions) rather than
 * a .c in tests/common, because every .c there is linked into every test
 * program and only the programs that set KLIBS_<name> in tests/Makefile
 * link libibverbs.
 *
 * The rxe device sits on one end of a veth pair and every queue pair talks
 * to a peer on the same device: rxe then hands packets from its sender to
 * its receiver itself (its loopback path, taken when source and destination
 * address are equal), through the whole packet engine but without the
 * network.  Two rxe devices on the two ends of the veth pair would not
 * talk: both addresses are local, so the packets would go out through lo,
 * where no rxe device listens (rxe works in the initial network namespace
 * only on these kernels).
 *
 * Nothing here asserts: the functions return 0 or -errno (with a reason
 * where there is more to say), so forked peers that report by exit status
 * can use them as well as Check test bodies.
 */
#ifndef NMTEST_RDMA_H
#define NMTEST_RDMA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "nmtest_util.h"

#define NM_RXE_NAME	"nmrxe0"
#define NM_RXE_VETH_A	"nmrxeveth0"
#define NM_RXE_VETH_B	"nmrxeveth1"

static inline void nm_rxe_teardown(void)
{
	nm_shell("rdma link delete " NM_RXE_NAME " 2>/dev/null; "
		 "ip link del " NM_RXE_VETH_A " 2>/dev/null", NULL);
}

/*
 * Create the rxe device over a fresh veth pair (root, in a vm-run guest).
 * Returns NULL, or the reason it cannot be had (malloc'd).
 */
static inline char *nm_rxe_setup(void)
{
	char *out = NULL, *why;
	int rc;

	nm_rxe_teardown();
	/*
	 * Loaded by hand: the kernel's own module requests (rxe's crc32
	 * shash) run the initramfs' modprobe, outside the guest's chroot.
	 * Kernels whose crc32 is a plain library (7.x) have no crc32_generic.
	 */
	rc = nm_shell("set -e; modprobe -q crc32_generic || true; modprobe rdma_rxe; "
		      "modprobe ib_uverbs; modprobe veth; "
		      "ip link add " NM_RXE_VETH_A " type veth peer name "
		      NM_RXE_VETH_B "; "
		      "ip addr add 10.77.15.1/24 dev " NM_RXE_VETH_A "; "
		      "ip link set " NM_RXE_VETH_A " up; "
		      "ip link set " NM_RXE_VETH_B " up; "
		      "rdma link add " NM_RXE_NAME " type rxe netdev "
		      NM_RXE_VETH_A, &out);
	if (rc == 0) {
		free(out);
		return NULL;
	}
	if (asprintf(&why, "exit %d: %s", rc, out ? out : "") < 0)
		why = NULL;
	free(out);
	nm_rxe_teardown();
	return why;
}

/* One process's (or one test's) use of the rxe device */
struct nm_rdma {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid;
	int gid_index;
};

/*
 * The IPv4-mapped GID of the veth's address, waited for: rxe adds GIDs from
 * a work queue, so the port can be active before that one is there.  The
 * link-local GID that is there first will not do: resolving it goes through
 * the IPv6 stack, and while the veth's link-local address is still tentative
 * (duplicate address detection, a second or more) connecting to it fails
 * with -ETIMEDOUT.
 */
static inline int nm_rdma_find_gid(struct nm_rdma *r, double timeout_s)
{
	double end = nm_now() + timeout_s;

	do {
		struct ibv_port_attr pa;

		if (ibv_query_port(r->ctx, 1, &pa))
			return -errno;
		for (int i = 0; pa.state == IBV_PORT_ACTIVE &&
				i < pa.gid_tbl_len; i++) {
			static const uint8_t v4mapped[12] = {
				[10] = 0xff, [11] = 0xff,
			};
			union ibv_gid g;

			if (ibv_query_gid(r->ctx, 1, i, &g) ||
			    memcmp(g.raw, v4mapped, sizeof(v4mapped)))
				continue;
			r->gid = g;
			r->gid_index = i;
			return 0;
		}
		usleep(100 * 1000);
	} while (nm_now() < end);
	return -ETIMEDOUT;
}

/*
 * Open NM_RXE_NAME, find its GID (the port may take a moment to become
 * active), allocate a PD and a CQ of cqe entries.  0, or -errno with the
 * step that failed in *what.
 */
static inline int nm_rdma_open(struct nm_rdma *r, int cqe, const char **what)
{
	struct ibv_device **list;
	int n, ret;

	memset(r, 0, sizeof(*r));
	*what = "ibv_get_device_list";
	list = ibv_get_device_list(&n);
	if (!list)
		return -errno;
	for (int i = 0; i < n && !r->ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), NM_RXE_NAME))
			r->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	*what = NM_RXE_NAME " among the verbs devices (rxe provider of "
		"ibverbs-providers?)";
	if (!r->ctx)
		return -ENODEV;
	*what = NM_RXE_NAME ": its IPv4 GID on an active port within 10 s";
	/* A minute: the wait ends as soon as the GID is there, and a loaded
	 * guest runs rxe's work queue late. */
	ret = nm_rdma_find_gid(r, 60);
	if (ret)
		return ret;
	*what = "ibv_alloc_pd";
	r->pd = ibv_alloc_pd(r->ctx);
	if (!r->pd)
		return -errno;
	*what = "ibv_create_cq";
	r->cq = ibv_create_cq(r->ctx, cqe, NULL, NULL, 0);
	if (!r->cq)
		return -errno;
	return 0;
}

/* Undo nm_rdma_open(): 0 or the first -errno */
static inline int nm_rdma_close(struct nm_rdma *r)
{
	int ret = 0, e;

	if (r->cq && (e = ibv_destroy_cq(r->cq)) && !ret)
		ret = -e;
	if (r->pd && (e = ibv_dealloc_pd(r->pd)) && !ret)
		ret = -e;
	if (r->ctx && ibv_close_device(r->ctx) && !ret)
		ret = -errno;
	memset(r, 0, sizeof(*r));
	return ret;
}

/* An RC QP on r's PD and CQ, room for a few WRs; NULL and errno */
static inline struct ibv_qp *nm_rdma_qp(struct nm_rdma *r)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = r->cq, .recv_cq = r->cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(r->pd, &qa);
}

/*
 * INIT -> RTR -> RTS towards the QP dest_qpn at dgid (psn 0 both ways),
 * remote READ and WRITE allowed.  0, or -errno of the transition that
 * failed.
 */
static inline int nm_rdma_connect(struct nm_rdma *r, struct ibv_qp *qp,
				  uint32_t dest_qpn, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return -ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = r->gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return -ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	/*
	 * The ACK timeout is 4.096 us << timeout: 14 gave rxe 67 ms for an
	 * ACK, eight times, before the work request failed; both ends are
	 * software in one emulated guest, which can stall for longer than
	 * that.  19: 2.1 s each, 17 s in all.  Nothing is lost on a veth, so
	 * only a stall ever waits for it.
	 */
	a.timeout = 19;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	return -ret;
}

/*
 * One signalled RDMA WRITE or READ of len bytes between laddr (in local
 * MR lkey) and raddr (in the peer's MR rkey), waited for.  0; -ETIMEDOUT
 * without a completion within timeout_s; -EIO with the completion's status
 * in *status; or ibv_post_send's -errno.
 */
static inline int nm_rdma_op(struct nm_rdma *r, struct ibv_qp *qp,
			     enum ibv_wr_opcode op, void *laddr,
			     uint32_t lkey, uint64_t raddr, uint32_t rkey,
			     size_t len, double timeout_s,
			     enum ibv_wc_status *status)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)laddr, .length = len, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	double end = nm_now() + timeout_s;
	struct ibv_wc wc;
	int n, ret;

	*status = IBV_WC_SUCCESS;
	ret = ibv_post_send(qp, &wr, &bad);
	if (ret)
		return -ret;
	while ((n = ibv_poll_cq(r->cq, 1, &wc)) == 0 && nm_now() < end)
		usleep(200);
	if (n < 0)
		return -EIO;
	if (n == 0)
		return -ETIMEDOUT;
	*status = wc.status;
	return wc.status == IBV_WC_SUCCESS ? 0 : -EIO;
}

static inline const char *nm_rdma_opname(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_WRITE ? "WRITE" :
	       op == IBV_WR_RDMA_READ ? "READ" : "op";
}

#endif /* NMTEST_RDMA_H */
