/* libvarprof: how the residual stream of a transformer grows, sub-block by
 * sub-block, for each placement of its norms. One header per module; this
 * one includes them all. */
#ifndef VARPROF_VARPROF_H
#define VARPROF_VARPROF_H

#include "varprof/architecture.h"
#include "varprof/cleanup.h"
#include "varprof/closed.h"
#include "varprof/compare.h"
#include "varprof/config.h"
#include "varprof/csv.h"
#include "varprof/figures.h"
#include "varprof/format.h"
#include "varprof/forward.h"
#include "varprof/forward_setup.h"
#include "varprof/gains_file.h"
#include "varprof/gauss.h"
#include "varprof/grads_csv.h"
#include "varprof/hf_checkpoint.h"
#include "varprof/isa.h"
#include "varprof/json.h"
#include "varprof/latex.h"
#include "varprof/markdown.h"
#include "varprof/mc.h"
#include "varprof/page_table.h"
#include "varprof/models.h"
#include "varprof/parse.h"
#include "varprof/placement.h"
#include "varprof/plot.h"
#include "varprof/profile.h"
#include "varprof/progress.h"
#include "varprof/safetensors.h"
#include "varprof/status.h"
#include "varprof/shard.h"
#include "varprof/sweep.h"
#include "varprof/text.h"
#include "varprof/token_ids.h"
#include "varprof/train.h"
#include "varprof/train_output.h"
#include "varprof/version.h"

#endif
