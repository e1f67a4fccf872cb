/* The API fuzzer's generated op table (fuzz_ops.c) against the generated td_kinds.h: every
 * td_op that has a name has exactly one entry, with that id and name, and besides them the
 * table holds only the specs' tuples (ids from FZ_TUPLE_ID0). Exit 0 when it does. */
#include <stdio.h>
#include <string.h>

#include "fuzz_ops.h"

int main(void)
{
    int bad = 0, ops = 0, tuples = 0;
    for (int id = 0; id < TD_OP_COUNT; id++) {
        const char *name = td_op_name((td_op)id);
        if (strcmp(name, "unknown") == 0)
            continue;
        ops++;
        int found = 0;
        for (int i = 0; i < fz_nops; i++)
            if (fz_ops[i].id == id) {
                found++;
                if (strcmp(fz_ops[i].name, name) != 0) {
                    printf("entry %d: id %d is %s, named %s in the table\n", i, id, name, fz_ops[i].name);
                    bad++;
                }
            }
        if (found != 1) {
            printf("op %s (id %d): %d entries in the fuzzer's table\n", name, id, found);
            bad++;
        }
    }
    for (int i = 0; i < fz_nops; i++) {
        if (fz_ops[i].id >= FZ_TUPLE_ID0) {
            tuples++;
            if (strcmp(fz_ops[i].family, "tuple") != 0 || fz_ops[i].nouts < 2) {
                printf("entry %s: a tuple id but not a tuple\n", fz_ops[i].name);
                bad++;
            }
        } else if (fz_ops[i].id < 0 || fz_ops[i].id >= TD_OP_COUNT) {
            printf("entry %s: id %d is no td_op\n", fz_ops[i].name, fz_ops[i].id);
            bad++;
        }
        if (fz_ops[i].call == NULL || (fz_ops[i].nargs > 0 && fz_ops[i].kinds == NULL) ||
            (int)strlen(fz_ops[i].rets) != fz_ops[i].nouts) {
            printf("entry %s: incomplete\n", fz_ops[i].name);
            bad++;
        }
    }
    if (ops != fz_spec_ops || tuples != fz_spec_tuples || fz_nops != ops + tuples) {
        printf("td_kinds.h names %d ops; the table holds %d entries, %d of them tuples; the specs declare %d ops "
               "and %d tuples\n", ops, fz_nops, tuples, fz_spec_ops, fz_spec_tuples);
        bad++;
    }
    printf("fuzz_table_check: %d ops and %d tuples in the table, %d problems\n", ops, tuples, bad);
    return bad ? 1 : 0;
}
