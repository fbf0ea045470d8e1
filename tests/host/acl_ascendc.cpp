// SPDX-License-Identifier: MIT
/*
 * libaclmem's AscendC subset (lib/ascendc/include), on the host: every
 * vector operation and Cast, for each of its types, run as kernels over
 * several blocks (AscendC::aclmem::RunBlocks, no device) and compared with
 * plain loops, whose half arithmetic goes through libaclmem's own
 * aclFloat16 conversions (lib/float16.c) and, for Cast's round modes, a
 * search of every half; SyncAll; each queue-discipline misuse and bound
 * traps, without hanging the other blocks; code outside the subset
 * fails to compile, naming what it uses; and CANN's CPU debug entry points
 * (tikicpulib.h: ICPU_RUN_KF, GmAlloc, GmFree).
 */
#include "kernel_operator.h"
#include "tikicpulib.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "acltest.h"
#include "acl/acl.h"
}

#ifndef ACLTEST_TOP
#error "build with -DACLTEST_TOP=..."
#endif

using namespace AscendC;

static constexpr uint32_t BLOCKS = 4;
static constexpr uint32_t PER_BLOCK = 256;	/* elements */
static constexpr uint32_t N = BLOCKS * PER_BLOCK;
static constexpr uint32_t TILE = 64;

enum Op { ADD, SUB, MUL, DIV, MAX, MIN, ADDS, MULS, DUP, ABS, EXP, NOPS };
static const char *const op_name[NOPS] = { "Add", "Sub", "Mul", "Div", "Max", "Min",
					   "Adds", "Muls", "Duplicate", "Abs", "Exp" };

/* The scalar of Adds, Muls and Duplicate. */
static constexpr float SCALAR = 3;

/*
 * One operation over each block's slice, tile by tile, through a VECIN
 * queue of two buffers and a VECOUT one: the shape of a real kernel.
 */
template <typename T>
static void op_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, int32_t op)
{
	TPipe pipe;
	TQue<QuePosition::VECIN, 2> qx, qy;
	TQue<QuePosition::VECOUT, 2> qz;
	GlobalTensor<T> xg, yg, zg;
	uint64_t start = PER_BLOCK * GetBlockIdx();

	xg.SetGlobalBuffer((__gm__ T *)x + start, PER_BLOCK);
	yg.SetGlobalBuffer((__gm__ T *)y + start, PER_BLOCK);
	zg.SetGlobalBuffer((__gm__ T *)z + start, PER_BLOCK);
	pipe.InitBuffer(qx, 2, TILE * sizeof(T));
	pipe.InitBuffer(qy, 2, TILE * sizeof(T));
	pipe.InitBuffer(qz, 2, TILE * sizeof(T));
	for (uint32_t t = 0; t < PER_BLOCK / TILE; t++) {
		LocalTensor<T> a = qx.AllocTensor<T>(), b = qy.AllocTensor<T>();

		DataCopy(a, xg[t * TILE], TILE);
		DataCopy(b, yg[t * TILE], TILE);
		qx.EnQue(a);
		qy.EnQue(b);
		a = qx.DeQue<T>();
		b = qy.DeQue<T>();
		LocalTensor<T> c = qz.AllocTensor<T>();
		switch (op) {
		case ADD: Add(c, a, b, TILE); break;
		case SUB: Sub(c, a, b, TILE); break;
		case MUL: Mul(c, a, b, TILE); break;
		case MAX: Max(c, a, b, TILE); break;
		case MIN: Min(c, a, b, TILE); break;
		case ADDS: Adds(c, a, (T)SCALAR, TILE); break;
		case MULS: Muls(c, a, (T)SCALAR, TILE); break;
		case DUP: Duplicate(c, (T)SCALAR, TILE); break;
		default:
			if constexpr (aclmem::Floating<T>) {
				if (op == DIV)
					Div(c, a, b, TILE);
				else if (op == ABS)
					Abs(c, a, TILE);
				else
					Exp(c, a, TILE);
			}
		}
		PipeBarrier<PIPE_ALL>();
		qz.EnQue(c);
		qx.FreeTensor(a);
		qy.FreeTensor(b);
		c = qz.DeQue<T>();
		DataCopy(zg[t * TILE], c, TILE);
		qz.FreeTensor(c);
	}
}

/* ---- the reference loops, in C terms ---- */

static uint16_t h_of(float f) { return aclFloatToFloat16(f); }
static float f_of(uint16_t h) { return aclFloat16ToFloat(h); }

static float ref_f(int op, float a, float b)
{
	switch (op) {
	case ADD: return a + b;
	case SUB: return a - b;
	case MUL: return a * b;
	case DIV: return a / b;
	case MAX: return a > b ? a : b;
	case MIN: return a < b ? a : b;
	case ADDS: return a + SCALAR;
	case MULS: return a * SCALAR;
	case DUP: return SCALAR;
	case ABS: return fabsf(a);
	default: return expf(a);
	}
}

static int32_t ref_i(int op, int32_t a, int32_t b)
{
	uint32_t ua = (uint32_t)a, ub = (uint32_t)b;

	switch (op) {
	case ADD: return (int32_t)(ua + ub);
	case SUB: return (int32_t)(ua - ub);
	case MUL: return (int32_t)(ua * ub);
	case MAX: return a > b ? a : b;
	case MIN: return a < b ? a : b;
	case ADDS: return (int32_t)(ua + 3u);
	case MULS: return (int32_t)(ua * 3u);
	default: return 3;
	}
}

/* Inputs: both signs, fractions for the floating types, no zero divisor. */
static float in_x(uint32_t i) { return ((float)(i % 61) - 30.0f) / 4.0f; }
static float in_y(uint32_t i) { return ((float)(i % 17) + 1.0f) / ((i & 1) ? -2.0f : 2.0f); }
static int32_t in_xi(uint32_t i)
{
	return (i % 5 == 0) ? INT32_MAX - (int32_t)(i % 3) : (int32_t)(i * 2654435761u);
}
static int32_t in_yi(uint32_t i) { return (i % 7 == 0) ? INT32_MIN + 1 : (int32_t)(i * 40503u) - 7000000; }

START_TEST(vector_ops_float)
{
	std::vector<float> x(N), y(N), z(N);
	int op;

	for (uint32_t i = 0; i < N; i++) {
		x[i] = in_x(i);
		y[i] = in_y(i);
	}
	for (op = 0; op < NOPS; op++) {
		ck_assert_int_eq(aclmem::RunBlocks(BLOCKS, op_kernel<float>, x.data(),
						   y.data(), z.data(), op), 0);
		for (uint32_t i = 0; i < N; i++)
			ck_assert_msg(z[i] == ref_f(op, x[i], y[i]),
				      "%s float [%u]: %g, want %g", op_name[op], i,
				      (double)z[i], (double)ref_f(op, x[i], y[i]));
	}
}
END_TEST

START_TEST(vector_ops_half)
{
	std::vector<half> x(N), y(N), z(N);
	int op;

	for (uint32_t i = 0; i < N; i++) {
		x[i] = half::FromBits(h_of(in_x(i)));
		y[i] = half::FromBits(h_of(in_y(i)));
	}
	for (op = 0; op < NOPS; op++) {
		ck_assert_int_eq(aclmem::RunBlocks(BLOCKS, op_kernel<half>, x.data(),
						   y.data(), z.data(), op), 0);
		for (uint32_t i = 0; i < N; i++) {
			uint16_t want = h_of(ref_f(op, f_of(x[i].Bits()),
						   f_of(y[i].Bits())));

			ck_assert_msg(z[i].Bits() == want,
				      "%s half [%u]: %#x, want %#x", op_name[op], i,
				      z[i].Bits(), want);
		}
	}
}
END_TEST

START_TEST(vector_ops_int32)
{
	std::vector<int32_t> x(N), y(N), z(N);
	int op;

	for (uint32_t i = 0; i < N; i++) {
		x[i] = in_xi(i);
		y[i] = in_yi(i);
	}
	for (op = 0; op < NOPS; op++) {
		if (op == DIV || op == ABS || op == EXP)
			continue;	/* not int32_t operations (compile_errors) */
		ck_assert_int_eq(aclmem::RunBlocks(BLOCKS, op_kernel<int32_t>, x.data(),
						   y.data(), z.data(), op), 0);
		for (uint32_t i = 0; i < N; i++)
			ck_assert_msg(z[i] == ref_i(op, x[i], y[i]),
				      "%s int32 [%u]: %d, want %d", op_name[op], i,
				      z[i], ref_i(op, x[i], y[i]));
	}
}
END_TEST

/* ---- Cast ---- */

template <typename D, typename S>
static void cast_kernel(GM_ADDR src, GM_ADDR dst, int32_t mode)
{
	TPipe pipe;
	TBuf<QuePosition::VECCALC> bs, bd;
	GlobalTensor<S> sg;
	GlobalTensor<D> dg;
	uint64_t start = PER_BLOCK * GetBlockIdx();

	sg.SetGlobalBuffer((__gm__ S *)src + start, PER_BLOCK);
	dg.SetGlobalBuffer((__gm__ D *)dst + start, PER_BLOCK);
	pipe.InitBuffer(bs, PER_BLOCK * sizeof(S));
	pipe.InitBuffer(bd, PER_BLOCK * sizeof(D));
	LocalTensor<S> s = bs.Get<S>();
	LocalTensor<D> d = bd.Get<D>();
	DataCopy(s, sg, PER_BLOCK);
	Cast(d, s, (RoundMode)mode, PER_BLOCK);
	DataCopy(dg, d, PER_BLOCK);
}

static const RoundMode modes[] = { RoundMode::CAST_NONE, RoundMode::CAST_RINT,
				   RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL,
				   RoundMode::CAST_ROUND, RoundMode::CAST_TRUNC,
				   RoundMode::CAST_ODD };

/* Every finite half but -0, by value, as libaclmem decodes it. */
static const std::vector<std::pair<double, uint16_t>> &all_halves()
{
	static const std::vector<std::pair<double, uint16_t>> t = [] {
		std::vector<std::pair<double, uint16_t>> v;

		for (uint32_t b = 0; b < 0x10000; b++)
			if (((b >> 10) & 0x1F) != 0x1F && b != 0x8000)
				v.emplace_back(f_of((uint16_t)b), (uint16_t)b);
		std::sort(v.begin(), v.end());
		return v;
	}();
	return t;
}

/*
 * The reference rounding to half, |v| <= 65504: the finite halves just
 * below and above v, found in the table of them all, then the mode.
 */
static uint16_t ref_half(double v, RoundMode m)
{
	const auto &t = all_halves();
	uint16_t lo, hi;
	double dl, dh;

	if (v == 0)
		return std::signbit(v) ? 0x8000 : 0;
	auto it = std::lower_bound(t.begin(), t.end(), std::make_pair(v, (uint16_t)0));
	if (it->first == v)
		return it->second;
	hi = it->second;
	lo = std::prev(it)->second;
	dl = v - f_of(lo);
	dh = f_of(hi) - v;
	switch (m) {
	case RoundMode::CAST_FLOOR: return lo;
	case RoundMode::CAST_CEIL: return hi;
	case RoundMode::CAST_TRUNC: return v < 0 ? hi : lo;
	case RoundMode::CAST_ROUND: return dh < dl || (dh == dl && v > 0) ? hi : lo;
	case RoundMode::CAST_ODD: return (lo & 1) ? lo : hi;
	default: return dh < dl || (dh == dl && (lo & 1)) ? hi : lo;
	}
}

static float ref_float(double v, RoundMode m)
{
	float n = (float)v, lo = n, hi = n;

	if ((double)n == v)
		return n;
	if ((double)n < v)
		hi = nextafterf(n, INFINITY);
	else
		lo = nextafterf(n, -INFINITY);
	switch (m) {
	case RoundMode::CAST_FLOOR: return lo;
	case RoundMode::CAST_CEIL: return hi;
	case RoundMode::CAST_TRUNC: return v < 0 ? hi : lo;
	case RoundMode::CAST_ROUND: return (hi - v < v - lo || (hi - v == v - lo && v > 0)) ? hi : lo;
	case RoundMode::CAST_ODD: {
		uint32_t b;

		memcpy(&b, &lo, sizeof(b));
		return (b & 1) ? lo : hi;
	}
	default: return n;
	}
}

static int32_t ref_int(double v, RoundMode m)
{
	double r;

	switch (m) {
	case RoundMode::CAST_FLOOR: r = floor(v); break;
	case RoundMode::CAST_CEIL: r = ceil(v); break;
	case RoundMode::CAST_TRUNC: r = trunc(v); break;
	case RoundMode::CAST_ROUND: r = round(v); break;
	default: r = rint(v); break;
	}
	if (r > 2147483647.0)
		return INT32_MAX;
	if (r < -2147483648.0)
		return INT32_MIN;
	return (int32_t)r;
}

/* Values with every kind of rounding question: ties, near-ties, signs. */
static double cast_in(uint32_t i, bool integral)
{
	static const double special[] = { 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5,
					  2049.0, 2051.0, -2049.0, 4097.0, 65504.0,
					  -65504.0, 1.0009765625, 3e9, -3e9,
					  2147483520.0, 33554435.0, -33554435.0 };
	const uint32_t ns = sizeof(special) / sizeof(special[0]);
	double v;

	if (i < ns)
		v = special[i];
	else
		v = ((double)((i * 2654435761u) % 200001) - 100000.0) / (integral ? 1.0 : 7.0);
	return integral ? trunc(v) : v;
}

template <typename D, typename S>
static void cast_check(const char *what)
{
	std::vector<S> src(N);
	std::vector<D> dst(N);
	bool integral = std::is_same_v<S, int32_t>;

	for (uint32_t i = 0; i < N; i++) {
		double v = cast_in(i, integral);

		if constexpr (std::is_same_v<S, half>) {
			if (fabs(v) > 65504)
				v = 0;
			src[i] = half::FromBits(h_of((float)v));
		} else if constexpr (std::is_same_v<S, float>) {
			src[i] = (float)v;
		} else {
			src[i] = (int32_t)std::max(std::min(v, 2147483647.0), -2147483648.0);
		}
	}
	for (RoundMode m : modes) {
		if (std::is_same_v<D, int32_t> && m == RoundMode::CAST_ODD)
			continue;	/* traps: cast_odd_to_int_traps */
		ck_assert_int_eq(aclmem::RunBlocks(BLOCKS, cast_kernel<D, S>, src.data(),
						   dst.data(), (int32_t)m), 0);
		for (uint32_t i = 0; i < N; i++) {
			double v;

			if constexpr (std::is_same_v<S, half>)
				v = f_of(src[i].Bits());
			else
				v = (double)src[i];
			if constexpr (std::is_same_v<D, half>) {
				/* beyond the finite halves: overflow_to_half */
				if (fabs(v) > 65504)
					continue;
				ck_assert_msg(dst[i].Bits() == ref_half(v, m),
					      "%s mode %d [%u] %.17g: %#x, want %#x", what,
					      (int)m, i, v, dst[i].Bits(), ref_half(v, m));
			} else if constexpr (std::is_same_v<D, float>) {
				ck_assert_msg(dst[i] == ref_float(v, m),
					      "%s mode %d [%u] %.17g: %.9g, want %.9g", what,
					      (int)m, i, v, (double)dst[i], (double)ref_float(v, m));
			} else {
				ck_assert_msg(dst[i] == ref_int(v, m),
					      "%s mode %d [%u] %.17g: %d, want %d", what,
					      (int)m, i, v, dst[i], ref_int(v, m));
			}
		}
	}
}

START_TEST(cast_float_half)
{
	cast_check<half, float>("float->half");
	cast_check<float, half>("half->float");
}
END_TEST

START_TEST(cast_float_int32)
{
	cast_check<int32_t, float>("float->int32");
	cast_check<float, int32_t>("int32->float");
}
END_TEST

START_TEST(cast_half_int32)
{
	cast_check<int32_t, half>("half->int32");
	cast_check<half, int32_t>("int32->half");
}
END_TEST

START_TEST(overflow_to_half)
{
	/* IEEE 754: nearest goes to infinity, toward zero stays finite. */
	std::vector<float> src(N, 1e6f);
	std::vector<half> dst(N);

	for (uint32_t i = 0; i < N; i += 2)
		src[i] = -1e6f;
	struct { RoundMode m; uint16_t pos, neg; } want[] = {
		{ RoundMode::CAST_RINT, 0x7C00, 0xFC00 },
		{ RoundMode::CAST_FLOOR, 0x7BFF, 0xFC00 },
		{ RoundMode::CAST_CEIL, 0x7C00, 0xFBFF },
		{ RoundMode::CAST_TRUNC, 0x7BFF, 0xFBFF },
	};
	for (auto &w : want) {
		ck_assert_int_eq(aclmem::RunBlocks(BLOCKS, cast_kernel<half, float>,
						   src.data(), dst.data(), (int32_t)w.m), 0);
		ck_assert_uint_eq(dst[1].Bits(), w.pos);
		ck_assert_uint_eq(dst[0].Bits(), w.neg);
	}
}
END_TEST

START_TEST(cast_odd_to_int_traps)
{
	std::vector<float> src(N, 1.5f);
	std::vector<int32_t> dst(N);

	ck_assert_int_eq(aclmem::RunBlocks(BLOCKS, cast_kernel<int32_t, float>, src.data(),
					   dst.data(), (int32_t)RoundMode::CAST_ODD),
			 ACL_ERROR_RT_AICORE_TRAP_EXCEPTION);
}
END_TEST

/* ---- blocks together ---- */

static void sync_kernel(GM_ADDR out)
{
	GlobalTensor<int32_t> g;
	int64_t me = GetBlockIdx(), n = GetBlockNum();

	g.SetGlobalBuffer((__gm__ int32_t *)out, 2 * n);
	for (int round = 0; round < 3; round++) {
		g.SetValue(me, (int32_t)(me * 10 + round));
		SyncAll();
		/* every block's write is visible to every block */
		g.SetValue(n + me, g.GetValue((me + 1) % n));
		SyncAll();
	}
}

START_TEST(sync_all)
{
	std::vector<int32_t> out(2 * 8);

	ck_assert_int_eq(aclmem::RunBlocks(8, sync_kernel, out.data()), 0);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(out[8 + i], ((i + 1) % 8) * 10 + 2);
}
END_TEST

/* ---- misuse traps ---- */

enum Misuse {
	DEQUE_EMPTY, ALLOC_TOO_MANY, ENQUE_BEYOND_DEPTH, FREE_TWICE, ENQUE_FOREIGN,
	UB_OVERFLOW, COPY_UNALIGNED, LOCAL_OUT_OF_RANGE, GLOBAL_OUT_OF_RANGE,
	VEC_OUT_OF_RANGE, TRAP, ASSERT, TWO_PIPES, STRIDED_NO_BLOCKS,
	STRIDED_OUT_OF_RANGE, PAD_NO_RUNS, PAD_EMPTY_RUN, PAD_TOO_WIDE,
	PAD_PART_ELEMENT, PAD_OUT_OF_RANGE, PAD_OUT_PAST_GLOBAL, DUMP_PAST_END,
	NMISUSE
};

static void misuse_kernel(GM_ADDR gm, int32_t what)
{
	TPipe pipe;
	TQue<QuePosition::VECIN, 1> q, other;
	GlobalTensor<float> g;
	LocalTensor<float> a, b;

	g.SetGlobalBuffer((__gm__ float *)gm, 64);
	pipe.InitBuffer(q, 2, 64 * sizeof(float));
	pipe.InitBuffer(other, 1, 64 * sizeof(float));
	/* Only block 1 misbehaves: the others end normally. */
	if (GetBlockIdx() != 1)
		return;
	switch (what) {
	case DEQUE_EMPTY:
		(void)q.DeQue<float>();
		break;
	case ALLOC_TOO_MANY:
		a = q.AllocTensor<float>();
		b = q.AllocTensor<float>();
		(void)q.AllocTensor<float>();
		break;
	case ENQUE_BEYOND_DEPTH:
		a = q.AllocTensor<float>();
		b = q.AllocTensor<float>();
		q.EnQue(a);
		q.EnQue(b);
		break;
	case FREE_TWICE:
		a = q.AllocTensor<float>();
		q.FreeTensor(a);
		q.FreeTensor(a);
		break;
	case ENQUE_FOREIGN:
		a = other.AllocTensor<float>();
		q.EnQue(a);
		break;
	case UB_OVERFLOW: {
		TBuf<QuePosition::VECCALC> big;

		pipe.InitBuffer(big, 192 * 1024);
		break;
	}
	case COPY_UNALIGNED:
		a = q.AllocTensor<float>();
		DataCopy(a, g, 7);
		break;
	case LOCAL_OUT_OF_RANGE:
		a = q.AllocTensor<float>();
		a.SetValue(64, 1.0f);
		break;
	case GLOBAL_OUT_OF_RANGE:
		a = q.AllocTensor<float>();
		DataCopy(a, g[8], 64);
		break;
	case VEC_OUT_OF_RANGE:
		a = q.AllocTensor<float>();
		Adds(a, a, 1.0f, 65);
		break;
	case TRAP:
		trap();
	case ASSERT:
		assert(GetBlockIdx() == 0);
		break;
	case TWO_PIPES: {
		TPipe second;
		break;
	}
	case STRIDED_NO_BLOCKS:
		a = q.AllocTensor<float>();
		DataCopy(a, g, DataCopyParams(0, 1, 0, 0));
		break;
	case STRIDED_OUT_OF_RANGE:	/* from 16, the 4th run ends at 64 + 8 */
		a = q.AllocTensor<float>();
		DataCopy(a, g, DataCopyParams(4, 1, 1, 0));
		DataCopy(a, g[16], DataCopyParams(4, 1, 1, 0));
		break;
	case PAD_NO_RUNS:
		a = q.AllocTensor<float>();
		DataCopyPad(a, g, DataCopyExtParams(0, 4, 0, 0, 0),
			    DataCopyPadExtParams<float>());
		break;
	case PAD_EMPTY_RUN:
		a = q.AllocTensor<float>();
		DataCopyPad(g, a, DataCopyExtParams(1, 0, 0, 0, 0));
		break;
	case PAD_TOO_WIDE:		/* 9 floats of padding: 36 bytes */
		a = q.AllocTensor<float>();
		DataCopyPad(a, g, DataCopyExtParams(1, 4, 0, 0, 0),
			    DataCopyPadExtParams<float>(true, 9, 0, 0.0f));
		break;
	case PAD_PART_ELEMENT:
		a = q.AllocTensor<float>();
		DataCopyPad(a, g, DataCopyExtParams(2, 4, 3, 0, 0),
			    DataCopyPadExtParams<float>());
		break;
	case PAD_OUT_OF_RANGE:		/* 5 rows of 16 floats in a 64-float UB */
		a = q.AllocTensor<float>();
		DataCopyPad(a, g, DataCopyExtParams(5, 4, 0, 1, 0),
			    DataCopyPadExtParams<float>());
		break;
	case PAD_OUT_PAST_GLOBAL:
		a = q.AllocTensor<float>();
		DataCopyPad(g[60], a, DataCopyExtParams(1, 20, 0, 0, 0));
		break;
	case DUMP_PAST_END:
		a = q.AllocTensor<float>();
		DumpTensor(a, 1, 65);
		break;
	}
}

START_TEST(misuse_traps)
{
	std::vector<float> gm(64);

	ck_assert_int_eq(aclmem::RunBlocks(BLOCKS, misuse_kernel, gm.data(), (int32_t)_i),
			 ACL_ERROR_RT_AICORE_TRAP_EXCEPTION);
}
END_TEST

/* A trapping block, or one that never reaches SyncAll, frees the others. */
static void sync_trap_kernel(int32_t how)
{
	if (GetBlockIdx() == 2) {
		if (how)
			return;
		trap();
	}
	SyncAll();
}

START_TEST(sync_all_never_hangs)
{
	ck_assert_int_eq(aclmem::RunBlocks(BLOCKS, sync_trap_kernel, (int32_t)0),
			 ACL_ERROR_RT_AICORE_TRAP_EXCEPTION);
	ck_assert_int_eq(aclmem::RunBlocks(BLOCKS, sync_trap_kernel, (int32_t)1),
			 ACL_ERROR_RT_AICORE_TRAP_EXCEPTION);
}
END_TEST

static void print_kernel()
{
	AscendC::printf("block %ld of %ld\n", (long)GetBlockIdx(), (long)GetBlockNum());
}

START_TEST(kernel_printf)
{
	ck_assert_int_eq(aclmem::RunBlocks(2, print_kernel), 0);
}
END_TEST

/* ---- DataCopy's strided form, DataCopyPad, DumpTensor ---- */

static constexpr uint32_t COPY_N = 256;

/*
 * Block 0 gathers every other 32-byte block of x into the unified buffer,
 * moves it within the buffer the same way and scatters it to every other
 * block of z; elements that no run reaches keep their value.
 */
static void strided_kernel(GM_ADDR x, GM_ADDR z)
{
	TPipe pipe;
	TBuf<QuePosition::VECCALC> buf;
	GlobalTensor<float> xg, zg;
	LocalTensor<float> a, b;

	xg.SetGlobalBuffer((__gm__ float *)x, COPY_N);
	zg.SetGlobalBuffer((__gm__ float *)z, COPY_N);
	pipe.InitBuffer(buf, 128 * sizeof(float));
	a = buf.Get<float>(64);
	b = buf.Get<float>()[64];
	DataCopy(a, xg, DataCopyParams(4, 1, 1, 0));	/* x blocks 0,2,4,6 */
	DataCopy(b, a, DataCopyParams(2, 2, 0, 2));	/* b blocks 0,1,4,5 */
	DataCopy(zg, b, DataCopyParams(2, 2, 2, 1));	/* z blocks 0,1,3,4 */
}

START_TEST(data_copy_strided)
{
	std::vector<float> x(COPY_N), z(COPY_N, -1.0f);
	/* z's blocks 0,1,3,4 get x's blocks 0,2,4,6. */
	const int from[8] = { 0, 2, -1, 4, 6, -1, -1, -1 };

	for (uint32_t i = 0; i < COPY_N; i++)
		x[i] = (float)i;
	ck_assert_int_eq(aclmem::RunBlocks(1, strided_kernel, x.data(), z.data()), 0);
	for (uint32_t i = 0; i < COPY_N; i++) {
		int blk = i / 8 < 8 ? from[i / 8] : -1;
		float want = blk < 0 ? -1.0f : x[blk * 8 + i % 8];

		ck_assert_msg(z[i] == want, "z[%u] = %g, want %g", i, z[i], want);
	}
}
END_TEST

/*
 * DataCopyPad both ways.  In: 3 runs of 5 floats, 3 floats apart in x, each
 * after 1 element of padding and followed by 2 and the rest of its 32-byte
 * block, runs 2 blocks apart in the buffer (one block of dstStride).  Out:
 * the 5 floats of each run to z, 4 bytes apart.  how: 0 with isPad (value
 * 7), 1 without (the buffer's -5 stays), 2 DataCopyParams with the value's
 * bits in DataCopyPadParams.
 */
static void pad_kernel(GM_ADDR x, GM_ADDR z, GM_ADDR ub, int32_t how)
{
	TPipe pipe;
	TBuf<QuePosition::VECCALC> buf;
	GlobalTensor<float> xg, zg, ubg;
	LocalTensor<float> a;
	uint32_t seven;
	float f = 7.0f;

	xg.SetGlobalBuffer((__gm__ float *)x, COPY_N);
	zg.SetGlobalBuffer((__gm__ float *)z, COPY_N);
	ubg.SetGlobalBuffer((__gm__ float *)ub, 64);
	pipe.InitBuffer(buf, 64 * sizeof(float));
	a = buf.Get<float>();
	Duplicate(a, -5.0f, 64);
	std::memcpy(&seven, &f, sizeof(seven));
	if (how == 2)
		DataCopyPad(a, xg, DataCopyParams(3, 20, 12, 1),
			    DataCopyPadParams(true, 1, 2, seven));
	else
		DataCopyPad(a, xg, DataCopyExtParams(3, 20, 12, 1, 0),
			    DataCopyPadExtParams<float>(how == 0, 1, 2, 7.0f));
	DataCopy(ubg, a, 64);
	DataCopyPad(zg, a[1], DataCopyExtParams(3, 20, 1, 4, 0));
}

START_TEST(data_copy_pad)
{
	std::vector<float> x(COPY_N), z(COPY_N, -1.0f), ub(64);

	for (uint32_t i = 0; i < COPY_N; i++)
		x[i] = (float)i;
	ck_assert_int_eq(aclmem::RunBlocks(1, pad_kernel, x.data(), z.data(),
					   ub.data(), (int32_t)_i), 0);
	/* The buffer: rows of 8 floats, 16 apart; the gaps untouched. */
	for (uint32_t e = 0; e < 64; e++) {
		uint32_t row = e / 16, col = e % 16;
		float pad = _i == 1 ? -5.0f : 7.0f, want;

		if (row >= 3 || col >= 8)
			want = -5.0f;
		else if (col >= 1 && col <= 5)
			want = x[row * 8 + col - 1];
		else
			want = pad;
		ck_assert_msg(ub[e] == want, "%d: ub[%u] = %g, want %g", _i, e,
			      ub[e], want);
	}
	/* z: the 5 floats of each run, then one untouched, three times. */
	for (uint32_t i = 0; i < COPY_N; i++) {
		float want = i < 18 && i % 6 < 5 ? x[i / 6 * 8 + i % 6] : -1.0f;

		ck_assert_msg(z[i] == want, "%d: z[%u] = %g, want %g", _i, i,
			      z[i], want);
	}
}
END_TEST

/* half, with DataCopyPadParams: the padding value is the element's bits. */
static void pad_half_kernel(GM_ADDR x, GM_ADDR ub)
{
	TPipe pipe;
	TBuf<QuePosition::VECCALC> buf;
	GlobalTensor<half> xg, ubg;
	LocalTensor<half> a;

	xg.SetGlobalBuffer((__gm__ half *)x, 16);
	ubg.SetGlobalBuffer((__gm__ half *)ub, 16);
	pipe.InitBuffer(buf, 16 * sizeof(half));
	a = buf.Get<half>();
	DataCopyPad(a, xg, DataCopyParams(1, 7 * sizeof(half), 0, 0),
		    DataCopyPadParams(true, 0, 0, half(2.5f).Bits()));
	DataCopy(ubg, a, 16);
}

START_TEST(data_copy_pad_half)
{
	std::vector<half> x(16), ub(16);

	for (uint32_t i = 0; i < 16; i++)
		x[i] = half((float)i - 3.0f);
	ck_assert_int_eq(aclmem::RunBlocks(1, pad_half_kernel, x.data(), ub.data()), 0);
	for (uint32_t i = 0; i < 16; i++)
		ck_assert_msg((float)ub[i] == (i < 7 ? (float)i - 3.0f : 2.5f),
			      "ub[%u] = %g", i, (double)(float)ub[i]);
}
END_TEST

static void dump_kernel(GM_ADDR x)
{
	TPipe pipe;
	TBuf<QuePosition::VECCALC> buf;
	GlobalTensor<float> xg;
	GlobalTensor<int32_t> ig;
	LocalTensor<half> h;

	xg.SetGlobalBuffer((__gm__ float *)x, 8);
	ig.SetGlobalBuffer((__gm__ int32_t *)x, 8);
	pipe.InitBuffer(buf, 32);
	h = buf.Get<half>();
	Duplicate(h, half(1.5f), 16);
	DumpTensor(xg, 7, 3);
	DumpTensor(h, 8, 2);
	DumpTensor(ig[3], 9, 1);
}

START_TEST(dump_tensor)
{
	float x[8] = { 0.5f, -2.0f, 1e10f, 0, 0, 0, 0, 0 };
	char path[] = "/tmp/acl_ascendc_dump.XXXXXX", out[512] = "";
	int fd = mkstemp(path), saved;
	FILE *f;
	size_t n;

	ck_assert_int_ge(fd, 0);
	((int32_t *)x)[3] = -42;
	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	ck_assert_int_eq(aclmem::RunBlocks(1, dump_kernel, (uint8_t *)x), 0);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	close(fd);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	fclose(f);
	unlink(path);
	ck_assert_str_eq(out,
		"DumpTensor: desc=7, block 0 of 1, GM, 3 elements: 0.5 -2 1e+10\n"
		"DumpTensor: desc=8, block 0 of 1, UB, 2 elements: 1.5 1.5\n"
		"DumpTensor: desc=9, block 0 of 1, GM, 1 elements: -42\n");
}
END_TEST

/* ---- CANN's CPU debug mode (tikicpulib.h) ---- */

START_TEST(icpu_run_kf)
{
	const size_t bytes = N * sizeof(float);
	uint8_t *gm[3];
	auto lambda = [](GM_ADDR x, GM_ADDR y, GM_ADDR z, int32_t op) {
		op_kernel<float>(x, y, z, op);
	};

	/* Zeroed, and aligned at least as the device's 32-byte blocks. */
	for (auto &p : gm) {
		p = (uint8_t *)AscendC::GmAlloc(bytes);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq((uintptr_t)p % 32, 0);
		for (size_t i = 0; i < bytes; i++)
			ck_assert_uint_eq(p[i], 0);
	}
	for (uint32_t i = 0; i < N; i++) {
		((float *)gm[0])[i] = in_x(i);
		((float *)gm[1])[i] = in_y(i);
	}
	AscendC::SetKernelMode(KernelMode::AIV_MODE);
	/* A template's specialisation and a lambda are kernels too. */
	for (int how = 0; how < 2; how++) {
		std::fill((float *)gm[2], (float *)gm[2] + N, -1.0f);
		if (how == 0)
			ICPU_RUN_KF(op_kernel<float>, BLOCKS, gm[0], gm[1], gm[2],
				    (int32_t)MUL);
		else
			ICPU_RUN_KF(lambda, BLOCKS, gm[0], gm[1], gm[2], (int32_t)MUL);
		for (uint32_t i = 0; i < N; i++)
			ck_assert_msg(((float *)gm[2])[i] == in_x(i) * in_y(i),
				      "%d: z[%u] = %g", how, i, ((float *)gm[2])[i]);
	}
	for (auto &p : gm)
		AscendC::GmFree(p);
}
END_TEST

static void icpu_trap_kernel(GM_ADDR out)
{
	out[GetBlockIdx()] = 1;
	if (GetBlockIdx() == 1)
		trap();
}

/*
 * ICPU_RUN_KF cannot return an error, and GmFree none either: a kernel
 * that traps, a bad blockDim and a pointer GmAlloc did not give end the
 * program with status 1 and a message, after every block ended.
 */
enum { ICPU_TRAP, ICPU_NO_BLOCKS, ICPU_FOREIGN_FREE, ICPU_DOUBLE_FREE, NICPU };
static const char *const icpu_says[NICPU] = {
	"the kernel trapped: icpu_trap_kernel", "blockDim must be 1 to 65535",
	"GmFree: not a pointer from GmAlloc", "GmFree: not a pointer from GmAlloc",
};

START_TEST(icpu_failures_end_the_program)
{
	int fds[2], status;
	char buf[4096];
	std::string err;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		uint8_t *gm = (uint8_t *)AscendC::GmAlloc(64);
		int local;

		dup2(fds[1], 2);
		switch (_i) {
		case ICPU_TRAP:
			ICPU_RUN_KF(icpu_trap_kernel, 4, gm);
			break;
		case ICPU_NO_BLOCKS:
			ICPU_RUN_KF(icpu_trap_kernel, 0, gm);
			break;
		case ICPU_FOREIGN_FREE:
			AscendC::GmFree(&local);
			break;
		default:
			AscendC::GmFree(gm);
			AscendC::GmFree(gm);
		}
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], buf, sizeof(buf))) > 0)
		err.append(buf, (size_t)n);
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1,
		      "case %d: status %#x, stderr:\n%s", _i, status, err.c_str());
	ck_assert_msg(err.find(icpu_says[_i]) != std::string::npos,
		      "case %d: stderr does not say \"%s\":\n%s", _i, icpu_says[_i],
		      err.c_str());
}
END_TEST

/* ---- outside the subset: compile errors that say what ---- */

static const struct {
	const char *code, *says;
} outside[] = {
	{ "void k(LocalTensor<float> a) { Relu(a, a, 8); }", "Relu" },
	{ "void k(LocalTensor<float> a) { AscendC::Ln(a, a, 8); }", "Ln" },
	{ "void k(LocalTensor<int8_t> a) { Add(a, a, a, 8); }", "AscendC::Add: type outside" },
	{ "void k(LocalTensor<int32_t> a) { Div(a, a, a, 8); }", "AscendC::Div: type outside" },
	{ "void k(LocalTensor<int32_t> a) { Exp(a, a, 8); }", "AscendC::Exp: type outside" },
	{ "void k(LocalTensor<int8_t> d, LocalTensor<float> s) { Cast(d, s, RoundMode::CAST_RINT, 8); }",
	  "AscendC::Cast: pair of types" },
	{ "TQue<QuePosition::A1, 1> q;", "AscendC::TQue: libaclmem's subset" },
	{ "void k(LocalTensor<float> a, GlobalTensor<float> g) { DataCopyEnhancedParams p; "
	  "DataCopy(a, g, DataCopyParams(), p); }", "DataCopyEnhancedParams" },
	{ "void k(LocalTensor<float> a) { uint64_t m = 0; Add(a, a, a, m, 1, {}); }", "Add" },
	{ "void k(LocalTensor<bfloat16_t> a) { }", "bfloat16_t" },
};

START_TEST(outside_subset_fails_to_compile)
{
	char dir[] = "/tmp/acl_ascendc.XXXXXX", cmd[1024], line[512];
	std::string out;
	FILE *f, *p;
	int status;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "%s/k.cpp", dir);
	f = fopen(cmd, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#include \"kernel_operator.h\"\nusing namespace AscendC;\n%s\n",
		outside[_i].code);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "%s -std=c++17 -fsyntax-only -I%s/lib/ascendc/include -I%s/include %s/k.cpp 2>&1",
		 NMTEST_CXX, ACLTEST_TOP, ACLTEST_TOP, dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p))
		out += line;
	status = pclose(p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_msg(status != 0, "compiled: %s", outside[_i].code);
	ck_assert_msg(out.find(outside[_i].says) != std::string::npos,
		      "%s: the errors do not say \"%s\":\n%s", outside[_i].code,
		      outside[_i].says, out.c_str());
}
END_TEST

/* The headers compile as a whole with every warning as an error. */
START_TEST(inside_subset_compiles_cleanly)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "printf '#include \"kernel_operator.h\"\\n#include \"tikicpulib.h\"\\n' | "
		 "%s -std=c++17 -Wall -Wextra "
		 "-Wpedantic -Werror -fsyntax-only -I%s/lib/ascendc/include -I%s/include "
		 "-x c++ -",
		 NMTEST_CXX, ACLTEST_TOP, ACLTEST_TOP);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_ascendc");

	nm_add(s, vector_ops_float, 60);
	nm_add(s, vector_ops_half, 60);
	nm_add(s, vector_ops_int32, 60);
	nm_add(s, cast_float_half, 300);
	nm_add(s, cast_float_int32, 60);
	nm_add(s, cast_half_int32, 300);
	nm_add(s, overflow_to_half, 30);
	nm_add(s, cast_odd_to_int_traps, 30);
	nm_add(s, sync_all, 30);
	nm_add(s, sync_all_never_hangs, 30);
	nm_add(s, kernel_printf, 30);
	nm_add(s, inside_subset_compiles_cleanly, 120);
	nm_add(s, data_copy_strided, 30);
	nm_add_loop(s, data_copy_pad, 3, 30, NULL);
	nm_add(s, data_copy_pad_half, 30);
	nm_add(s, dump_tensor, 30);
	nm_add(s, icpu_run_kf, 60);
	nm_add_loop(s, icpu_failures_end_the_program, NICPU, 60, NULL);
	nm_add_loop(s, misuse_traps, NMISUSE, 30, NULL);
	nm_add_loop(s, outside_subset_fails_to_compile,
		    (int)(sizeof(outside) / sizeof(outside[0])), 120, NULL);
	return acltest_run(s);
}
