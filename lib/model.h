/* SPDX-License-Identifier: MIT */
/*
 * What lib/label.c needs of model run instances (lib/model.c): a label's
 * place in a model's work, and the jump to it while the model runs.
 */
#ifndef ACLMEM_MODEL_H
#define ACLMEM_MODEL_H

struct aclmem_task;

/*
 * A task that marks label's place (label is only compared, never read):
 * kept by a model it is a place to jump to; queued on a stream outside a
 * model it does nothing.  NULL when out of memory (recorded as fn's).
 */
struct aclmem_task *aclmem_model_mark_new(const char *fn, const void *label);

/*
 * From a task that a model is running (on the worker that runs it): go on
 * after label's mark instead of after this task.  ACL_ERROR_RT_FEATURE_NOT_SUPPORT
 * when no model runs the caller; ACL_ERROR_RT_PARAM_INVALID when the
 * model has no mark of that label.
 */
int aclmem_model_goto(const void *label);

#endif /* ACLMEM_MODEL_H */
