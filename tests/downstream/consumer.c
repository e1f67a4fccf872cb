/* A program outside tdispatch that uses it as an installed or bundled library: the
 * downstream test builds it three ways (find_package, pkg-config, add_subdirectory). */
#include <stdio.h>
#include <string.h>

#include "td_ops.h"

int main(void)
{
    if (strcmp(td_version(), TD_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: headers of tdispatch %s, library %s\n", TD_VERSION_STRING, td_version());
        return 1;
    }
    static const float xs[] = { 1, 2, 3, 4, 5, 6 }, ys[] = { 10, 20, 30 };
    static const int64_t s23[] = { 2, 3 }, s3[] = { 3 };
    static const float want[] = { 11, 22, 33, 14, 25, 36 };
    float got[6] = { 0 };
    td_device *cpu = NULL;
    td_tensor *a = NULL, *b = NULL, *c = NULL;
    td_status st = td_device_open(TD_BACKEND_CPU, 0, &cpu);
    if (st == TD_OK)
        st = td_float_from_data(cpu, xs, s23, 2, &a);
    if (st == TD_OK)
        st = td_float_from_data(cpu, ys, s3, 1, &b);
    if (st == TD_OK)
        st = td_float_add(a, b, &c);
    if (st == TD_OK)
        st = td_float_into_data(c, got, 6);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_device_release(cpu);
    if (st != TD_OK) {
        fprintf(stderr, "consumer: %s: %s\n", td_status_name(st), td_last_error());
        return 1;
    }
    if (memcmp(got, want, sizeof want) != 0) {
        fprintf(stderr, "consumer: [[1,2,3],[4,5,6]] + [10,20,30] gave a wrong result\n");
        return 1;
    }
    printf("consumer: tdispatch %s: [[1,2,3],[4,5,6]] + [10,20,30] = [[11,22,33],[14,25,36]]\n", td_version());
    return 0;
}
