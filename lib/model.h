/* SPDX-License-Identifier: MIT */
/*
 * What other files need of model run instances (lib/model.c): a label's
 * place in a model's work and the jump to it while the model runs
 * (lib/label.c), and whether the capture modes allow a synchronous copy
 * now (lib/copy.c).
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

/*
 * Before a synchronous copy or fill (CANN's unsafe calls): ACL_SUCCESS, or
 * ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, recorded as fn's, when the capture
 * modes forbid it now.
 */
int aclmem_model_unsafe(const char *fn);

#endif /* ACLMEM_MODEL_H */
