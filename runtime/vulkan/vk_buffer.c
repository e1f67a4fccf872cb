/* Vulkan backend: pooled storage buffers (power-of-two size classes) and the storage/host hooks. */
#include "vk_internal.h"

/* Every element is one 32-bit word on the device; bools are stored as uint32 0/1. */
#define VK_WORD 4u

static int size_class(VkDeviceSize bytes, VkDeviceSize *rounded)
{
    int c = 8; /* 256 bytes at least */
    while (((VkDeviceSize)1 << c) < bytes && c < VK_SIZE_CLASSES - 1)
        c++;
    *rounded = (VkDeviceSize)1 << c;
    return c;
}

td_status vk_buf_raw(vk_dev *d, const char *op, VkDeviceSize bytes, vk_buf **out)
{
    vk_buf *b = td_calloc(1, sizeof *b);
    if (b == NULL)
        return td_error(TD_E_NOMEM, "%s: vulkan: out of memory", op);
    b->size = bytes;
    b->batch = -1;
    const VkBufferCreateInfo bci = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                     .size = bytes,
                                     .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                              VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                     .sharingMode = VK_SHARING_MODE_EXCLUSIVE };
    VkResult r = vkCreateBuffer(d->dev, &bci, NULL, &b->buf);
    if (r != VK_SUCCESS) {
        td_free(b);
        return vk_fail(op, "vkCreateBuffer", r);
    }
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(d->dev, b->buf, &req);
    if (!(req.memoryTypeBits & (1u << d->mem_type))) {
        vkDestroyBuffer(d->dev, b->buf, NULL);
        td_free(b);
        return td_error(TD_E_DEVICE, "%s: vulkan: storage buffers cannot use the host-visible memory type", op);
    }
    const VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                       .allocationSize = req.size,
                                       .memoryTypeIndex = d->mem_type };
    r = vkAllocateMemory(d->dev, &mai, NULL, &b->mem);
    if (r == VK_SUCCESS) {
        r = vkBindBufferMemory(d->dev, b->buf, b->mem, 0);
        if (r == VK_SUCCESS)
            r = vkMapMemory(d->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map);
        if (r != VK_SUCCESS)
            vkFreeMemory(d->dev, b->mem, NULL);
    }
    if (r != VK_SUCCESS) {
        vkDestroyBuffer(d->dev, b->buf, NULL);
        td_free(b);
        return vk_fail(op, "vkAllocateMemory", r);
    }
    *out = b;
    return TD_OK;
}

void vk_buf_destroy(vk_dev *d, vk_buf *b)
{
    vkDestroyBuffer(d->dev, b->buf, NULL);
    vkFreeMemory(d->dev, b->mem, NULL); /* unmaps implicitly */
    td_free(b);
}

static void trim_pool(vk_dev *d)
{
    for (int c = 0; c < VK_SIZE_CLASSES; c++) {
        while (d->free_list[c] != NULL) {
            vk_buf *b = d->free_list[c];
            d->free_list[c] = b->next;
            vk_buf_destroy(d, b);
        }
    }
    d->pooled_bytes = 0;
}

static td_status buf_get(vk_dev *d, const char *op, VkDeviceSize bytes, vk_buf **out);
static void buf_put(vk_dev *d, vk_buf *b);

td_status vk_buf_get(vk_dev *d, const char *op, VkDeviceSize bytes, vk_buf **out)
{
    vk_lock(d);
    const td_status st = buf_get(d, op, bytes, out);
    vk_unlock(d);
    return st;
}

void vk_buf_put(vk_dev *d, vk_buf *b)
{
    vk_lock(d);
    buf_put(d, b);
    vk_unlock(d);
}

static td_status buf_get(vk_dev *d, const char *op, VkDeviceSize bytes, vk_buf **out)
{
    VkDeviceSize rounded;
    const int c = size_class(bytes, &rounded);
    if (d->free_list[c] != NULL) {
        vk_buf *b = d->free_list[c];
        d->free_list[c] = b->next;
        d->pooled_bytes -= b->size;
        b->next = NULL;
        *out = b;
        return TD_OK;
    }
    td_status st = vk_buf_raw(d, op, rounded, out);
    if (st == TD_E_NOMEM) {
        /* Memory pressure: finish the batch so deferred buffers come back, drop the pool, retry. */
        TD_TRY(vk_flush(d, op));
        trim_pool(d);
        st = vk_buf_raw(d, op, rounded, out);
    }
    return st;
}

static void buf_put(vk_dev *d, vk_buf *b)
{
    if (d->recording && b->batch == d->batch) {
        /* The open command buffer may still read or write it: reuse only after the submit. */
        b->next = d->deferred;
        d->deferred = b;
        d->deferred_bytes += b->size;
        if (d->deferred_bytes > VK_DEFERRED_MAX)
            (void)vk_flush(d, "free");
        return;
    }
    if (d->pooled_bytes + b->size > VK_POOL_MAX) {
        vk_buf_destroy(d, b);
        return;
    }
    VkDeviceSize rounded;
    const int c = size_class(b->size, &rounded);
    b->next = d->free_list[c];
    d->free_list[c] = b;
    d->pooled_bytes += b->size;
}

void vk_pool_after_submit(vk_dev *d)
{
    vk_buf *b = d->deferred;
    d->deferred = NULL;
    d->deferred_bytes = 0;
    while (b != NULL) {
        vk_buf *next = b->next;
        b->batch = -1;
        buf_put(d, b);
        b = next;
    }
}

void vk_pool_release(vk_dev *d)
{
    vk_buf *b = d->deferred;
    while (b != NULL) {
        vk_buf *next = b->next;
        vk_buf_destroy(d, b);
        b = next;
    }
    d->deferred = NULL;
    d->deferred_bytes = 0;
    trim_pool(d);
}

td_status vk_check_size(const char *op, int64_t n)
{
    if (n > (int64_t)(UINT32_MAX / 2u))
        return td_error(TD_E_INVALID, "%s: vulkan: %lld elements is more than the shaders index", op, (long long)n);
    return TD_OK;
}

VkDeviceSize vk_storage_bytes(const td_tensor *t)
{
    const VkDeviceSize n = (VkDeviceSize)td_be_numel(t);
    if (td_be_dtype(t) == TD_BOOL)
        return n * VK_WORD;
    return ((VkDeviceSize)td_dtype_bytes(td_be_dtype(t), td_be_numel(t)) + VK_WORD - 1u) / VK_WORD * VK_WORD;
}

td_status td_vulkan_alloc(td_tensor *t)
{
    if (td_be_numel(t) == 0) {
        /* An empty tensor has no buffer (Vulkan has no buffers of 0 bytes): reads and writes
         * copy nothing, and a shader it is bound to gets the dummy buffer and no work. */
        td_be_set_data(t, NULL);
        return TD_OK;
    }
    TD_TRY(vk_check_size("alloc", td_be_numel(t)));
    vk_dev *d = vk_of(td_be_device(t));
    const VkDeviceSize bytes = vk_storage_bytes(t);
    if (bytes > d->max_range)
        return td_error(TD_E_INVALID, "alloc: vulkan: a tensor of %llu bytes is larger than the device's largest "
                        "storage buffer (%llu bytes)", (unsigned long long)bytes, (unsigned long long)d->max_range);
    vk_buf *b = NULL;
    TD_TRY(vk_buf_get(d, "alloc", bytes, &b));
    td_be_set_data(t, b);
    return TD_OK;
}

void td_vulkan_free(td_tensor *t)
{
    if (td_be_data(t) != NULL)
        vk_buf_put(vk_of(td_be_device(t)), vk_buf_of(t));
    td_be_set_data(t, NULL);
}

td_status td_vulkan_read(const td_tensor *t, void *host)
{
    if (td_be_numel(t) == 0)
        return TD_OK;
    vk_dev *d = vk_of(td_be_device(t));
    const vk_buf *b = vk_buf_of(t);
    vk_lock(d); /* no other thread submits (or records) between the flush and the copy */
    if (d->recording) {
        const td_status st = vk_flush(d, "read");
        if (st != TD_OK) {
            vk_unlock(d);
            return st;
        }
    }
    const size_t n = (size_t)td_be_numel(t);
    if (td_be_dtype(t) == TD_BOOL) {
        const uint32_t *src = (const uint32_t *)b->map;
        bool *dst = (bool *)host;
        for (size_t i = 0; i < n; i++)
            dst[i] = src[i] != 0;
    } else {
        memcpy(host, b->map, td_dtype_bytes(td_be_dtype(t), td_be_numel(t)));
    }
    vk_unlock(d);
    return TD_OK;
}

td_status td_vulkan_write(td_tensor *t, const void *host)
{
    if (td_be_numel(t) == 0)
        return TD_OK;
    vk_dev *d = vk_of(td_be_device(t));
    vk_buf *b = vk_buf_of(t);
    /* Writing from the host while the open batch uses the buffer would race it. */
    vk_lock(d);
    if (d->recording && b->batch == d->batch) {
        const td_status st = vk_flush(d, "write");
        if (st != TD_OK) {
            vk_unlock(d);
            return st;
        }
    }
    const size_t n = (size_t)td_be_numel(t);
    if (td_be_dtype(t) == TD_BOOL) {
        const bool *src = (const bool *)host;
        uint32_t *dst = (uint32_t *)b->map;
        for (size_t i = 0; i < n; i++)
            dst[i] = src[i] ? 1u : 0u;
    } else {
        memcpy(b->map, host, td_dtype_bytes(td_be_dtype(t), td_be_numel(t)));
    }
    vk_unlock(d);
    return TD_OK;
}
