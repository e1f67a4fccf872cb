/* examples/readme_example.c: adds two tensors on the CPU (the tests build and run it). */
#include <stdio.h>
#include <string.h>

#include "td_ops.h"

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) { /* no options but --help, as the other programs */
        if (strcmp(argv[i], "--help") == 0) {
            printf("usage: readme_example [--help]\n  adds two tensors on the CPU and prints the sum\n");
            return 0;
        }
        if (argv[i][0] == '-')
            fprintf(stderr, "readme_example: unknown option '%s' (see --help)\n", argv[i]);
        else
            fprintf(stderr, "readme_example: unexpected argument '%s' (see --help)\n", argv[i]);
        return 2;
    }
    static const float xs[] = { 1, 2, 3, 4, 5, 6 }, ys[] = { 10, 20, 30 };
    static const int64_t s23[] = { 2, 3 }, s3[] = { 3 };
    td_device *cpu = NULL;
    td_tensor *a = NULL, *b = NULL, *c = NULL;
    float sum[6];

    td_status st = td_device_open(TD_BACKEND_CPU, 0, &cpu);
    if (st == TD_OK)
        st = td_float_from_data(cpu, xs, s23, 2, &a); /* [[1, 2, 3], [4, 5, 6]] */
    if (st == TD_OK)
        st = td_float_from_data(cpu, ys, s3, 1, &b);  /* [10, 20, 30] */
    if (st == TD_OK)
        st = td_float_add(a, b, &c);                  /* broadcasting, as in PyTorch */
    if (st == TD_OK)
        st = td_float_into_data(c, sum, 6);
    if (st == TD_OK)
        printf("%g %g %g\n%g %g %g\n", sum[0], sum[1], sum[2], sum[3], sum[4], sum[5]);
    else
        fprintf(stderr, "%s: %s\n", td_status_name(st), td_last_error()); /* op, backend, cause */

    td_tensor_release(a); /* every handle received is released; NULL is ignored */
    td_tensor_release(b);
    td_tensor_release(c);
    td_device_release(cpu);
    return st == TD_OK ? 0 : 1;
}
