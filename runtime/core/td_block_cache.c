/* Thread-local caches of equal-sized blocks: tensor handles (td_tensor.c) and autodiff tape
 * nodes (runtime/autodiff). A freed block goes onto the cache of the thread that frees it
 * and td_cache_take hands it out again before it calls malloc, so a recorded op costs no
 * malloc/free pair for its handle or its node once the caches are warm. The caches are
 * thread-local: no lock, nothing shared; a block freed on another thread than the one that
 * took it just moves to that thread's cache. Each cache holds at most its cap; a thread's
 * caches are freed when the thread exits (a pthread key destructor), the main thread's at
 * process exit. Failure injection (td_testing_fail_allocations_after) counts a reused block
 * as an allocation. Under AddressSanitizer a cached block is poisoned, so a use after
 * release is still reported. */
#include <pthread.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "td_internal.h"

#ifdef TD_ASAN /* td_internal.h */
#define CACHE_ASAN 1
#endif
#ifdef CACHE_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* The types and the inline fast paths of td_cache_take / td_cache_give: td_internal.h. */
typedef td_cache_block cache_block;
typedef td_block_cache block_cache;
typedef td_thread_caches thread_caches;

_Thread_local thread_caches td_thread_cache;
static pthread_key_t caches_key;
static pthread_once_t caches_once = PTHREAD_ONCE_INIT;
static bool caches_key_ok;

static void drain(thread_caches *t)
{
    for (int k = 0; k < TD_CACHE_COUNT; k++) {
        block_cache *c = &t->c[k];
        while (c->head != NULL) {
            cache_block *b = c->head;
#ifdef CACHE_ASAN
            ASAN_UNPOISON_MEMORY_REGION(b, c->bytes);
#endif
            c->head = b->next;
            free(b); /* not td_free, which would keep a small block in this cache again */
        }
        c->count = 0;
    }
    t->closed = true;
}

static void thread_exit(void *arg)
{
    drain(arg);
}

static void make_key(void)
{
    caches_key_ok = pthread_key_create(&caches_key, thread_exit) == 0;
}

__attribute__((destructor)) static void process_exit(void)
{
    drain(&td_thread_cache);
}

void *td_cache_take_slow(td_cache_kind kind, size_t bytes)
{
    block_cache *c = &td_thread_cache.c[kind];
    if (c->head == NULL || c->bytes != bytes)
        return td_malloc(bytes);
    if (td_alloc_should_fail())
        return NULL;
    cache_block *b = c->head;
#ifdef CACHE_ASAN
    ASAN_UNPOISON_MEMORY_REGION((char *)b + sizeof *b, bytes - sizeof *b);
#endif
    c->head = b->next;
    c->count--;
    return b;
}

/* Keeps p (of bytes) at the head of c: poisoned under ASan until taken again. */
static inline void push(block_cache *c, void *p, size_t bytes)
{
    cache_block *b = p;
    b->next = c->head;
#ifdef CACHE_ASAN
    ASAN_POISON_MEMORY_REGION((char *)b + sizeof *b, bytes - sizeof *b);
#endif
    c->head = b;
    c->bytes = bytes;
    c->count++;
}

/* td_cache_give's first block on a thread (registering it), and every block it frees. */
__attribute__((noinline)) static void give_slow(thread_caches *t, block_cache *c, void *p, size_t bytes, int cap)
{
    if (t->closed || c->count >= cap || (c->head != NULL && c->bytes != bytes) || bytes < sizeof(cache_block)) {
        td_free(p);
        return;
    }
    if (!t->registered) {
        pthread_once(&caches_once, make_key);
        if (!caches_key_ok || pthread_setspecific(caches_key, t) != 0) {
            td_free(p);
            return;
        }
        t->registered = true;
    }
    push(c, p, bytes);
}

void td_cache_give_slow(td_cache_kind kind, void *p, size_t bytes, int cap)
{
    thread_caches *t = &td_thread_cache;
    block_cache *c = &t->c[kind];
    if (p == NULL)
        return;
    /* The usual case, a registered thread whose cache has room for another block of the
     * size it holds (c->bytes stays set when the cache runs empty), without the slow path's
     * calls and the registers they would need saved. */
    if (__builtin_expect(!t->registered || t->closed || c->count >= cap || c->bytes != bytes, 0)) {
        give_slow(t, c, p, bytes, cap);
        return;
    }
    push(c, p, bytes);
}

#if defined(__GLIBC__) && !defined(CACHE_ASAN)
/* glibc's own per-thread cache already serves these sizes, but its free path (checks,
 * then tcache_put) runs ~90 instructions, this one ~20: most of a 1-element op's
 * malloc/free pair. A block is kept only when its usable size is exactly TD_SMALL_BYTES,
 * so any block handed out holds any request td_malloc serves from here. */
void *td_small_take(void)
{
    block_cache *c = &td_thread_cache.c[TD_CACHE_SMALL];
    cache_block *b = c->head;
    if (b == NULL)
        return NULL;
    c->head = b->next;
    c->count--;
    return b;
}

bool td_small_give(void *p)
{
    thread_caches *t = &td_thread_cache;
    block_cache *c = &t->c[TD_CACHE_SMALL];
    /* An unregistered thread's blocks go back to free: the key's destructor would not
     * drain them (td_cache_give registers a thread with its first handle). */
    if (!t->registered || t->closed || c->count >= 256 || malloc_usable_size(p) != TD_SMALL_BYTES)
        return false;
    push(c, p, TD_SMALL_BYTES);
    return true;
}
#else
void *td_small_take(void)
{
    return NULL;
}

bool td_small_give(void *p)
{
    (void)p;
    return false;
}
#endif
