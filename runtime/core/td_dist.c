/* Process groups and collectives on host memory, over MPI when the build has it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_internal.h"

#if TD_HAVE_MPI
#include <limits.h>
#include <mpi.h>

struct td_group {
    atomic_long rc;
    MPI_Comm comm;
    int rank, size;
};

/* 0: not initialized, 1: initialized, 2: finalized. MPI allows one init per process. */
static int dist_state;

bool td_dist_available(void)
{
    return true;
}

static td_status mpi_error(const char *op, const char *what, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", rc);
    return td_error(TD_E_DISTRIBUTED, "%s: %s failed: %s", op, what, text);
}

td_status td_dist_init(int *argc, char ***argv)
{
    if (dist_state == 1)
        return td_error(TD_E_DISTRIBUTED, "dist_init: already initialized");
    if (dist_state == 2)
        return td_error(TD_E_DISTRIBUTED, "dist_init: MPI cannot be initialized again after td_dist_finalize");
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        int provided;
        int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS)
            return td_error(TD_E_DISTRIBUTED, "dist_init: MPI_Init_thread failed (%d)", rc);
    }
    /* Errors come back as codes on every communicator we make, never as an abort. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    dist_state = 1;
    return TD_OK;
}

td_status td_dist_finalize(void)
{
    if (dist_state != 1)
        return td_error(TD_E_DISTRIBUTED, "dist_finalize: not initialized");
    int rc = MPI_Finalize();
    dist_state = 2;
    if (rc != MPI_SUCCESS)
        return mpi_error("dist_finalize", "MPI_Finalize", rc);
    return TD_OK;
}

td_status td_group_world(td_group **out)
{
    if (out == NULL)
        return td_err_null("group_world", "out");
    *out = NULL;
    if (dist_state != 1)
        return td_error(TD_E_DISTRIBUTED, "group_world: %s",
                        dist_state == 0 ? "call td_dist_init first" : "called after td_dist_finalize");
    td_group *g = td_calloc(1, sizeof *g);
    if (g == NULL)
        return td_error(TD_E_NOMEM, "group_world: out of memory");
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &g->comm);
    if (rc != MPI_SUCCESS) {
        td_free(g);
        return mpi_error("group_world", "MPI_Comm_dup", rc);
    }
    MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(g->comm, &g->rank);
    MPI_Comm_size(g->comm, &g->size);
    atomic_init(&g->rc, 1);
    *out = g;
    return TD_OK;
}

void td_group_release(td_group *g)
{
    if (g == NULL || atomic_fetch_sub(&g->rc, 1) != 1)
        return;
    if (dist_state == 1)
        MPI_Comm_free(&g->comm);
    td_free(g);
}

static MPI_Datatype mpi_type(td_dtype dtype)
{
    return dtype == TD_F32 ? MPI_FLOAT : MPI_INT32_T;
}

td_status td_dist_check(const char *op, const td_group *g)
{
    if (g == NULL)
        return td_err_null(op, "group");
    if (dist_state != 1)
        return td_error(TD_E_DISTRIBUTED, "%s: %s", op,
                        dist_state == 0 ? "distributed is not initialized (td_dist_init)"
                                        : "called after td_dist_finalize");
    return TD_OK;
}

td_status td_dist_agree(const char *op, const td_group *g, int64_t tag, const td_tensor *t)
{
    TD_TRY(td_dist_check(op, g));
    enum { K = 3 + TD_MAX_DIMS };
    int64_t v[2 * K] = { 0 };
    v[0] = tag;
    v[1] = t->dtype;
    v[2] = t->shape.ndim;
    for (int i = 0; i < t->shape.ndim; i++)
        v[3 + i] = t->shape.dims[i];
    for (int i = 0; i < K; i++)
        v[K + i] = -v[i];
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, 2 * K, MPI_INT64_T, MPI_MAX, g->comm);
    if (rc != MPI_SUCCESS)
        return mpi_error(op, "MPI_Allreduce (agreement)", rc);
    for (int i = 0; i < K; i++) {
        if (v[i] != -v[K + i]) {
            char s[128];
            td_shape_format(&t->shape, s, sizeof s);
            return td_error(TD_E_DISTRIBUTED,
                            "%s: the ranks disagree on the collective, its arguments, dtype or shape "
                            "(rank %d passed %s %s)",
                            op, g->rank, td_dtype_name(t->dtype), s);
        }
    }
    return TD_OK;
}

/* MPI counts are ints: large buffers go in chunks. */
#define CHUNK ((int64_t)INT_MAX / 2)

td_status td_dist_all_reduce(const char *op, const td_group *g, const void *send, void *recv, int64_t count,
                             td_dtype dtype, td_reduce_op rop)
{
    MPI_Op mop = rop == TD_REDUCE_MAX ? MPI_MAX : (rop == TD_REDUCE_MIN ? MPI_MIN : MPI_SUM);
    size_t es = td_dtype_size(dtype);
    for (int64_t off = 0; off < count; off += CHUNK) {
        int n = (int)(count - off < CHUNK ? count - off : CHUNK);
        const void *s = send == recv ? MPI_IN_PLACE : (const char *)send + (size_t)off * es;
        int rc = MPI_Allreduce(s, (char *)recv + (size_t)off * es, n, mpi_type(dtype), mop, g->comm);
        if (rc != MPI_SUCCESS)
            return mpi_error(op, "MPI_Allreduce", rc);
    }
    if (rop == TD_REDUCE_MEAN && dtype == TD_F32) {
        float inv = 1.0f / (float)g->size;
        for (int64_t i = 0; i < count; i++)
            ((float *)recv)[i] *= inv;
    }
    return TD_OK;
}

td_status td_dist_broadcast(const char *op, const td_group *g, void *buf, int64_t count, td_dtype dtype, int root)
{
    size_t es = td_dtype_size(dtype);
    for (int64_t off = 0; off < count; off += CHUNK) {
        int n = (int)(count - off < CHUNK ? count - off : CHUNK);
        int rc = MPI_Bcast((char *)buf + (size_t)off * es, n, mpi_type(dtype), root, g->comm);
        if (rc != MPI_SUCCESS)
            return mpi_error(op, "MPI_Bcast", rc);
    }
    return TD_OK;
}

td_status td_dist_all_gather(const char *op, const td_group *g, const void *send, void *recv, int64_t count,
                             td_dtype dtype)
{
    if (count > INT_MAX)
        return td_error(TD_E_DISTRIBUTED, "%s: %lld elements per rank is more than one all_gather moves", op,
                        (long long)count);
    int rc = MPI_Allgather(send, (int)count, mpi_type(dtype), recv, (int)count, mpi_type(dtype), g->comm);
    if (rc != MPI_SUCCESS)
        return mpi_error(op, "MPI_Allgather", rc);
    return TD_OK;
}

#else /* no MPI: every entry point says so */

struct td_group {
    atomic_long rc;
    int rank, size;
};

bool td_dist_available(void)
{
    return false;
}

static td_status no_mpi(const char *op)
{
    return td_error(TD_E_UNSUPPORTED, "%s: this build of tdispatch has no MPI (distributed ops are unsupported)", op);
}

td_status td_dist_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return no_mpi("dist_init");
}

td_status td_dist_finalize(void)
{
    return no_mpi("dist_finalize");
}

td_status td_group_world(td_group **out)
{
    if (out != NULL)
        *out = NULL;
    return no_mpi("group_world");
}

void td_group_release(td_group *g)
{
    (void)g;
}

td_status td_dist_check(const char *op, const td_group *g)
{
    if (g == NULL)
        return td_err_null(op, "group");
    return no_mpi(op);
}

td_status td_dist_agree(const char *op, const td_group *g, int64_t tag, const td_tensor *t)
{
    (void)g;
    (void)tag;
    (void)t;
    return no_mpi(op);
}

td_status td_dist_all_reduce(const char *op, const td_group *g, const void *send, void *recv, int64_t count,
                             td_dtype dtype, td_reduce_op rop)
{
    (void)g;
    (void)send;
    (void)recv;
    (void)count;
    (void)dtype;
    (void)rop;
    return no_mpi(op);
}

td_status td_dist_broadcast(const char *op, const td_group *g, void *buf, int64_t count, td_dtype dtype, int root)
{
    (void)g;
    (void)buf;
    (void)count;
    (void)dtype;
    (void)root;
    return no_mpi(op);
}

td_status td_dist_all_gather(const char *op, const td_group *g, const void *send, void *recv, int64_t count,
                             td_dtype dtype)
{
    (void)g;
    (void)send;
    (void)recv;
    (void)count;
    (void)dtype;
    return no_mpi(op);
}
#endif

/* ---- shared by both builds ---- */

int td_group_size_of(const td_group *g)
{
    return g->size;
}

int td_group_rank_of(const td_group *g)
{
    return g->rank;
}

td_status td_group_rank(const td_group *g, int *rank)
{
    if (g == NULL)
        return td_err_null("group_rank", "g");
    if (rank == NULL)
        return td_err_null("group_rank", "rank");
    *rank = g->rank;
    return TD_OK;
}

td_status td_group_size(const td_group *g, int *size)
{
    if (g == NULL)
        return td_err_null("group_size", "g");
    if (size == NULL)
        return td_err_null("group_size", "size");
    *size = g->size;
    return TD_OK;
}

td_status td_group_retain(td_group *g)
{
    if (g == NULL)
        return td_err_null("group_retain", "g");
    atomic_fetch_add(&g->rc, 1);
    return TD_OK;
}

/* The shape rule of all_gather sits beside the collectives, which own the group checks. */
td_status td_rule_all_gather(const char *op, const td_shape *a, const td_group *group, td_shape *out)
{
    TD_TRY(td_dist_check(op, group));
    if (a->ndim == 0)
        return td_error(TD_E_SHAPE, "%s: all_gather concatenates along dim 0; a 0-dim tensor has none", op);
    int64_t dims[TD_MAX_DIMS];
    memcpy(dims, a->dims, sizeof(int64_t) * (size_t)a->ndim);
    const int size = td_group_size_of(group);
    if (!td_mul_ok(a->dims[0], size, &dims[0]) || dims[0] > TD_MAX_NUMEL)
        return td_error(TD_E_SHAPE, "%s: the result would have more than 2^40 elements", op);
    return td_shape_from(op, dims, a->ndim, out);
}
