// SPDX-License-Identifier: MIT
/*
 * Labels (aclrtCreateLabel and its family): places in a model run
 * instance's work (lib/model.c), and switches that jump to one of them by
 * an index read from device memory when the switch runs.
 *
 * CANN uses labels in the work of streams bound to a model being built;
 * here they work in any model, built or captured.  aclrtSetLabel queues a
 * mark: kept by a model, it is the label's place in the model's order; on
 * a stream outside a model it does nothing.  aclrtSwitchLabelByIndex
 * queues a switch that, each time the model runs it, reads the uint32_t at
 * ptr and goes on after the mark of the list's label at that index
 * (forwards or back: a model may loop).  An index not below maxValue, or a
 * label the running model has no mark of, fails the execution with
 * ACL_ERROR_RT_PARAM_INVALID; a switch run outside a model fails with
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT (returned by the stream's next
 * synchronisation).  A switch copies the list's labels when queued, so the
 * list may be destroyed at once; labels are only compared, never read, so
 * destroying one leaves the marks and switches that name it harmless.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_rt.h"
#include "context.h"
#include "log.h"
#include "model.h"
#include "stream.h"

struct label {
	struct label *next;
};

struct label_list {
	struct label_list *next;
	size_t num;
	struct label *labels[];
};

static pthread_mutex_t labels_lock = PTHREAD_MUTEX_INITIALIZER;
static struct label *labels;
static struct label_list *lists;

static bool label_live_locked(const void *handle)
{
	struct label *l;

	for (l = labels; l && l != handle; l = l->next)
		;
	return l;
}

aclError aclrtCreateLabel(aclrtLabel *label)
{
	struct label *l;
	int ret;

	if (!label)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCreateLabel: label is NULL");
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret("aclrtCreateLabel", ret);
	l = calloc(1, sizeof(*l));
	if (!l)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "aclrtCreateLabel: out of memory");
	pthread_mutex_lock(&labels_lock);
	l->next = labels;
	labels = l;
	pthread_mutex_unlock(&labels_lock);
	*label = l;
	return ACL_SUCCESS;
}

aclError aclrtDestroyLabel(aclrtLabel label)
{
	struct label **pl, *l = NULL;

	pthread_mutex_lock(&labels_lock);
	for (pl = &labels; *pl; pl = &(*pl)->next) {
		if (*pl == label) {
			l = *pl;
			*pl = l->next;
			break;
		}
	}
	pthread_mutex_unlock(&labels_lock);
	if (!l)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtDestroyLabel(%p): not a label", label);
	free(l);
	return ACL_SUCCESS;
}

aclError aclrtCreateLabelList(aclrtLabel *labelArray, size_t num,
			      aclrtLabelList *labelList)
{
	static const char fn[] = "aclrtCreateLabelList";
	struct label_list *list;
	size_t i;

	if (!labelArray || !num || !labelList)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !num ? "num is 0" : "NULL pointer");
	if (num > UINT32_MAX)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %zu labels",
				   fn, num);
	list = calloc(1, sizeof(*list) + num * sizeof(list->labels[0]));
	if (!list)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: out of memory", fn);
	list->num = num;
	pthread_mutex_lock(&labels_lock);
	for (i = 0; i < num; i++) {
		if (!label_live_locked(labelArray[i]))
			break;
		list->labels[i] = labelArray[i];
	}
	if (i == num) {
		list->next = lists;
		lists = list;
	}
	pthread_mutex_unlock(&labels_lock);
	if (i < num) {
		free(list);
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: entry %zu is not a label", fn, i);
	}
	*labelList = list;
	return ACL_SUCCESS;
}

aclError aclrtDestroyLabelList(aclrtLabelList labelList)
{
	struct label_list **pl, *l = NULL;

	pthread_mutex_lock(&labels_lock);
	for (pl = &lists; *pl; pl = &(*pl)->next) {
		if (*pl == labelList) {
			l = *pl;
			*pl = l->next;
			break;
		}
	}
	pthread_mutex_unlock(&labels_lock);
	if (!l)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtDestroyLabelList(%p): not a label list",
				   labelList);
	free(l);
	return ACL_SUCCESS;
}

aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream)
{
	static const char fn[] = "aclrtSetLabel";
	struct aclmem_task *t;
	bool live;

	pthread_mutex_lock(&labels_lock);
	live = label_live_locked(label);
	pthread_mutex_unlock(&labels_lock);
	if (!live)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s(%p): not a label",
				   fn, label);
	t = aclmem_model_mark_new(fn, label);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	return aclmem_task_queue(fn, stream, t);
}

struct switch_task {
	struct aclmem_task task;
	const _Atomic uint32_t *index;
	uint32_t max;
	const void *labels[];
};

static int switch_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct switch_task *t = (struct switch_task *)task;
	uint32_t i = atomic_load(t->index);

	(void)s;
	if (i >= t->max) {
		aclmem_err("aclrtSwitchLabelByIndex: index %u, maxValue %u",
			   i, t->max);
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	return aclmem_model_goto(t->labels[i]);
}

static const struct aclmem_task_ops switch_ops = {
	.run = switch_run,
	.release = aclmem_task_free,
	.replay = aclmem_task_dup,
	.name = "label switch",
};

aclError aclrtSwitchLabelByIndex(void *ptr, uint32_t maxValue,
				 aclrtLabelList labelList, aclrtStream stream)
{
	static const char fn[] = "aclrtSwitchLabelByIndex";
	struct label_list *l;
	struct switch_task *t;

	if (!ptr || !maxValue)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !ptr ? "ptr is NULL" : "maxValue is 0");
	pthread_mutex_lock(&labels_lock);
	for (l = lists; l && l != labelList; l = l->next)
		;
	if (!l || maxValue > l->num) {
		pthread_mutex_unlock(&labels_lock);
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: %s", fn, !l ? "not a label list" :
				   "maxValue is more than the list's labels");
	}
	t = aclmem_task_new(fn, sizeof(*t) + maxValue * sizeof(t->labels[0]),
			    &switch_ops);
	if (t)
		memcpy(t->labels, l->labels, maxValue * sizeof(t->labels[0]));
	pthread_mutex_unlock(&labels_lock);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	t->index = ptr;
	t->max = maxValue;
	return aclmem_task_queue(fn, stream, &t->task);
}
