/* What the engines share in making a profile: the header each writes before
 * its rows. The public half is include/varprof/profile.h. */
#ifndef VARPROF_PROFILE_HEADER_H
#define VARPROF_PROFILE_HEADER_H

#include "varprof/profile.h"

/* Fills what every engine says before its rows: which engine ran with which
 * norm, a copy of cfg (its gains pointer cleared, as each row keeps its gain,
 * and gains_from_file set when it had one), the VP_HAS_* fields the rows
 * carry, and how they were sampled (NULL: not sampled, all zero). sub_blocks
 * and n_rows stay as vp_profile_alloc set them for cfg's sub-blocks. */
void profile_set_header(vp_profile *profile, vp_engine engine, vp_norm norm, const vp_config *cfg,
                        unsigned fields, const vp_sampling *sampling);

#endif
