/* The autodiff engine's internal interface (tape nodes). */
#ifndef TD_AUTODIFF_H
#define TD_AUTODIFF_H

#include "../core/td_internal.h"

/* Drops one reference to a tape node; NULL is ignored. */
void td_ad_node_release(struct td_ad_node *node);

#endif
