/* The autodiff engine: tape nodes and their lifetime. */
#include "td_autodiff.h"

void td_ad_node_release(struct td_ad_node *node)
{
    (void)node; /* no node is recorded yet: tracking comes with the tape */
}
